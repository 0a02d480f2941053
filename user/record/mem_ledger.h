/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * --mode memory's ledger: which sampled memory is still held, and by whom.
 * Each memory sample (bpf/memory.bpf.c) is a page a process mapped in, the
 * sample points it holds, and the stack and labels it grew under (its
 * site). Memory a process gives back (munmap, brk down, madvise) or moves
 * (mremap) is taken off the samples of that range, whatever stack gives it
 * back: what is held at the end is charged to the stack that grew it, as a
 * Go heap profile's inuse_space is. A process that execs gives back all
 * of its memory; one that exits keeps what it held at its exit as what is
 * held (memray's leaks view of a program run to its end), until what is
 * held has been read once (mem_ledger__tidy). What a process gives back as
 * it ends (an interpreter's teardown, which ingest tells apart) is kept as
 * held at its end too, provisionally: if it turns out still running when
 * what is held is read, that memory went back after all.
 *
 * Each process's high-water mark (the moment its total held was highest)
 * is kept by site as well (memray's default view): a site's held at that
 * moment. Each site is one process's (a pid used again is another
 * process, with sites of its own), and the sites changed since the last
 * high-water mark are noted, so a new mark costs what changed since the
 * last, not a walk of every site.
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
	uint64_t ending;   /* of what it held at its end, points it gave back as it ended (kept as held) */
	bool exited;       /* it ended: what it held then (grown - returned) stays held */
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
/* Whether running process pid holds sampled pages in [start, start + len). */
bool mem_ledger__holds(const struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t len);
/* pid gave back [start, start + len) as it ends (its interpreter's
 * teardown): still held, as what it held at its end, should it exit; given
 * back at mem_ledger__settle if it still runs then. */
void mem_ledger__release_ending(struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t len);
/* What running processes gave back "as they ended" went back after all:
 * they still run (before what is held is read). */
void mem_ledger__settle(struct mem_ledger *m);
/* pid moved [start, start + len) to `to`, now to_len long (mremap): the
 * samples go with it, those beyond its new length are given back. */
void mem_ledger__move(struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t len, uint64_t to, uint64_t to_len);
/* pid exec'd: everything it held is given back. */
void mem_ledger__forget(struct mem_ledger *m, uint32_t pid);
/* pid exited: what it holds stays held, as what it held at its end; its
 * pid is another process's from now on. */
void mem_ledger__exited(struct mem_ledger *m, uint32_t pid);
/* After what is held was read: ended processes' memory is let go (it was
 * shown as theirs at their end), each process's high-water mark starts
 * again from what it holds now (an interval's peak is its own), and the
 * stacks that hold nothing are forgotten. */
void mem_ledger__tidy(struct mem_ledger *m);

/* The memory held now, by site: fn once per site that holds any. */
typedef void (*mem_held_fn)(void *ctx, const struct sample_labels *l, const uint32_t *frames, uint32_t nframes,
			    uint64_t points);
void mem_ledger__held(const struct mem_ledger *m, mem_held_fn fn, void *ctx);
/* The memory held at each process's high-water mark (since the last tidy),
 * by site: fn once per site that held any then. */
void mem_ledger__peak(const struct mem_ledger *m, mem_held_fn fn, void *ctx);

/*
 * A site's labels name its request by the profile's id, which goes at the
 * interval's end (profile__clear_samples_carrying): each site's request id
 * (0 for a free slot), n of them, in an array the caller frees; and the
 * same array renumbered, back into the sites.
 */
uint32_t *mem_ledger__requests(const struct mem_ledger *m, size_t *n);
void mem_ledger__renumber_requests(struct mem_ledger *m, const uint32_t *ids);

/* Points held now, in all. */
uint64_t mem_ledger__held_points(const struct mem_ledger *m);
/* The processes seen, in the order first seen; n of them. */
const struct mem_proc *mem_ledger__procs(const struct mem_ledger *m, size_t *n);
/* Processes kept apart, at most this many: past it, ended ones are summed and forgotten. */
#define MEM_LEDGER_PROCS_MAX 4096
/* The n ended processes forgotten so far, summed into one (pid 0; its peak: the largest of theirs). */
const struct mem_proc *mem_ledger__forgotten(const struct mem_ledger *m, size_t *n);

#endif
