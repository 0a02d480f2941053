/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A small reader of JSON that another program wrote and pyebpf does not
 * trust (a container runtime's state files, read as root): a document is
 * checked whole against JSON's grammar first, then members and array
 * elements are found by scanning it in place. No allocation; nesting is
 * bounded (JSON_MAX_DEPTH), so a hostile file costs time linear in its
 * length and a fixed stack. Nothing is guessed: text that is not JSON, a
 * value of another type, a string too long for its buffer are refused.
 */
#ifndef PYEBPF_JSON_FIELD_H
#define PYEBPF_JSON_FIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Deeper documents are refused (a runtime's state nests a few levels). */
#define JSON_MAX_DEPTH 64

/* One value's text inside a document (a string's with its quotes). */
struct json_value {
	const char *p;
	size_t n;
};

/* The one value buf holds (whitespace around it allowed); -1 when buf is not exactly one well-formed JSON value. */
int json_root(const char *buf, size_t len, struct json_value *out);
/* The member `key` of object obj (the last, as Go's decoder takes, when a key repeats); -1 when obj is
 * not an object or has no such member. */
int json_get(struct json_value obj, const char *key, struct json_value *out);
/* The elements of array arr in turn, *pos 0 at the start: 1 with the next in *elem, 0 after the last, -1
 * when arr is not an array. */
int json_next(struct json_value arr, size_t *pos, struct json_value *elem);
/* A string value decoded (escapes, \u with surrogate pairs as UTF-8) into out; -1 when v is not a string,
 * does not fit in size-1 bytes, or holds a NUL. */
int json_string(struct json_value v, char *out, size_t size);
/* true or false; -1 for anything else. */
int json_bool(struct json_value v, bool *out);
/* A non-negative integer without fraction or exponent that fits 64 bits; -1 for anything else. */
int json_u64(struct json_value v, uint64_t *out);

#endif
