/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `pyebpf push DIR` options: parsed and checked before anything is sent. */
#ifndef PYEBPF_PUSH_MAIN_ARGS_H
#define PYEBPF_PUSH_MAIN_ARGS_H

#include <getopt.h>

#include "push/push_args.h"
#include "base/wallclock.h"

#define PUSH_DEFAULT_GIVE_UP 300.0 /* seconds of a backend not taking what it lacks */

struct push_verb {
	struct push_opts push;
	const char *dir;
	struct time_arg since, until;
	double give_up_s;
};

/* 0: push; 1: help was printed (exit 0); -1: one error line was printed
 * (exit 2). argv[0] is "push". */
int push_main_args__parse(int argc, char **argv, struct push_verb *v);

/* The help text as --help prints it (malloc'd), and the option table the
 * parser takes: the man page is made from the one, a test holds both
 * together (tests/unit/test_help.c). */
char *push_main_args__help(void);
const struct option *push_main_args__options(void);

#endif
