// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/repr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buf {
	char *out;
	size_t size, len;
	bool full;
};

/* Append n bytes, all or none (so a character or an escape is never split). */
static void put(struct buf *b, const char *s, size_t n)
{
	if (b->full || b->len + n + 1 > b->size) {
		b->full = true;
		return;
	}
	memcpy(b->out + b->len, s, n);
	b->len += n;
	b->out[b->len] = '\0';
}

/* Bytes of the UTF-8 sequence that starts with c (1 for a stray byte). */
static size_t utf8_len(unsigned char c)
{
	return c >= 0xf0 && c < 0xf8 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
}

static void quoted(struct buf *b, const unsigned char *s, size_t n, bool bytes, bool cut)
{
	bool sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
	char q = sq && !dq ? '"' : '\'', esc[8];

	if (b->size)
		b->out[0] = '\0';
	if (bytes)
		put(b, "b", 1);
	put(b, &q, 1);
	for (size_t i = 0; i < n && !b->full;) {
		unsigned char c = s[i];
		size_t k = 1;

		if (c == '\\' || c == (unsigned char)q) {
			esc[0] = '\\';
			esc[1] = (char)c;
			put(b, esc, 2);
		} else if (c == '\n' || c == '\r' || c == '\t') {
			esc[0] = '\\';
			esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
			put(b, esc, 2);
		} else if (c < 0x20 || c == 0x7f || (bytes && c >= 0x80)) {
			snprintf(esc, sizeof(esc), "\\x%02x", c);
			put(b, esc, 4);
		} else if (c >= 0x80) { /* kept whole; the writers escape what a terminal must not see */
			k = utf8_len(c);
			if (i + k > n)
				k = n - i;
			put(b, (const char *)s + i, k);
		} else {
			put(b, (const char *)&c, 1);
		}
		i += k;
	}
	if (b->full) { /* cut: end cleanly, within size */
		size_t room = b->size >= 5 ? b->size - 5 : 0;

		if (b->len > room)
			b->len = room;
		while (b->len && ((unsigned char)b->out[b->len] & 0xc0) == 0x80) /* not inside a character */
			b->len--;
		b->full = false;
		cut = true;
		b->out[b->len] = '\0';
	}
	put(b, &q, 1);
	if (cut)
		put(b, "...", 3);
}

void py_repr_str(const char *utf8, bool cut, char *out, size_t size)
{
	struct buf b = { out, size, 0, false };

	quoted(&b, (const unsigned char *)utf8, strlen(utf8), false, cut);
}

void py_repr_bytes(const uint8_t *bytes, size_t len, bool cut, char *out, size_t size)
{
	struct buf b = { out, size, 0, false };

	quoted(&b, bytes, len, true, cut);
}

void py_repr_float(double d, char *out, size_t size)
{
	char tmp[64];

	if (isnan(d)) {
		snprintf(out, size, "nan");
		return;
	}
	if (isinf(d)) {
		snprintf(out, size, "%sinf", d < 0 ? "-" : "");
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	/* Python writes 1.0, not 1, and 1e+16 for large values. */
	if (!strpbrk(tmp, ".einn"))
		strncat(tmp, ".0", sizeof(tmp) - strlen(tmp) - 1);
	snprintf(out, size, "%s", tmp);
}
