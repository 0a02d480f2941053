/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `pyebpf serve` options: parsed and checked before anything is opened. */
#ifndef PYEBPF_SERVE_ARGS_H
#define PYEBPF_SERVE_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define SERVE_MAX_ALLOW_HOSTS 16

struct serve_listen {
	struct sockaddr_storage ss;
	socklen_t len;
	bool loopback;
};

struct serve_args {
	const char *dir, *where, *user;
	struct serve_listen a;
	bool public;
	const char *allow[SERVE_MAX_ALLOW_HOSTS];
	size_t nallow;
};

/* 0: serve; 1: help was printed (exit 0); -1: one error line was printed
 * (exit 2). argv[0] is "serve". */
int serve_args__parse(int argc, char **argv, struct serve_args *g);
/* "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:80", ":8080" or "8080" (loopback): 0, or -1. */
int serve_args__listen(const char *arg, struct serve_listen *a);

/* The help text as --help prints it (malloc'd), and the option table the
 * parser takes: the man page is made from the one, a test holds both
 * together (tests/unit/test_help.c). */
char *serve_args__help(void);
const struct option *serve_args__options(void);

#endif
