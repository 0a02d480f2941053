/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * serve needs no root. Started as root, it opens DIR and its socket, then
 * runs as --user (default nobody): supplementary groups, group and user ids
 * all set, and checked that root cannot be taken back. That user must be able
 * to read DIR's interval files; if not, serve says so in one line and does
 * not start (--user root keeps root, by choice, not by default).
 */
#ifndef PYEBPF_SERVE_USER_H
#define PYEBPF_SERVE_USER_H

#include <stdbool.h>
#include <sys/types.h>

struct serve_user {
	char name[64];
	uid_t uid;
	gid_t gid;
	bool given; /* --user on the command line */
};

/* --user NAME (NULL: the default) looked up; -1 after one error line. */
int serve_user__find(const char *name, struct serve_user *u);

/* Become u when root; then u must read dirfd (DIR, for messages) and its
 * newest interval file. -1 after one error line. */
int serve_user__become(const struct serve_user *u, int dirfd, const char *dir);

#endif
