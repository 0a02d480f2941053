/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * An answer's body: a memory stream that stops growing at a bound, so that
 * one answer (a flame graph of a huge range) cannot take more memory than
 * that; writes beyond it fail and the answer says so instead.
 */
#ifndef PYEBPF_SERVE_BODY_H
#define PYEBPF_SERVE_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct serve_body {
	FILE *f;
	char *buf;
	size_t len, cap;
	uint64_t max;
	bool over; /* something was written beyond max */
};

/* The stream to write into (dies when out of memory). */
FILE *serve_body__open(struct serve_body *b, uint64_t max);
/* Close the stream: false when the body went beyond its bound (then freed). */
bool serve_body__close(struct serve_body *b);

#endif
