/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The interval files of serve's one directory, listed and read only relative
 * to its descriptor (opened once: a directory moved away and another made in
 * its place is not served). A listed name is read only while it is still the
 * file that was listed (same device, inode, size and modification time), as
 * a regular file, never through a link: a name swapped after the listing for
 * a link to another user's recording, or for any other file, is refused.
 */
#ifndef PYEBPF_SERVE_DIR_H
#define PYEBPF_SERVE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct serve_file {
	char *name;
	uint64_t seq, size;
	int64_t start_ns; /* from the name */
	int64_t mtime_ns;
	uint64_t dev, ino;
};

/* The regular files of dirfd named as record --continuous names them, oldest
 * first; NULL with *n == 0 when there are none or it cannot be read. */
struct serve_file *serve_dir__list(int dirfd, size_t *n);
void serve_dir__free(struct serve_file *v, size_t n);

/* Is it the same file (identity, size and time)? */
bool serve_file__same(const struct serve_file *a, const struct serve_file *b);

/* The recording in listed file f, read up to max_size bytes; NULL with a
 * short reason in why ("not a regular file", "replaced since it was listed",
 * "cannot read: truncated gzip data"). */
struct profile *serve_dir__read(int dirfd, const struct serve_file *f, uint64_t max_size, char *why, size_t whylen);

#endif
