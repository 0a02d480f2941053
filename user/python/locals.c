// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/locals.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "python/frames.h"
#include "python/procmem.h"
#include "python/repr.h"

#define MAX_WALK 4096
#define MAX_NAMES 1024 /* a code object with more locals is not read */
#define STR_CHARS 48   /* characters of a str or bytes value read */
#define TP_FLAG_HEAPTYPE (1UL << 9)
/* 3.11+ co_localspluskinds bits. */
#define CO_FAST_HIDDEN 0x10
#define CO_FAST_LOCAL 0x20
#define CO_FAST_CELL 0x40
#define CO_FAST_FREE 0x80

static uint64_t rd(pid_t pid, uint64_t addr)
{
	uint64_t v = 0;

	procmem_u64(pid, addr, &v);
	return v;
}

void py_frames_of_codes(pid_t pid, const struct py_interp *in, uint64_t tstate, const uint64_t *codes, size_t n,
			uint64_t *frames)
{
	const struct py_layout *l = &in->layout;
	uint64_t frame = py_frame_first(pid, l, tstate);
	size_t j = 0;

	memset(frames, 0, n * sizeof(*frames));
	for (int i = 0; frame && j < n && i < MAX_WALK; i++) {
		uint64_t back, code = py_frame_step(pid, l, frame, &back);

		if (code && code == codes[j])
			frames[j++] = frame;
		frame = back;
	}
}

/* The type's name (a C string in the target), or NULL; *heap: a class made in Python. */
static char *type_name(pid_t pid, const struct py_layout *l, uint64_t obj, bool *heap)
{
	uint64_t type = rd(pid, obj + l->ob_type), name = type ? rd(pid, type + l->tp_name) : 0;
	char buf[64];

	if (!name || procmem_read(pid, name, buf, 1))
		return NULL;
	/* A name that ends before a page boundary may fail a whole read: byte by byte then. */
	if (procmem_read(pid, name, buf, sizeof(buf))) {
		size_t i = 0;

		while (i < sizeof(buf) - 1 && !procmem_read(pid, name + i, buf + i, 1) && buf[i])
			i++;
		buf[i] = '\0';
	}
	buf[sizeof(buf) - 1] = '\0';
	*heap = (rd(pid, type + l->tp_flags) & TP_FLAG_HEAPTYPE) != 0;
	return xstrdup(buf);
}

/* An int object's value when it fits 64 bits; false for a larger one. */
static bool long_value(pid_t pid, const struct py_interp *in, uint64_t obj, int64_t *v)
{
	const struct py_layout *l = &in->layout;
	uint64_t raw = rd(pid, obj + l->long_size), ndigits;
	uint32_t d[3] = { 0 };
	bool neg;

	if (in->major == 3 && in->minor >= 12) { /* lv_tag: digits << 3 | sign (0 +, 1 zero, 2 -) */
		ndigits = raw >> 3;
		neg = (raw & 3) == 2;
	} else {
		int64_t size = (int64_t)raw;

		neg = size < 0;
		ndigits = neg ? (uint64_t)-size : (uint64_t)size;
	}
	if (ndigits > 2 || (ndigits && procmem_read(pid, obj + l->long_digits, d, ndigits * 4)))
		return false;
	uint64_t mag = (uint64_t)d[0] | (uint64_t)d[1] << 30;

	*v = neg ? -(int64_t)mag : (int64_t)mag;
	return true;
}

/* A str (bytes: a bytes object) value's repr. */
static char *str_repr(pid_t pid, const struct py_interp *in, uint64_t obj, bool bytes)
{
	const struct py_layout *l = &in->layout;
	char *out = xmalloc(PY_REPR_MAX);
	uint64_t len = rd(pid, obj + (bytes ? l->bytes_size : in->major == 2 ? l->str_size : l->uni_length));

	if (bytes || in->major == 2) {
		size_t n = 0;
		uint8_t *b = py_read_bytes(pid, l, obj, STR_CHARS, &n);

		if (!b) {
			free(out);
			return NULL;
		}
		if (in->major == 2) { /* 2.7's str is bytes, written as a str */
			char *s = xmalloc(n + 1);

			memcpy(s, b, n);
			s[n] = '\0';
			for (size_t i = 0; i < n; i++)
				if (!s[i])
					s[i] = '?';
			py_repr_str(s, len > n, out, PY_REPR_MAX);
			free(s);
		} else {
			py_repr_bytes(b, n, len > n, out, PY_REPR_MAX);
		}
		free(b);
		return out;
	}
	char *s = py_read_str(pid, l, obj, STR_CHARS);

	if (!s) {
		free(out);
		return NULL;
	}
	py_repr_str(s, len > STR_CHARS, out, PY_REPR_MAX);
	free(s);
	return out;
}

/* The repr of one value (obj: a PyObject address, tag bits cleared). */
static char *value_repr(pid_t pid, const struct py_interp *in, uint64_t obj)
{
	const struct py_layout *l = &in->layout;
	char *name, *out = NULL, buf[PY_REPR_MAX];
	bool heap = false;
	int64_t v;

	name = type_name(pid, l, obj, &heap);
	if (!name)
		return xstrdup("<unreadable>");
	if (heap) {
		/* A class defined in Python: whatever its name says, not a builtin. */
	} else if (!strcmp(name, "NoneType")) {
		out = xstrdup("None");
	} else if (!strcmp(name, "bool")) {
		if (in->major == 2)
			v = (int64_t)rd(pid, obj + l->int_value);
		else if (!long_value(pid, in, obj, &v))
			v = -1;
		out = v == 0 ? xstrdup("False") : v == 1 ? xstrdup("True") : NULL;
	} else if (!strcmp(name, "int") || !strcmp(name, "long")) {
		bool two_int = in->major == 2 && !strcmp(name, "int");

		if (two_int)
			v = (int64_t)rd(pid, obj + l->int_value);
		if (two_int || long_value(pid, in, obj, &v)) {
			snprintf(buf, sizeof(buf), "%" PRId64 "%s", v, in->major == 2 && !two_int ? "L" : "");
			out = xstrdup(buf);
		}
	} else if (!strcmp(name, "float")) {
		double d = 0;

		if (!procmem_read(pid, obj + l->float_value, &d, sizeof(d))) {
			py_repr_float(d, buf, sizeof(buf));
			out = xstrdup(buf);
		}
	} else if (!strcmp(name, "str")) {
		out = str_repr(pid, in, obj, false);
	} else if (!strcmp(name, "bytes")) {
		out = str_repr(pid, in, obj, true);
	}
	if (!out) {
		snprintf(buf, sizeof(buf), "<%.48s at 0x%" PRIx64 ">", name, obj);
		out = xstrdup(buf);
	}
	free(name);
	return out;
}

/* The names tuple of a code object and how many of its entries are locals. */
static uint64_t names_of(pid_t pid, const struct py_interp *in, uint64_t code, uint64_t *n)
{
	const struct py_layout *l = &in->layout;
	uint64_t names;

	if (l->co_varnames != PYEBPF_NO_OFFSET && l->co_nlocals != PYEBPF_NO_OFFSET) {
		int32_t nl = 0;

		names = rd(pid, code + l->co_varnames);
		if (!names || procmem_read(pid, code + l->co_nlocals, &nl, sizeof(nl)) || nl < 0)
			return 0;
		*n = (uint64_t)nl;
	} else if (l->co_localsplusnames != PYEBPF_NO_OFFSET && l->co_localsplusnames) {
		names = rd(pid, code + l->co_localsplusnames);
		*n = names ? rd(pid, names + l->tuple_size) : 0;
	} else {
		return 0;
	}
	if (*n > MAX_NAMES || *n > rd(pid, names + l->tuple_size))
		return 0;
	return names;
}

size_t py_frame_locals(pid_t pid, const struct py_interp *in, uint64_t frame, uint64_t code, struct py_local *out)
{
	const struct py_layout *l = &in->layout;
	uint64_t n = 0, names = names_of(pid, in, code, &n), mask = l->bpf.executable_mask;
	uint64_t *items, *values;
	uint8_t *kinds = NULL;
	size_t nkinds = 0, got = 0;

	if (!names || !n || !frame || !l->frame_localsplus)
		return 0;
	items = xcalloc(n, 8);
	values = xcalloc(n, 8);
	if (procmem_read(pid, names + l->tuple_items, items, n * 8) ||
	    procmem_read(pid, frame + l->frame_localsplus, values, n * 8))
		goto out;
	if (l->co_varnames == PYEBPF_NO_OFFSET) {
		kinds = py_read_bytes(pid, l, rd(pid, code + l->co_localspluskinds), MAX_NAMES, &nkinds);
		if (!kinds || nkinds < n)
			goto out;
	}
	for (uint64_t i = 0; i < n && got < PY_LOCALS_MAX; i++) {
		uint64_t v = values[i];
		char *name;

		if (kinds &&
		    (!(kinds[i] & (CO_FAST_LOCAL | CO_FAST_CELL)) || (kinds[i] & (CO_FAST_HIDDEN | CO_FAST_FREE))))
			continue;
		if (mask && (v & 3) == 3 && in->minor >= 14) { /* 3.14+ tagged int on the stack */
			char buf[32];

			snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)v >> 2);
			name = py_read_str(pid, l, items[i], 64);
			if (name) {
				out[got].name = name;
				out[got++].value = xstrdup(buf);
			}
			continue;
		}
		v &= ~mask;
		if (!v) /* not bound yet, or deleted */
			continue;
		if (kinds && (kinds[i] & CO_FAST_CELL)) { /* a cell: its contents */
			bool heap;
			char *t = type_name(pid, l, v, &heap);
			bool cell = t && !strcmp(t, "cell");

			free(t);
			if (cell && !(v = rd(pid, v + l->ob_type + 8)))
				continue;
		}
		name = py_read_str(pid, l, items[i], 64);
		if (!name)
			continue;
		out[got].name = name;
		out[got++].value = value_repr(pid, in, v);
	}
out:
	free(kinds);
	free(items);
	free(values);
	return got;
}

void py_locals_free(struct py_local *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(l[i].name);
		free(l[i].value);
	}
}
