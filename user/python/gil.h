/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Where a process's GIL lives, so that a thread blocked in a futex there
 * reads as waiting for the GIL rather than for a lock (user/offcpu.c).
 */
#ifndef PYEBPF_PY_GIL_H
#define PYEBPF_PY_GIL_H

#include <pthread.h>
#include <sys/types.h>

#include "profile/offcpu.h"
#include "python/detect.h"

/*
 * struct _gil_runtime_state (3.7-3.13): interval, last_holder, locked,
 * switch_number, then the futex words: cond (48 bytes), mutex, switch_cond
 * (48), switch_mutex. A mutex is libc's: 40 bytes on x86-64, 48 on aarch64.
 */
#define PY_GIL_STRUCT_SIZE (128 + 2 * sizeof(pthread_mutex_t))
/* How much longer the GIL is here than in x86-64's numbers (python/offsets.c). */
#define PY_GIL_GROWTH (2 * (sizeof(pthread_mutex_t) - 40))

/* 0 and *out set, or -1: not known (2.7; 3.6 without a symbol table) or unreadable. */
int py_gil_range(pid_t pid, const struct py_interp *in, struct gil_range *out);

#endif
