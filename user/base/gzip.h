/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* gzip framing (RFC 1952) over zlib, for pprof files and .json.gz traces. */
#ifndef PYEBPF_GZIP_H
#define PYEBPF_GZIP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Compress data into out; 0, or -1 with errno set. */
int gzip__write(const uint8_t *data, size_t len, FILE *out);
/* The same for parts that follow each other in one stream (not copied together). */
struct gzip_part {
	const uint8_t *data;
	size_t len;
};
int gzip__writev(const struct gzip_part *parts, size_t nparts, FILE *out);
/* The same at zlib's `level` (1: fastest; what a push sends once need not be smallest). */
int gzip__writev_level(const struct gzip_part *parts, size_t nparts, int level, FILE *out);
/*
 * The same into memory, for a body sent whole (a push's request, the pprof
 * inside one): *out (malloc'd) and *len set only on success. 0, or -1 with
 * errno set.
 */
int gzip__writev_mem(const struct gzip_part *parts, size_t nparts, int level, uint8_t **out, size_t *len);

/* Does data start with the gzip magic? */
int gzip__is_gzip(const uint8_t *data, size_t len);

/*
 * Decompress a whole gzip stream into *out (malloc'd, *out_len bytes). At
 * most max_out bytes are produced: a bomb is an error, not an OOM. 0, or -1
 * with *why set to a static reason.
 */
int gzip__inflate(const uint8_t *data, size_t len, size_t max_out, uint8_t **out, size_t *out_len, const char **why);

#endif
