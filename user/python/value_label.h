/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A context variable's value as a label (--context-label), decoded from the
 * bytes of the object BPF copied at the sample (pyebpf_ctx_read.label_raw):
 * a str, an int or bytes. Pure: no reads, so it is fuzzed alone.
 */
#ifndef PYEBPF_PY_VALUE_LABEL_H
#define PYEBPF_PY_VALUE_LABEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "python/offsets.h"

enum py_value_kind {
	PY_VALUE_OTHER = 0, /* not a type a label is made of */
	PY_VALUE_STR,
	PY_VALUE_INT,
	PY_VALUE_BYTES,
};

/* The kind of a type by its tp_name. */
enum py_value_kind py_value_kind_of(const char *type_name);

/*
 * The value of an object of that kind from its first len bytes, as text
 * into out: control characters and non-ASCII bytes escaped (\xNN), a value
 * longer than the copy cut with "…". False when the bytes make no value
 * (a non-compact or wide string, an int beyond 64 bits, sizes that lie).
 */
bool py_value_label(const struct py_layout *l, enum py_value_kind kind, const uint8_t *raw, size_t len, char *out,
		    size_t size);

#endif
