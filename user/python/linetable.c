// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Ports of the lookups in CPython's Objects/codeobject.c:
 *  <= 3.9  PyCode_Addr2Line over co_lnotab (Objects/lnotab_notes.txt);
 *  3.10    _PyCode_CheckLineNumber over co_linetable byte-offset pairs — every
 *          pair counts, including the (delta, 0) ones that split long ranges;
 *  3.11+   the location table (Objects/locations.md).
 * Verified against co_lines()/dis of the installed interpreters by the tests.
 */
#include "python/linetable.h"

static int lnotab(const uint8_t *tab, size_t len, int line, int lasti, int signed_deltas)
{
	int addr = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += tab[i];
		if (addr > lasti)
			break;
		line += signed_deltas ? (int8_t)tab[i + 1] : tab[i + 1];
	}
	return line;
}

static int linetable_310(const uint8_t *tab, size_t len, int line, int lasti)
{
	int end = 0, computed = line, cur = -1;

	/* Advance over ranges [start, end) until one ends beyond lasti. */
	for (size_t i = 0; i + 1 < len; i += 2) {
		int ldelta = (int)(int8_t)tab[i + 1]; /* a signed byte */

		end += tab[i];
		if (ldelta == -128) {
			cur = -1;
		} else {
			computed += ldelta;
			cur = computed;
		}
		if (end > lasti)
			return cur;
	}
	return -1;
}

struct reader {
	const uint8_t *p, *end;
};

static int read_byte(struct reader *r)
{
	return r->p < r->end ? *r->p++ : -1;
}

static unsigned read_varint(struct reader *r)
{
	int b = read_byte(r);
	unsigned v, shift = 6;

	if (b < 0)
		return 0;
	v = b & 63;
	while (b & 64) {
		b = read_byte(r);
		if (b < 0 || shift > 28)
			break;
		v |= (unsigned)(b & 63) << shift;
		shift += 6;
	}
	return v;
}

static int read_svarint(struct reader *r)
{
	unsigned v = read_varint(r);

	return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

static int locations_311(const uint8_t *tab, size_t len, int line, int lasti)
{
	struct reader r = { tab, tab + len };
	int addr = 0;

	while (r.p < r.end) {
		int b = read_byte(&r), code, units, delta = 0, no_line = 0;

		if (!(b & 0x80))
			return -1; /* not at an entry start: malformed */
		code = (b >> 3) & 15;
		units = (b & 7) + 1;
		switch (code) {
		case 15: /* no location */
			no_line = 1;
			break;
		case 14: /* long form: line delta, end line delta, column, end column */
			delta = read_svarint(&r);
			read_varint(&r);
			read_varint(&r);
			read_varint(&r);
			break;
		case 13: /* no column */
			delta = read_svarint(&r);
			break;
		case 12:
		case 11:
		case 10: /* one line form: delta in the code, two column bytes */
			delta = code - 10;
			read_byte(&r);
			read_byte(&r);
			break;
		default: /* short form: same line, one column byte */
			read_byte(&r);
			break;
		}
		line += delta;
		if (lasti < addr + units * 2)
			return no_line ? -1 : line;
		addr += units * 2;
	}
	return -1;
}

int py_line_for_offset(enum py_linetable_format fmt, const uint8_t *tab, size_t len, int firstlineno, int lasti)
{
	if (lasti < 0)
		return firstlineno;
	switch (fmt) {
	case PY_LNOTAB_27:
		return lnotab(tab, len, firstlineno, lasti, 0);
	case PY_LNOTAB_36:
		return lnotab(tab, len, firstlineno, lasti, 1);
	case PY_LINETABLE_310:
		return linetable_310(tab, len, firstlineno, lasti);
	case PY_LOCATIONS_311:
		return locations_311(tab, len, firstlineno, lasti);
	}
	return -1;
}
