/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * An output: a regular file appears whole or not at all (a temporary file
 * beside it, renamed over it on commit, removed on abort); "-", a character
 * device or a FIFO is written into, never replaced (outfile.c says all the
 * rules). Opened before sampling starts, so an unwritable path is reported
 * before any work is done.
 */
#ifndef PYEBPF_OUTFILE_H
#define PYEBPF_OUTFILE_H

#include <limits.h>
#include <stdio.h>

#include <stdbool.h>

struct outfile {
	const char *path;      /* as the user gave it */
	char target[PATH_MAX]; /* what is written: the path, or a symlink's target */
	char tmp[PATH_MAX];    /* the temporary file while a regular file is written */
	bool direct;           /* "-", a device or a FIFO: written into */
	FILE *f;
};

/* 0, or -1 after one error line. */
int outfile__open(struct outfile *o, const char *path);
/* The stream to write to (a FIFO is opened here); NULL after one error line. */
FILE *outfile__file(struct outfile *o);
/* Flush, close and rename into place; 0, or -1 after one error line (and the temporary removed). */
int outfile__commit(struct outfile *o);
/* Remove the temporary file; safe to call twice and with nothing open. */
void outfile__abort(struct outfile *o);

#endif
