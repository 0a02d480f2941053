#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "symbols/eh_frame.h"

/* An .eh_frame built by hand: a CIE "zR" with pcrel|sdata4 pointers, FDEs
 * for two functions (out of order), the terminator. */
struct builder {
	uint8_t b[256];
	size_t n;
};

static void put(struct builder *e, uint64_t v, size_t size)
{
	for (size_t i = 0; i < size; i++)
		e->b[e->n++] = (uint8_t)(v >> (8 * i));
}

static size_t cie(struct builder *e, uint8_t enc)
{
	size_t at = e->n;

	put(e, 13, 4); /* length */
	put(e, 0, 4);  /* CIE id */
	put(e, 1, 1);  /* version */
	put(e, 'z', 1), put(e, 'R', 1), put(e, 0, 1);
	put(e, 1, 1);    /* code alignment */
	put(e, 0x78, 1); /* data alignment -8 */
	put(e, 16, 1);   /* return address register */
	put(e, 1, 1);    /* augmentation data length */
	put(e, enc, 1);
	return at;
}

static void fde(struct builder *e, size_t cie_at, uint64_t vaddr, uint64_t start, uint32_t size)
{
	put(e, 12, 4);
	put(e, e->n - cie_at, 4); /* back to the CIE from this field */
	put(e, (uint32_t)(int32_t)(start - (vaddr + e->n)), 4);
	put(e, size, 4);
}

Test(eh_frame, fde_ranges_of_pcrel_entries)
{
	struct builder e = { 0 };
	const uint64_t vaddr = 0x2000;
	size_t at = cie(&e, 0x1b);
	struct fde_range *r;

	fde(&e, at, vaddr, 0x1500, 0x40);
	fde(&e, at, vaddr, 0x1000, 0x100);
	put(&e, 0, 4);
	cr_assert_eq(eh_frame_ranges(e.b, e.n, vaddr, &r), 2);
	cr_assert_eq(r[0].start, 0x1000);
	cr_assert_eq(r[0].end, 0x1100);
	cr_assert_eq(r[1].start, 0x1500);
	cr_assert_eq(fde_range_find(r, 2, 0x10ff)->start, 0x1000);
	cr_assert_eq(fde_range_find(r, 2, 0x1520)->start, 0x1500);
	cr_assert_null(fde_range_find(r, 2, 0x1100), "between functions: none");
	cr_assert_null(fde_range_find(r, 2, 0xfff));
	free(r);
}

/* Hostile bytes: lengths past the end, a CIE pointer before the section,
 * an unknown augmentation. The walk ends; nothing is read out of bounds
 * (ASan watches). */
Test(eh_frame, malformed_entries_end_the_walk)
{
	struct builder e = { 0 };
	struct fde_range *r;
	size_t at = cie(&e, 0x1b);

	fde(&e, at, 0, 0x100, 0x10);
	size_t good = e.n;
	put(&e, 12, 4);
	put(&e, 0x7fffffff, 4); /* its CIE would be before the section */
	put(&e, 0, 8);
	cr_assert_eq(eh_frame_ranges(e.b, e.n, 0, &r), 1);
	free(r);
	e.n = good;
	put(&e, 0xfffffff0, 4); /* longer than the data */
	cr_assert_eq(eh_frame_ranges(e.b, e.n, 0, &r), 1);
	free(r);
	for (size_t cut = 0; cut < good; cut++) { /* every truncation */
		r = NULL;
		uint8_t *copy = malloc(cut ? cut : 1);
		memcpy(copy, e.b, cut);
		size_t n = eh_frame_ranges(copy, cut, 0, &r);
		cr_assert(n <= 1);
		free(r);
		free(copy);
	}
	e.b[at + 10] = 'Q'; /* "zQ": data of unknown size, no FDE can be read */
	cr_assert_eq(eh_frame_ranges(e.b, good, 0, &r), 0);
	free(r);
}
