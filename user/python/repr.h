/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Short reprs of values read from a target (`dump --locals`), as Python
 * would print them, bounded: pure formatting, unit-tested alone. Nothing
 * here escapes for a terminal: the writers do (write/escape.h).
 */
#ifndef PYEBPF_PY_REPR_H
#define PYEBPF_PY_REPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest repr written, the terminating NUL included. */
#define PY_REPR_MAX 128

/* 'text' (or "text" when it holds ' and no "), with Python's escapes;
 * `cut`: the value goes on beyond what was read ("..." after the quote).
 * The result is cut to fit size at a character boundary. */
void py_repr_str(const char *utf8, bool cut, char *out, size_t size);
/* b'...' of len bytes. */
void py_repr_bytes(const uint8_t *b, size_t len, bool cut, char *out, size_t size);
/* The shortest repr that reads back as d: 1.5, 0.1, 1e+100, inf, nan. */
void py_repr_float(double d, char *out, size_t size);

#endif
