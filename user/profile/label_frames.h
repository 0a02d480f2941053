/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * --by KEY for the formats that draw trees of frames alone (SVG, speedscope,
 * the Firefox Profiler, Chrome's trace): a copy of the profile whose samples
 * that carry label KEY begin, root first, with a frame "[KEY=VALUE]", so
 * that each endpoint (or trace, or --context-label value) is a tree of its
 * own in any of them, as folded draws it (folded.c) and pprof's -tagfocus
 * selects it.
 */
#ifndef PYEBPF_PROFILE_LABEL_FRAMES_H
#define PYEBPF_PROFILE_LABEL_FRAMES_H

#include "profile/profile.h"

/* The copy (its timeline, notes and meta too), freed by the caller. */
struct profile *profile__label_frames(const struct profile *in, const char *key);

#endif
