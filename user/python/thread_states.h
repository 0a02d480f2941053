/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Every thread state of a Python process, walked whole from userspace: the
 * index BPF consults for threads its own walk reaches late or never (a
 * thread list longer than the walk's bound; thousands of blocked threads
 * at the stop, each of which would walk the list again). Memory comes
 * through a reader, so tests walk lists they built.
 */
#ifndef PYEBPF_PY_THREAD_STATES_H
#define PYEBPF_PY_THREAD_STATES_H

#include <stddef.h>
#include <stdint.h>

#include "pyebpf.h"

/* Reads len bytes at addr of the process; 0, or -1 when it cannot. */
typedef int (*py_mem_reader)(void *ctx, uint64_t addr, void *buf, size_t len);

struct py_tstate_entry {
	uint64_t thread_id; /* pthread_self() of the thread */
	uint64_t tstate;
};

/* The walk stops at this many thread states in all (a list that loops, or
 * a process that keeps starting threads, costs no more). */
#define PY_TSTATES_MAX 65536

/*
 * The thread states of the interpreters listed at interp_head_addr (o: the
 * layout's offsets), into out (room for max), sorted by thread id; threads
 * with thread states in several interpreters are left out (only a walk
 * tells which is current). Returns how many, or -1 when the interpreter
 * list cannot be read.
 */
long py_thread_states(py_mem_reader rd, void *ctx, uint64_t interp_head_addr, const struct pyebpf_py_offsets *o,
		      struct py_tstate_entry *out, size_t max);

#endif
