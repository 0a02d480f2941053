/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * --mode memory's ledger: which sampled memory is still held, and by whom.
 * Each memory sample (bpf/memory.bpf.c) is a page a process mapped in, the
 * sample points it holds, and the stack and labels it grew under (its
 * site). Memory a process gives back (munmap, brk down, madvise) or moves
 * (mremap) is taken off the samples of that range, whatever stack gives it
 * back: what is held at the end is charged to the stack that grew it, as a
 * Go heap profile's inuse_space is. A process that execs or exits gives
 * back all of its memory (the kernel takes it back), and each process's
 * most held at once is kept for the summary: a program that frees what it
 * holds as it ends still says how much it held.
 *
 * Pure logic: no libbpf, no system calls; ingest feeds it.
 */
#ifndef PYEBPF_MEM_LEDGER_H
#define PYEBPF_MEM_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct mem_ledger;

/* What one process did while recorded, in sample points. */
struct mem_proc {
	uint32_t pid;
	uint32_t comm;     /* string id of its name, as the samples' labels had it */
	uint64_t grown;    /* points of memory mapped in */
	uint64_t returned; /* ... of which given back */
	uint64_t peak;     /* the most points it held at once */
	bool exited;       /* it ended (and gave everything back) */
};

struct mem_ledger *mem_ledger__new(void);
void mem_ledger__free(struct mem_ledger *m); /* accepts NULL */

/* A sample: `points` sample points in the page at addr, grown under these
 * labels and frames (root first). A page sampled before and not given back
 * since was given back unseen (a mapping replaced in place): it is now. */
void mem_ledger__grow(struct mem_ledger *m, const struct sample_labels *l, uint64_t addr, uint32_t points,
		      const uint32_t *frames, uint32_t nframes);
/* pid gave back [start, start + len). */
void mem_ledger__release(struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t len);
/* pid moved [start, start + len) to `to`, now to_len long (mremap): the
 * samples go with it, those beyond its new length are given back. */
void mem_ledger__move(struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t len, uint64_t to, uint64_t to_len);
/* pid exec'd: everything it held is given back. */
void mem_ledger__forget(struct mem_ledger *m, uint32_t pid);
/* pid exited: the same, and the summary says it ended. */
void mem_ledger__exited(struct mem_ledger *m, uint32_t pid);
/* The stacks that hold nothing now are forgotten (after what is held was read). */
void mem_ledger__tidy(struct mem_ledger *m);

/* The memory held now, by site: fn once per site that holds any. */
typedef void (*mem_held_fn)(void *ctx, const struct sample_labels *l, const uint32_t *frames, uint32_t nframes,
			    uint64_t points);
void mem_ledger__held(const struct mem_ledger *m, mem_held_fn fn, void *ctx);

/* Points held now, in all. */
uint64_t mem_ledger__held_points(const struct mem_ledger *m);
/* The processes seen, in the order first seen; n of them. */
const struct mem_proc *mem_ledger__procs(const struct mem_ledger *m, size_t *n);
/* Processes kept apart, at most this many: past it, ended ones are summed and forgotten. */
#define MEM_LEDGER_PROCS_MAX 4096
/* The n ended processes forgotten so far, summed into one (pid 0; its peak: the largest of theirs). */
const struct mem_proc *mem_ledger__forgotten(const struct mem_ledger *m, size_t *n);

#endif
