/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The filter options `record` and `report` share, parsed one way for both. */
#ifndef PYEBPF_FILTER_ARGS_H
#define PYEBPF_FILTER_ARGS_H

#include <getopt.h>

#include "profile/filter.h"

enum filter_opt {
	OPT_FILTER_TID = 1000,
	OPT_FILTER_THREAD,
	OPT_FILTER_EXCLUDE_THREAD,
	OPT_FILTER_COMM,
	OPT_FILTER_SINCE,
	OPT_FILTER_UNTIL,
	OPT_FILTER_GIL,
	OPT_FILTER_NO_KERNEL,
	OPT_FILTER_PYTHON_ONLY,
	OPT_FILTER_REASON,
	OPT_FILTER_FUNCTIONS,
	OPT_FILTER_CONTAINER,
	OPT_FILTER_LABEL,
	OPT_FILTER_TRACE_ID,
};

/* Entries for a getopt_long option table. */
#define FILTER_LONG_OPTIONS                                                                                           \
	{ "tid", required_argument, NULL, OPT_FILTER_TID }, { "thread", required_argument, NULL, OPT_FILTER_THREAD }, \
		{ "exclude-thread", required_argument, NULL, OPT_FILTER_EXCLUDE_THREAD },                             \
		{ "comm", required_argument, NULL, OPT_FILTER_COMM },                                                 \
		{ "since", required_argument, NULL, OPT_FILTER_SINCE },                                               \
		{ "until", required_argument, NULL, OPT_FILTER_UNTIL }, { "gil", no_argument, NULL, OPT_FILTER_GIL }, \
		{ "no-kernel", no_argument, NULL, OPT_FILTER_NO_KERNEL },                                             \
		{ "reason", required_argument, NULL, OPT_FILTER_REASON },                                             \
		{ "functions", no_argument, NULL, OPT_FILTER_FUNCTIONS },                                             \
		{ "label", required_argument, NULL, OPT_FILTER_LABEL },                                               \
		{ "trace-id", required_argument, NULL, OPT_FILTER_TRACE_ID },                                         \
	{                                                                                                             \
		"python-only", no_argument, NULL, OPT_FILTER_PYTHON_ONLY                                              \
	}

/* The help text of those options. */
extern const char filter_args_usage[];

/*
 * Apply option `opt` (with its argument; strings must outlive f). 1: it was a
 * filter option; 0: it was not; -1: one error line was printed.
 */
int filter_args__option(struct filter *f, int opt, const char *arg);
/* --pid for report: PID[,PID...] into f->pids; -1 after one error line. */
int filter_args__pids(struct filter *f, const char *arg, const char *opt);
/* The option loop of record and report: start with args_begin(), then
 * args_next() applies filter options itself and returns the next other
 * option's code, ARGS_END after the last option, or ARGS_FAIL after one
 * error line (a bad filter value, a missing value, an unknown option). */
#define ARGS_END (-1)
#define ARGS_FAIL (-2)
void args_begin(void);
int args_next(int argc, char **argv, const char *shortopts, const struct option *longopts, struct filter *f,
	      const char *verb);
/* "empty output path for -o" is one error line; else *out = arg. */
int args_output(const char *arg, const char **out);
/* A --since/--until-like value of option `opt`; -1 after one error line. */
struct time_arg;
int filter_args__time(const char *arg, const char *opt, struct time_arg *t);
/* After all options: checks that need them all (--since before --until);
 * wall-clock --since/--until become epoch times. */
int filter_args__check(struct filter *f);

#endif
