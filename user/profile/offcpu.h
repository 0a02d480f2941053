/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Why a thread was off the CPU (--mode wall/off-cpu), decided from what the
 * kernel saw when it left: its task state, the syscall it was in and that
 * syscall's first argument (struct pyebpf_offcpu), and for futex waits the
 * address of the process's GIL. Pure logic: unit-tested alone.
 */
#ifndef PYEBPF_OFFCPU_H
#define PYEBPF_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "pyebpf.h"

enum offcpu_reason {
	OFFCPU_NONE = 0, /* on the CPU: not an off-CPU sample */
	OFFCPU_RUNQUEUE, /* runnable, waiting for a CPU (preempted) */
	OFFCPU_SLEEP,    /* a timed sleep: nanosleep, clock_nanosleep, select/poll on no fd */
	OFFCPU_IO,       /* waiting on file descriptors: read, recv, accept, epoll, select, poll, fsync */
	OFFCPU_LOCK,     /* a futex that is not the GIL, flock, semop */
	OFFCPU_GIL,      /* a Python thread waiting to take the GIL */
	OFFCPU_OTHER,    /* anything else: page faults, wait4, pause, unknown */
	OFFCPU__COUNT,
};

/* [lo, hi): where a process's GIL (its mutex and condition variables) lives; 0, 0: unknown. */
struct gil_range {
	uint64_t lo, hi;
};

enum offcpu_reason offcpu_classify(const struct pyebpf_offcpu *o, const struct gil_range *gil);
/*
 * With --native: does a call from `caller` (a Python frame when
 * caller_python) to `callee` show a thread taking the GIL? take_gil and
 * PyEval_RestoreThread do (3.x); so does 2.7's PyThread_acquire_lock called
 * by the evaluation loop itself (a Python frame once merged) or by
 * PyEval_RestoreThread, never by a lock object's acquire. It turns a lock
 * wait into a GIL wait.
 */
bool offcpu_gil_call(const char *caller, bool caller_python, const char *callee);
/* A kernel function of the scheduler itself, dropped from the leaf of off-CPU stacks. */
bool offcpu_scheduler_function(const char *name);

const char *offcpu_reason_name(enum offcpu_reason r); /* "io"; "" for OFFCPU_NONE */
/* "io" -> OFFCPU_IO; OFFCPU_NONE when unknown. */
enum offcpu_reason offcpu_reason_parse(const char *name);
/* "[off-cpu: io]": the leaf frame of an off-CPU sample. */
const char *offcpu_reason_frame(enum offcpu_reason r);
/* Is name such a frame? */
bool offcpu_is_reason_frame(const char *name);

#endif
