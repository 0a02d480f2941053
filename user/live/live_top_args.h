/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `pyebpf top` options: record's targets, sampling and filters, and top's own. */
#ifndef PYEBPF_LIVE_TOP_ARGS_H
#define PYEBPF_LIVE_TOP_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "record/record_args.h"

struct live_top_opts {
	struct record_opts rec; /* -a, -p, --comm, --container, --cgroup, --mode, -F, -d, filters */
	bool once;              /* --once: one plain table after -d, no screen */
	size_t rows;            /* --rows: rows of the --once table */
	const char *by;         /* --by KEY: a table of the label KEY's values (endpoint...), not of functions */
};

#define LIVE_TOP_DEFAULT_ROWS 20

/* 0: run; 1: help was printed (exit 0); -1: one error line was printed (exit 2);
 * after 1 or -1 there is nothing to free. argv[0] is "top". */
int live_top_args__parse(int argc, char **argv, struct live_top_opts *o);
void live_top_args__free(struct live_top_opts *o);

/* The help text as --help prints it (malloc'd), and the option table the
 * parser takes: the man page is made from the one, a test holds both
 * together (tests/unit/test_help.c). */
char *live_top_args__help(void);
const struct option *live_top_args__options(void);

#endif
