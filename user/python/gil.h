/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Where a process's GIL lives, so that a thread blocked in a futex there
 * reads as waiting for the GIL rather than for a lock (user/offcpu.c).
 */
#ifndef PYEBPF_PY_GIL_H
#define PYEBPF_PY_GIL_H

#include <sys/types.h>

#include "profile/offcpu.h"
#include "python/detect.h"

/* 0 and *out set, or -1: not known (2.7; 3.6 without a symbol table) or unreadable. */
int py_gil_range(pid_t pid, const struct py_interp *in, struct gil_range *out);

#endif
