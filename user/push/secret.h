/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * --bearer-token-file and --basic-auth-file: a secret read from a file, never
 * from the command line. The file must be a regular file that no other user
 * can read (mode 0600 or 0400, as ssh demands of a key): a secret that
 * others can read is already out. Read again before each push, so a
 * rotated token (a Kubernetes secret volume) is taken without a restart.
 * No network here.
 */
#ifndef PYEBPF_PUSH_SECRET_H
#define PYEBPF_PUSH_SECRET_H

#include <stddef.h>

#define SECRET_MAX 4096

/*
 * The file's content up to its first line end, into buf (NUL-terminated).
 * `what` names the option for the reason. 0, or -1 with the reason in why:
 * cannot be opened, not a regular file, owned by a user other than pyebpf's
 * or root, readable or writable by group or
 * others, empty, longer than SECRET_MAX, holding a control character.
 * The secret itself never appears in why.
 */
int secret_read(const char *path, const char *what, char *buf, size_t size, char *why, size_t whylen);

/* --basic-auth-file's content is "user:password": is it? */
int secret_check_basic(const char *secret, char *why, size_t whylen);

/* How a push proves who it is (none of it on a command line but file names). */
struct push_auth {
	const char *ca_file;     /* --ca-file: the CAs to trust (default: the system's) */
	const char *bearer_file; /* --bearer-token-file */
	const char *basic_file;  /* --basic-auth-file: USER:PASSWORD */
	const char *tenant;      /* --tenant: X-Scope-OrgID */
};

/* Read each credential file as a push will (before sampling starts): 0, or -1 with why. */
int push_auth__check(const struct push_auth *a, char *why, size_t whylen);

/* Overwrite a secret in memory once it is used. */
void secret_wipe(char *buf, size_t size);

#endif
