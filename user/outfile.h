/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * An output file that appears whole or not at all: written to a temporary
 * file beside it, renamed over it on commit, removed on abort. The
 * temporary file is created before sampling starts, so an unwritable path
 * is reported before any work is done.
 */
#ifndef PYEBPF_OUTFILE_H
#define PYEBPF_OUTFILE_H

#include <limits.h>
#include <stdio.h>

struct outfile {
	const char *path;
	char tmp[PATH_MAX];
	FILE *f;
};

/* 0, or -1 after one error line. */
int outfile__open(struct outfile *o, const char *path);
/* Flush, close and rename into place; 0, or -1 after one error line (and the temporary removed). */
int outfile__commit(struct outfile *o);
/* Remove the temporary file; safe to call twice and with nothing open. */
void outfile__abort(struct outfile *o);

#endif
