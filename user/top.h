/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The top-N table of `pyebpf report`: functions by self samples (the
 * function was the leaf) and total samples (anywhere in the stack, counted
 * once per sample). A Python function is one row whatever its lines.
 */
#ifndef PYEBPF_TOP_H
#define PYEBPF_TOP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"

struct top_row {
	char *name;
	uint64_t self, total;
};

/* All functions, sorted by self, then total, then name; free with top__free(). */
struct top_row *top__rows(const struct profile *p, size_t *n);
void top__free(struct top_row *rows, size_t n);
/* The first `limit` rows as a table; 0, or -1 with errno set. */
int top__print(const struct profile *p, size_t limit, FILE *out);

#endif
