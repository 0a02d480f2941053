/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The process table: one record per process seen while recording, owning
 * all that pyebpf keeps about it. Each part belongs to the module that
 * knows it and is made there at its first need (NULL before): the module's
 * function takes the part's field, as procs__get(&p->maps) does. An exec
 * frees every part but the mappings' (which start over), an exit frees the
 * record once late samples cannot come any more; both here alone. A new
 * per-process cache is a field below and a line in process_parts_free().
 */
#ifndef PYEBPF_PROCESSES_H
#define PYEBPF_PROCESSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "native/unwind.h"
#include "python/symbolize.h"
#include "record/task_sampler.h"
#include "record/threads.h"
#include "symbols/procs.h"

struct process {
	uint32_t pid;
	struct proc *maps;             /* mappings, symbol files, container labels (symbols/procs.h) */
	struct py_proc *python;        /* interpreter and code objects (python/symbolize.h) */
	struct proc_threads *threads;  /* thread names (record/threads.h) */
	struct task_proc *tasks;       /* where its asyncio task lists are (record/task_sampler.h) */
	struct unwind_session *native; /* --native: its libdw session (native/unwind.h) */
	struct request_proc *requests; /* its context variables and spans seen (record/request_labels.h) */
	uint64_t exited_ns;            /* 0: alive */
	/* --mode memory: its main thread's Python thread state, once a sample
	 * of it ran Python (0: none seen): a main thread with no Python frame
	 * then is its interpreter's teardown (ingest.c). */
	uint64_t py_main_tstate;
};

struct processes;

/* syms: where the mappings' part is made and freed; kept. */
struct processes *processes__new(struct procs *syms);
void processes__free(struct processes *t); /* accepts NULL */

/* pid's record, made (and its maps read) at first sight. */
struct process *processes__get(struct processes *t, uint32_t pid, uint64_t now);
/* pid's record, or NULL when none is known. */
struct process *processes__find(const struct processes *t, uint32_t pid);
/* pid replaced its image: all known of it goes, but the record (the same
 * process to the user) stays. The one forget by pid. */
void processes__exec(struct processes *t, uint32_t pid);
/* pid exited: its record goes at processes__gc, 2 s from now. */
void processes__exit(struct processes *t, uint32_t pid, uint64_t now);
/* Free the records of processes that exited more than 2 s before now (late
 * samples may still come until then), calling gone(pid, ctx) first for what
 * lives outside this table (its registration in BPF); and the symbols of
 * files no process has mapped for 60 s. */
void processes__gc(struct processes *t, uint64_t now, void (*gone)(uint32_t pid, void *ctx), void *ctx);
/* The records, in no order: start with *pos = 0. */
bool processes__next(const struct processes *t, size_t *pos, struct process **p);

#endif
