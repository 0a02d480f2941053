/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The Firefox Profiler's Gecko profile format (profiler.firefox.com opens
 * it, and upgrades it on import): one process per pid, a track per thread,
 * a sample row per sample on the thread's timeline, categories for Python,
 * native, kernel and waiting code, and the waits (--mode wall: off-CPU
 * reasons, GIL waits) as interval markers.
 */
#ifndef PYEBPF_WRITE_GECKO_H
#define PYEBPF_WRITE_GECKO_H

#include <stdio.h>

#include "profile/profile.h"

/* The Gecko format's version written: its frame table has no optimizations
 * column since 27; later versions changed nothing this writer uses. */
#define GECKO_VERSION 27

/* 0, or -1 with errno set. */
int gecko__write(const struct profile *p, FILE *out);

#endif
