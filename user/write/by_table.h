/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `pyebpf report --by KEY` without -o: a table of a label's values (an
 * endpoint, a trace, --context-label's variable; docs/requests.md) by their
 * samples, or bytes of a memory view, with their share, the share of their
 * wall time on the CPU (wall recordings), and the functions that took most
 * of it (top.h's self time). Samples without the label are one row, "-".
 */
#ifndef PYEBPF_BY_TABLE_H
#define PYEBPF_BY_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "profile/profile.h"

/* The first `limit` values, most samples first; 0, or -1 with errno set. */
int by_table__print(const struct profile *p, const char *key, size_t limit, FILE *out);

#endif
