// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "symbols/eh_frame.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

/* DW_EH_PE_*: the format (low bits) and how the value applies (high bits). */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APPLY 0x70
#define PE_PCREL 0x10

struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t take(struct cursor *c, size_t n)
{
	uint64_t v = 0;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++) /* little endian: x86-64 and arm64 */
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint64_t leb(struct cursor *c, bool is_signed)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		b = (uint8_t)take(c, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	if (is_signed && shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return v;
}

/* A value in encoding `enc`, without its application (pcrel etc.). */
static uint64_t encoded(struct cursor *c, uint8_t enc)
{
	switch (enc & PE_FORMAT) {
	case 0x00:
		return take(c, 8); /* absptr: 64-bit targets */
	case 0x01:
		return leb(c, false);
	case 0x02:
		return take(c, 2);
	case 0x03:
		return take(c, 4);
	case 0x04:
		return take(c, 8);
	case 0x09:
		return leb(c, true);
	case 0x0a:
		return (uint64_t)(int64_t)(int16_t)take(c, 2);
	case 0x0b:
		return (uint64_t)(int64_t)(int32_t)take(c, 4);
	case 0x0c:
		return take(c, 8);
	default:
		c->bad = true;
		return 0;
	}
}

/* The FDE pointer encoding of the CIE at `cie`, or PE_OMIT when it cannot be read. */
static uint8_t cie_fde_encoding(const uint8_t *cie, const uint8_t *end)
{
	struct cursor c = { cie, end, false };
	uint64_t len = take(&c, 4);
	const char *aug;
	uint8_t version, enc = 0; /* absptr unless 'R' says otherwise */

	if (len == 0xffffffff)
		len = take(&c, 8);
	if (c.bad || len > (uint64_t)(end - c.p))
		return PE_OMIT;
	c.end = c.p + len;
	if (take(&c, 4) != 0) /* a CIE's id is 0 in .eh_frame */
		return PE_OMIT;
	version = (uint8_t)take(&c, 1);
	aug = (const char *)c.p;
	while (!c.bad && take(&c, 1))
		;
	if (c.bad || aug[0] != 'z') /* without 'z' there is no 'R' */
		return c.bad || aug[0] ? PE_OMIT : enc;
	leb(&c, false);   /* code alignment */
	leb(&c, true);    /* data alignment */
	if (version == 1) /* return address register */
		take(&c, 1);
	else
		leb(&c, false);
	leb(&c, false); /* augmentation data length */
	for (const char *a = aug + 1; *a && !c.bad; a++) {
		switch (*a) {
		case 'L':
			take(&c, 1);
			break;
		case 'R':
			enc = (uint8_t)take(&c, 1);
			break;
		case 'P':
			encoded(&c, (uint8_t)take(&c, 1));
			break;
		case 'S':
		case 'B':
			break;
		default:
			return PE_OMIT; /* unknown augmentation: its data cannot be skipped */
		}
	}
	return c.bad ? PE_OMIT : enc;
}

static int cmp_range(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

size_t eh_frame_ranges(const uint8_t *data, size_t len, uint64_t vaddr, struct fde_range **out)
{
	const uint8_t *end = data + len, *last_cie = NULL;
	struct fde_range *r = NULL;
	size_t n = 0, cap = 0;
	uint8_t enc = PE_OMIT;
	struct cursor c = { data, end, false };

	while (!c.bad && c.p < end) {
		const uint8_t *body;
		uint64_t rlen = take(&c, 4), id;

		if (rlen == 0) /* the terminator */
			break;
		if (rlen == 0xffffffff)
			rlen = take(&c, 8);
		if (c.bad || rlen > (uint64_t)(end - c.p) || rlen < 4)
			break;
		body = c.p;
		id = take(&c, 4);
		if (id) { /* an FDE: id is the distance back to its CIE */
			const uint8_t *cie = body - id;

			if (id > (uint64_t)(body - data))
				break;
			if (cie != last_cie) {
				last_cie = cie;
				enc = cie_fde_encoding(cie, end);
			}
			if (enc != PE_OMIT && ((enc & PE_APPLY) == 0 || (enc & PE_APPLY) == PE_PCREL)) {
				struct cursor f = { c.p, body + rlen, false };
				uint64_t at = vaddr + (uint64_t)(f.p - data);
				uint64_t start = encoded(&f, enc), size = encoded(&f, enc & PE_FORMAT);

				if ((enc & PE_APPLY) == PE_PCREL)
					start += at;
				if (!f.bad && size && start + size > start) {
					xgrow(&r, &cap, n + 1, sizeof(*r));
					r[n++] = (struct fde_range){ start, start + size };
				}
			}
		}
		c.p = body + rlen;
	}
	if (n)
		qsort(r, n, sizeof(*r), cmp_range);
	*out = r;
	return n;
}

const struct fde_range *fde_range_find(const struct fde_range *r, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) { /* the last range starting at or before addr */
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < r[lo - 1].end ? &r[lo - 1] : NULL;
}
