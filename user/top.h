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

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

#include "offcpu.h"

struct top_row {
	char *name;
	uint64_t self, total;
	uint64_t by_reason[OFFCPU__COUNT]; /* total split: [OFFCPU_NONE] on the CPU, else off it by reason */
	uint64_t base_self, base_total;    /* a diff's before (samples labelled LABEL_BASE; not in the above) */
};

/* All functions, sorted by self, then total, then name; free with top__free(). */
struct top_row *top__rows(const struct profile *p, size_t *n);
void top__free(struct top_row *rows, size_t n);
/* The first `limit` rows as a table; 0, or -1 with errno set. */
int top__print(const struct profile *p, size_t limit, FILE *out);
/* A diff (report --diff-base): the functions whose share of their side's
 * samples changed most, before and after; 0, or -1 with errno set. */
int top__print_diff(const struct profile *p, size_t limit, FILE *out);

#endif
