/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Users and groups from /etc/passwd and /etc/group, read as text. pyebpf is
 * one static binary: glibc's getpwnam() and initgroups() would dlopen the
 * host's NSS modules, built for another glibc, into it. So serve's --user
 * must be a user of the files (nobody is, everywhere); users only a
 * directory service knows are not found, and the error says where it
 * looked. Pure parsing: no file is opened here but by accounts__read().
 */
#ifndef PYEBPF_SYSTEM_ACCOUNTS_H
#define PYEBPF_SYSTEM_ACCOUNTS_H

#include <stddef.h>
#include <sys/types.h>

/* The most bytes of /etc/passwd or /etc/group read. */
#define ACCOUNTS_FILE_MAX (8u << 20)

/* PATH's text, NUL-terminated, at most ACCOUNTS_FILE_MAX bytes (a longer
 * file is cut at its last whole line); NULL with errno set. Free it. */
char *accounts__read(const char *path, size_t *len);

/* NAME's uid and gid in passwd's text: 0, or -1 when no line names it. */
int accounts__user(const char *passwd, size_t len, const char *name, uid_t *uid, gid_t *gid);

/* The groups NAME belongs to in group's text, after `primary` (always
 * first): at most `max` ids in out; returns how many. */
size_t accounts__groups(const char *group, size_t len, const char *name, gid_t primary, gid_t *out, size_t max);

#endif
