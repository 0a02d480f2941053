// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/page_cache.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define PAGES_PER_LINE (PAGE_CACHE_LINE / PAGE_CACHE_PAGE)

struct slot {
	uint64_t line; /* address of the line held */
	uint32_t gen;  /* valid when the cache's */
	uint8_t have;  /* pages of it read (a bit each) */
	uint8_t bad;   /* pages of it that could not be read */
};

struct page_cache {
	size_t n;
	uint32_t gen; /* a reset makes every slot stale at once */
	struct slot *slots;
	uint8_t *data; /* n lines */
	page_read_fn rd;
	void *ctx;
	struct page_cache_stats st;
};

struct page_cache *page_cache__new(size_t lines)
{
	struct page_cache *c = xcalloc(1, sizeof(*c));

	c->n = lines ? lines : 1;
	c->slots = xcalloc(c->n, sizeof(*c->slots));
	c->data = xcalloc(c->n, PAGE_CACHE_LINE);
	c->gen = 1;
	return c;
}

void page_cache__free(struct page_cache *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c->data);
	free(c);
}

void page_cache__reset(struct page_cache *c, page_read_fn rd, void *ctx)
{
	c->rd = rd;
	c->ctx = ctx;
	if (++c->gen == 0) { /* wrapped: slots of generation 0 would look valid */
		memset(c->slots, 0, c->n * sizeof(*c->slots));
		c->gen = 1;
	}
}

/* The page at `page` (aligned), read if it is not held; NULL if unreadable. */
static const uint8_t *page_at(struct page_cache *c, uint64_t page)
{
	uint64_t line = page & ~(uint64_t)(PAGE_CACHE_LINE - 1);
	size_t i = (size_t)((line / PAGE_CACHE_LINE) % c->n);
	unsigned k = (unsigned)((page - line) / PAGE_CACHE_PAGE);
	struct slot *s = &c->slots[i];
	uint8_t *d = c->data + i * PAGE_CACHE_LINE;

	if (s->gen != c->gen || s->line != line) {
		s->gen = c->gen;
		s->line = line;
		s->have = s->bad = 0;
		c->st.page_reads++;
		if (c->rd && !c->rd(c->ctx, line, d, PAGE_CACHE_LINE))
			s->have = (1u << PAGES_PER_LINE) - 1;
	}
	if (!(s->have & (1u << k)) && !(s->bad & (1u << k))) { /* a line not readable whole: its page */
		c->st.page_reads++;
		if (c->rd && !c->rd(c->ctx, page, d + (size_t)k * PAGE_CACHE_PAGE, PAGE_CACHE_PAGE))
			s->have |= (uint8_t)(1u << k);
		else
			s->bad |= (uint8_t)(1u << k);
	}
	return s->have & (1u << k) ? d + (size_t)k * PAGE_CACHE_PAGE : NULL;
}

int page_cache__read(struct page_cache *c, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;

	c->st.reads++;
	if (addr + len < addr)
		return -1;
	while (len) {
		uint64_t page = addr & ~(uint64_t)(PAGE_CACHE_PAGE - 1), off = addr - page;
		size_t take = PAGE_CACHE_PAGE - off < len ? (size_t)(PAGE_CACHE_PAGE - off) : len;
		const uint8_t *d = page_at(c, page);

		if (!d)
			return -1;
		memcpy(out, d + off, take);
		out += take;
		addr += take;
		len -= take;
	}
	return 0;
}

const struct page_cache_stats *page_cache__stats(const struct page_cache *c)
{
	return &c->st;
}
