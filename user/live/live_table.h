/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The numbers of `pyebpf top`: each interval's samples (a profile of just
 * that interval) summed by top.c per thread and function (or line), kept
 * for the last interval and since the start; a view picks a process or a
 * thread, per-function or per-line rows, and a sort. Pure: no libbpf, no
 * ncurses (live_format.h lays the rows out as text).
 */
#ifndef PYEBPF_LIVE_TABLE_H
#define PYEBPF_LIVE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/offcpu.h"
#include "profile/profile.h"

enum live_sort {
	LIVE_SORT_SELF = 0,
	LIVE_SORT_TOTAL,
};

struct live_counts {
	uint64_t self, total;              /* samples: the function the leaf; anywhere in the stack */
	uint64_t by_reason[OFFCPU__COUNT]; /* total split: [OFFCPU_NONE] on the CPU, else off it by reason */
};

/* One row of a view: a function (or a line) over the threads the view picks. */
struct live_row {
	const char *name;            /* "function (file:line)", or a native/kernel frame; the table's */
	uint32_t func_len;           /* name[0 .. func_len): the function */
	struct live_counts now, all; /* the last interval; since the start */
};

struct live_thread {
	uint32_t pid, tid;
	char *comm;        /* the process name (the kernel's); never NULL */
	char *thread;      /* the Python thread name, else the OS one; never NULL */
	uint64_t now, all; /* samples in the last interval; since the start */
};

struct live_view {
	bool by_line; /* a row per Python line, not per function */
	enum live_sort sort;
	bool since_start;  /* sort by the since-start numbers, not the last interval's */
	uint32_t pid, tid; /* only this process, this thread; 0: every one */
};

struct live_totals {
	uint64_t now, all; /* samples of the threads the view picks */
	uint32_t reasons;  /* bit (1 << enum offcpu_reason) of every reason in the view's rows since the start */
};

struct live_table;

struct live_table *live_table__new(void);
void live_table__free(struct live_table *t); /* accepts NULL */
/* The next interval: p holds its samples (and only those). */
void live_table__add(struct live_table *t, const struct profile *p);
uint64_t live_table__intervals(const struct live_table *t);
bool live_table__wall(const struct live_table *t); /* the samples are wall time (--mode wall/off-cpu) */

/* The view's rows, sorted (largest first); free() them; names stay the table's. */
struct live_row *live_table__view(const struct live_table *t, const struct live_view *v, size_t *n,
				  struct live_totals *tot);
/* Threads seen, by pid then tid; NULL when none. */
const struct live_thread *live_table__threads(const struct live_table *t, size_t *n);
/* Cycling a filter: the process after pid (0: the first), the thread after
 * tid among pid's (pid 0: every thread); 0 after the last. */
uint32_t live_table__next_pid(const struct live_table *t, uint32_t pid);
uint32_t live_table__next_tid(const struct live_table *t, uint32_t pid, uint32_t tid);
/* A thread seen, or NULL. */
const struct live_thread *live_table__thread(const struct live_table *t, uint32_t pid, uint32_t tid);

#endif
