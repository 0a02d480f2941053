/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A one-line reason built in parts (what did not match, then what would
 * have), into a caller's buffer: cut at its size, never past it.
 */
#ifndef PYEBPF_WHY_LINE_H
#define PYEBPF_WHY_LINE_H

#include <stddef.h>

struct why_line {
	char *buf;
	size_t size, len;
};

/* An empty line over buf (size > 0). */
struct why_line why_line(char *buf, size_t size);
/* printf-style text appended. */
void why_add(struct why_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
