/* The walk's page cache: what it reads equals the memory, whole lines are
 * read once a walk, a line at a mapping's end is read by pages, and a page
 * that cannot be read fails its reads only. */
#include "unit.h"

#include <string.h>

#include "python/page_cache.h"

/* A fake process: 64 KiB of bytes at BASE, the page at BASE + 40 KiB unmapped. */
#define BASE 0x7f0000000000ULL
#define SIZE (64 * 1024)
#define HOLE (BASE + 40 * 1024)
static uint8_t mem[SIZE];
static int calls;

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	calls++;
	if (addr < BASE || addr + len > BASE + SIZE || (addr < HOLE + 4096 && addr + len > HOLE))
		return -1;
	memcpy(buf, mem + (addr - BASE), len);
	return 0;
}

Test(page_cache, reads_equal_memory_and_lines_are_read_once)
{
	struct page_cache *c = page_cache__new(8);
	uint8_t buf[9000];

	for (size_t i = 0; i < SIZE; i++)
		mem[i] = (uint8_t)(i * 7 + 3);
	calls = 0;
	page_cache__reset(c, fake_read, NULL);
	/* Across two pages of the first line, then again: one read. */
	cr_assert_eq(page_cache__read(c, BASE + 4000, buf, 200), 0);
	cr_assert_eq(memcmp(buf, mem + 4000, 200), 0);
	cr_assert_eq(page_cache__read(c, BASE + 8, buf, 16), 0);
	cr_assert_eq(calls, 1);
	/* Across two lines: the second is read. */
	cr_assert_eq(page_cache__read(c, BASE + 16000, buf, 9000), 0);
	cr_assert_eq(memcmp(buf, mem + 16000, 9000), 0);
	cr_assert_eq(calls, 2);
	/* A new walk reads again. */
	page_cache__reset(c, fake_read, NULL);
	cr_assert_eq(page_cache__read(c, BASE + 8, buf, 16), 0);
	cr_assert_eq(calls, 3);
	page_cache__free(c);
}

Test(page_cache, an_unreadable_page_fails_only_its_reads)
{
	struct page_cache *c = page_cache__new(8);
	uint8_t buf[64];

	page_cache__reset(c, fake_read, NULL);
	/* The line holding the hole cannot be read whole: its other pages are. */
	cr_assert_eq(page_cache__read(c, BASE + 32 * 1024 + 16, buf, 64), 0);
	cr_assert_eq(memcmp(buf, mem + 32 * 1024 + 16, 64), 0);
	cr_assert_eq(page_cache__read(c, HOLE + 100, buf, 8), -1);
	cr_assert_eq(page_cache__read(c, HOLE - 4, buf, 8), -1, "a read that reaches into the hole");
	cr_assert_eq(page_cache__read(c, HOLE + 4096, buf, 8), 0);
	/* Outside the process, and an address that wraps. */
	cr_assert_eq(page_cache__read(c, BASE + SIZE, buf, 8), -1);
	cr_assert_eq(page_cache__read(c, UINT64_MAX - 2, buf, 8), -1);
	page_cache__free(c);
}
