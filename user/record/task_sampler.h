/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Task time (--mode wall, CPython 3.14+): at each tick of the recording,
 * every pending asyncio task of every Python process known gets one sample,
 * its stack the task's await chain: the tasks awaiting it (outermost
 * first), `[task NAME]`, its coroutines from the outermost to the innermost,
 * and what the innermost awaits (`[await: sleep]`...). Read from outside
 * with process_vm_readv (python/asyncio_tasks.h walks); the samples carry
 * LABEL_TASK: task time is not thread time.
 */
#ifndef PYEBPF_TASK_SAMPLER_H
#define PYEBPF_TASK_SAMPLER_H

#include <stdint.h>

#include "profile/profile.h"
#include "python/symbolize.h"

struct task_sampler;
/* A process's part (where its asyncio lists are, how they are read), kept
 * in its record of the process table (record/processes.h): made at its
 * first walk, NULL before. */
struct task_proc;

struct task_stats {
	uint64_t ticks;          /* task walks of a process */
	uint64_t samples;        /* task samples added (by weight) */
	uint64_t lists_cut;      /* task lists not read to the end (changing, unreadable) */
	uint64_t no_asyncio;     /* walks skipped: asyncio's layout not found (yet) */
	uint64_t walk_ns;        /* time spent in walks, samples added */
	uint64_t pages;          /* pages of the targets' memory read by walks */
	uint64_t running_unread; /* thread samples whose running task could not be read */
};

struct task_sampler *task_sampler__new(struct profile *prof);
void task_sampler__free(struct task_sampler *ts); /* accepts NULL */
/* The process exec'd or exited: its part goes (NULL accepted). */
void task_proc__free(struct task_proc *tp);

/* Callback to label a task's sample: the thread that runs its list's loop,
 * and the request in its context (task_context: its contextvars.Context, 0
 * unread). */
typedef void (*task_labels_fn)(void *ctx, uint32_t pid, uint32_t tid, const struct py_interp *in, uint64_t task_context,
			       struct sample_labels *l);

/* One walk of p's tasks, each weighing `ticks` samples at time t. */
void task_sampler__sample(struct task_sampler *ts, struct pyprocs *py, struct py_proc *p, struct task_proc **slot,
			  uint32_t ticks, uint64_t t, uint64_t now, task_labels_fn labels, void *ctx,
			  bool (*keep)(void *ctx, struct sample_labels *l));
const struct task_stats *task_sampler__stats(const struct task_sampler *ts);

/* The task a thread sample's thread was running (3.14+: the sample's
 * running_task, read by BPF from the thread state; 3.11–3.13, is_coro: the
 * coroutine BPF found a task's step running, whose task is looked up
 * here): its `[task NAME]` frame,
 * and the name and file of the task's coroutine, the Python frame it goes
 * above. false: no task known there (not asyncio's, unreadable, a layout
 * that does not agree with the table BPF read it by). */
struct running_task {
	uint32_t frame;
	uint32_t coro_name, coro_file; /* string ids, as struct frame has them */
};
bool task_sampler__running(struct task_sampler *ts, struct pyprocs *py, struct py_proc *p, struct task_proc **slot,
			   uint64_t task, bool is_coro, uint64_t now, struct running_task *out);

/* The .AsyncioDebug section of an open ELF file (3.14's _asyncio, 3.15's
 * interpreter): 0, or -1 if it has none. */
int asyncio_debug_section(int fd, uint8_t *out, size_t len);

#endif
