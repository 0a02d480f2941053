/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Folded stacks, as read by FlameGraph's flamegraph.pl and speedscope:
 * "comm;root;...;leaf COUNT" per line, kernel frames suffixed "_[k]",
 * ';' and newlines inside names replaced, lines sorted and merged.
 */
#ifndef PYEBPF_WRITE_FOLDED_H
#define PYEBPF_WRITE_FOLDED_H

#include <stdio.h>

#include "profile/profile.h"
#include "write/process_frame.h"

struct folded_opts {
	int threads;                   /* a "NAME [tid N]" frame under the process frame */
	int containers;                /* a "[container ID]" frame under the process frame (none outside containers) */
	enum process_frames processes; /* the process frame: "comm" or "comm [pid N]" */
	bool diff;      /* "stack BEFORE AFTER" (FlameGraph's difffolded.pl): LABEL_BASE samples are BEFORE */
	const char *by; /* --by KEY: a "[KEY=VALUE]" frame under the process frame (profile__label_value) */
};

/* 0, or -1 with errno set when writing failed. */
int folded__write(const struct profile *p, const struct folded_opts *o, FILE *out);

#endif
