/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The top-N table of `pyebpf report`: functions by self samples (the
 * function was the leaf) and total samples (anywhere in the stack, counted
 * once per sample). A Python function is one row whatever its lines.
 * A wall-clock recording (--mode wall/off-cpu) splits each function's total
 * into time on the CPU and off it by reason; the self time of an off-CPU
 * sample is the waiting function's, not the kernel's or the reason frame's.
 */
#ifndef PYEBPF_TOP_H
#define PYEBPF_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

#include "profile/offcpu.h"
#include "python/asyncio_tasks.h"

struct top_row {
	char *name;        /* "function (file:line)", or the frame as printed */
	uint32_t func_len; /* the function part of name: name[0 .. func_len) */
	uint32_t pid, tid; /* top_opts.per_thread: the thread the row is of; else 0 */
	uint64_t self, total;
	uint64_t by_reason[OFFCPU__COUNT]; /* total split: [OFFCPU_NONE] on the CPU, else off it by reason */
	uint64_t base_self, base_total;    /* a diff's before (samples labelled LABEL_BASE; not in the above) */
	uint64_t by_await[AWAIT__COUNT];   /* task time (LABEL_TASK) split by what the task awaits */
};

struct top_opts {
	bool by_line;         /* a row per Python line ("f (file:12)"), not per function ("f (file:first line)") */
	bool per_thread;      /* a row per (pid, tid, function): rows of different threads never merge */
	const char *by;       /* only the samples whose label `by` (profile__label_value) is ... */
	const char *by_value; /* ... this value (NULL: the samples without it) */
};

/* All functions, sorted by self, then total, then name; free with top__free(). */
struct top_row *top__rows(const struct profile *p, size_t *n);
/* The same, as opts says (NULL: top__rows). */
struct top_row *top__rows_opts(const struct profile *p, const struct top_opts *opts, size_t *n);
void top__free(struct top_row *rows, size_t n);
/* The first `limit` rows as a table; 0, or -1 with errno set. */
int top__print(const struct profile *p, size_t limit, FILE *out);
/* A diff (report --diff-base): the functions whose share of their side's
 * samples changed most, before and after; 0, or -1 with errno set. */
int top__print_diff(const struct profile *p, size_t limit, FILE *out);

#endif
