// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/locals.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/uio.h>

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

size_t py_chain_read(pid_t pid, const struct py_interp *in, uint64_t tstate, size_t max, struct py_seen_frame **out,
		     bool *more)
{
	const struct py_layout *l = &in->layout;
	uint64_t frame = py_frame_first(pid, l, tstate);
	size_t n = 0, cap = 0;

	*out = NULL;
	*more = false;
	for (int i = 0; frame && i < MAX_WALK; i++) {
		struct py_frame_look look;

		if (py_frame_look(pid, l, frame, &look))
			break;
		if (look.code) {
			if (n == max) {
				*more = true;
				break;
			}
			xgrow(out, &cap, n + 1, sizeof(**out));
			(*out)[n++] = (struct py_seen_frame){ frame, look };
		}
		frame = look.back;
	}
	return n;
}

size_t py_chain_match(const uint64_t *captured, size_t ncap, const uint64_t *walked, size_t nwalk, bool more,
		      size_t *match)
{
	size_t got = 0;

	for (size_t i = 0; i < ncap; i++)
		match[i] = PY_NO_MATCH;
	for (size_t k = 0; ncap && k + ncap <= nwalk; k++) {
		size_t i = 0;

		while (i < ncap && walked[k + i] == captured[i])
			i++;
		if (i < ncap)
			continue;
		for (i = 0; i < ncap; i++)
			match[i] = k + i;
		return ncap;
	}
	/* Only a whole chain has its outermost frame: a cut walk's end is anywhere. */
	for (size_t i = ncap, j = nwalk; !more && i > 0 && j > 0 && captured[i - 1] == walked[j - 1]; i--, j--) {
		match[i - 1] = j - 1;
		got++;
	}
	return got;
}

/* Captured frames per system call: each takes up to two looks before, its values and two looks after,
 * under IOV_MAX (1024) iovecs. */
#define HELD_CHUNK 200

/* Whether a look now is the walk's: code and caller link, and the instruction of a frame below another. */
static bool look_same(const struct py_layout *l, const uint8_t *buf, const struct py_seen_frame *w, size_t at)
{
	struct py_frame_look now;

	py_frame_look_parse(l, buf, &now);
	/* A running frame's instruction moves on within the same call; a caller's stays at its call. */
	return now.code == w[at].look.code && now.back == w[at].look.back && (!at || now.instr == w[at].look.instr);
}

/* Walk indices looked at for frames idx[0 .. n): each and its caller, ascending, once each; how many. */
static size_t looks_of(const size_t *idx, size_t n, size_t nw, size_t *at)
{
	size_t nl = 0;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; idx[i] != PY_NO_MATCH && k < 2; k++)
			if (idx[i] + k < nw && (!nl || at[nl - 1] < idx[i] + k))
				at[nl++] = idx[i] + k;
	return nl;
}

static void held_chunk(pid_t pid, const struct py_layout *l, const struct py_seen_frame *w, size_t nw,
		       const size_t *idx, size_t n, const size_t *nvals, uint64_t *const *vals, bool *held)
{
	size_t span = py_frame_look_size(l), *at = xcalloc(2 * n + 1, sizeof(*at));
	size_t nl = looks_of(idx, n, nw, at), niov = 0, want = 0;
	uint8_t *pre = xcalloc(nl + 1, span), *post = xcalloc(nl + 1, span);
	struct iovec *local = xcalloc(2 * nl + n + 1, sizeof(*local)),
		     *remote = xcalloc(2 * nl + n + 1, sizeof(*remote));

#define ADD_IOV(buf, addr, len)                                                      \
	do {                                                                         \
		local[niov] = (struct iovec){ (buf), (len) };                        \
		remote[niov++] = (struct iovec){ (void *)(uintptr_t)(addr), (len) }; \
		want += (len);                                                       \
	} while (0)
	for (size_t k = 0; k < nl; k++)
		ADD_IOV(pre + k * span, w[at[k]].frame, span);
	for (size_t i = 0; i < n; i++)
		if (idx[i] != PY_NO_MATCH && nvals[i])
			ADD_IOV(vals[i], w[idx[i]].frame + l->frame_localsplus, nvals[i] * 8);
	for (size_t k = 0; k < nl; k++)
		ADD_IOV(post + k * span, w[at[k]].frame, span);
#undef ADD_IOV
	if (nl && process_vm_readv(pid, local, niov, remote, niov, 0) == (ssize_t)want) {
		for (size_t i = 0; i < n; i++) {
			bool ok = idx[i] != PY_NO_MATCH;

			/* Its own look and its caller's, both before and after the values. */
			for (size_t c = 0; ok && c < 2 && idx[i] + c < nw; c++) {
				size_t k = 0;

				while (k < nl && at[k] != idx[i] + c)
					k++;
				ok = k < nl && look_same(l, pre + k * span, w, at[k]) &&
				     look_same(l, post + k * span, w, at[k]);
			}
			held[i] = ok;
		}
	}
	free(local);
	free(remote);
	free(pre);
	free(post);
	free(at);
}

void py_frames_values_held(pid_t pid, const struct py_interp *in, const struct py_seen_frame *w, size_t nw,
			   const size_t *idx, size_t n, const size_t *nvals, uint64_t *const *vals, bool *held)
{
	const struct py_layout *l = &in->layout;
	size_t span = py_frame_look_size(l);

	for (size_t i = 0; i < n; i++)
		held[i] = false;
	if (!span || !l->frame_localsplus)
		return;
	for (size_t lo = 0; lo < n; lo += HELD_CHUNK)
		held_chunk(pid, l, w, nw, idx + lo, n - lo < HELD_CHUNK ? n - lo : HELD_CHUNK, nvals + lo, vals + lo,
			   held + lo);
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

size_t py_code_nlocals(pid_t pid, const struct py_interp *in, uint64_t code)
{
	uint64_t n = 0;

	return names_of(pid, in, code, &n) ? (size_t)n : 0;
}

size_t py_frame_locals(pid_t pid, const struct py_interp *in, const uint64_t *values, size_t nvalues, uint64_t code,
		       struct py_local *out)
{
	const struct py_layout *l = &in->layout;
	uint64_t n = 0, names = names_of(pid, in, code, &n), mask = l->bpf.executable_mask;
	uint64_t *items;
	uint8_t *kinds = NULL;
	size_t nkinds = 0, got = 0;

	if (!names || !n || n != nvalues)
		return 0;
	items = xcalloc(n, 8);
	if (procmem_read(pid, names + l->tuple_items, items, n * 8))
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
	return got;
}

void py_locals_free(struct py_local *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(l[i].name);
		free(l[i].value);
	}
}
