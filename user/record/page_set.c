// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/page_set.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

struct page_chunk {
	size_t n;
	struct page v[PAGE_SET_CHUNK];
};

void page_set__free(struct page_set *s)
{
	for (size_t i = 0; i < s->nc; i++)
		free(s->c[i]);
	free(s->c);
	*s = (struct page_set){ 0 };
}

/* The first of a chunk's pages at or above addr. */
static size_t lower_bound(const struct page_chunk *ch, uint64_t addr)
{
	size_t lo = 0, hi = ch->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ch->v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The first chunk whose last page is at or above addr; nc when none is. */
static size_t chunk_for(const struct page_set *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nc;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct page_chunk *ch = s->c[mid];

		if (ch->v[ch->n - 1].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A new, empty chunk at index k. */
static struct page_chunk *chunk_insert(struct page_set *s, size_t k)
{
	struct page_chunk *ch = xcalloc(1, sizeof(*ch));

	xgrow(&s->c, &s->cap, s->nc + 1, sizeof(*s->c));
	memmove(s->c + k + 1, s->c + k, (s->nc - k) * sizeof(*s->c));
	s->c[k] = ch;
	s->nc++;
	return ch;
}

struct page *page_set__at(struct page_set *s, uint64_t addr, bool *created)
{
	struct page_chunk *ch;
	size_t k, i;

	*created = false;
	if (!s->nc)
		chunk_insert(s, 0);
	k = s->c[0]->n ? chunk_for(s, addr) : 0; /* chunk_for reads each chunk's last page */
	if (k == s->nc)                          /* above every page: at the end of the last chunk */
		k--;
	ch = s->c[k];
	i = lower_bound(ch, addr);
	if (i < ch->n && ch->v[i].addr == addr)
		return &ch->v[i];
	if (ch->n == PAGE_SET_CHUNK) { /* full: its upper half becomes the next chunk */
		struct page_chunk *up = chunk_insert(s, k + 1);

		up->n = PAGE_SET_CHUNK / 2;
		memcpy(up->v, ch->v + PAGE_SET_CHUNK / 2, up->n * sizeof(*up->v));
		ch->n = PAGE_SET_CHUNK / 2;
		if (i > ch->n) {
			ch = up;
			i -= PAGE_SET_CHUNK / 2;
		}
	}
	memmove(ch->v + i + 1, ch->v + i, (ch->n - i) * sizeof(*ch->v));
	ch->v[i] = (struct page){ .addr = addr };
	ch->n++;
	s->n++;
	*created = true;
	return &ch->v[i];
}

void page_set__take(struct page_set *s, uint64_t start, uint64_t end, page_fn fn, void *ctx)
{
	size_t first = chunk_for(s, start), k, kept;

	if (end <= start || first == s->nc) /* nothing at or above start */
		return;
	for (k = first; k < s->nc; k++) {
		struct page_chunk *ch = s->c[k];
		size_t i = lower_bound(ch, start), j = lower_bound(ch, end), was = ch->n;

		for (size_t x = i; x < j; x++)
			fn(ctx, &ch->v[x]);
		memmove(ch->v + i, ch->v + j, (ch->n - j) * sizeof(*ch->v));
		ch->n -= j - i;
		s->n -= j - i;
		if (j < was) { /* the range ends inside this chunk */
			k++;
			break;
		}
	}
	/* Of the chunks [first, k) it went through, those it emptied go, in
	 * one move of the chunks after them. */
	kept = first;
	for (size_t x = first; x < k; x++) {
		if (s->c[x]->n)
			s->c[kept++] = s->c[x];
		else
			free(s->c[x]);
	}
	memmove(s->c + kept, s->c + k, (s->nc - k) * sizeof(*s->c));
	s->nc -= k - kept;
}

bool page_set__any(const struct page_set *s, uint64_t start, uint64_t end)
{
	size_t k = chunk_for(s, start);

	if (end <= start || k == s->nc)
		return false;
	return s->c[k]->v[lower_bound(s->c[k], start)].addr < end; /* the chunk's last is at or above start */
}
