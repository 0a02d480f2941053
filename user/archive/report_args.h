/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `pyebpf report` options: parsed and checked before any file is read. */
#ifndef PYEBPF_REPORT_ARGS_H
#define PYEBPF_REPORT_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "profile/filter.h"
#include "write/formats.h"

struct report_opts {
	const char *input;   /* the first recording (pprof file or continuous directory) */
	const char **inputs; /* all of them */
	size_t ninputs;
	const char **bases; /* --diff-base */
	size_t nbases;
	struct filter base_filter; /* the filters for the bases: --base-since/--base-until (shares filter's lists) */
	const char *output;        /* -o; NULL: the top table on stdout */
	enum output_format format;
	bool threads;                  /* --threads */
	enum process_frames processes; /* --processes */
	bool containers;               /* --containers */
	const char *by;                /* --by KEY: a frame per value of a request label (folded) */
	size_t top;                    /* --top N rows */
	bool exclude_idle;             /* --exclude-idle: threads without an on-CPU sample left out */
	struct filter filter;          /* --pid and the shared filters */
	int sample_type;               /* --sample-type: enum mem_value, a memory recording's value shown */
	bool sample_type_given;
};

#define REPORT_DEFAULT_TOP 20

/* 0: run; 1: help was printed (exit 0); -1: one error line was printed (exit 2).
 * argv[0] is "report". */
int report_args__parse(int argc, char **argv, struct report_opts *o);
void report_args__free(struct report_opts *o);

/* The help text as --help prints it (malloc'd), and the option table the
 * parser takes: the man page is made from the one, a test holds both
 * together (tests/unit/test_help.c). */
char *report_args__help(void);
const struct option *report_args__options(void);

#endif
