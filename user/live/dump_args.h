/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `pyebpf dump` options: parsed and checked before anything is loaded. */
#ifndef PYEBPF_DUMP_ARGS_H
#define PYEBPF_DUMP_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "profile/filter.h"

struct dump_opts {
	uint32_t pid;          /* -p; with --container, the process being dumped */
	const char *container; /* --container ID|NAME: every process of it (argv's string) */
	bool native;           /* --native: native frames interleaved */
	bool locals;           /* --locals */
	bool json;             /* --json */
	bool verbose;          /* -v */
	uint32_t stack_size;   /* --native: user stack bytes copied */
	struct filter filter;
};

/* 0: run; 1: help was printed (exit 0); -1: one error line was printed (exit 2).
 * argv[0] is "dump". */
int dump_args__parse(int argc, char **argv, struct dump_opts *o);
void dump_args__free(struct dump_opts *o);

/* Processes `dump --container` dumps at most: a bound on what a container can make pyebpf do. */
#define DUMP_CONTAINER_PROCS_MAX 256

/* Pure: whether a process whose cgroup v2 path is `cgroup` ("/docker/ID", as
 * /proc/PID/cgroup writes it) is in the cgroup directory `dir` under `mount`
 * (a container's, from container_find) or below it. */
bool dump_cgroup_within(const char *mount, const char *dir, const char *cgroup);

/* The help text as --help prints it (malloc'd), and the option table the
 * parser takes: the man page is made from the one, a test holds both
 * together (tests/unit/test_help.c). */
char *dump_args__help(void);
const struct option *dump_args__options(void);

#endif
