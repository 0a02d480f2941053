/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A process's sampled pages in address order, each with what it holds:
 * sorted chunks of at most PAGE_SET_CHUNK pages, found by binary search.
 * A page is added or a range taken out at the cost of one chunk's move,
 * not of every page held: a target growing its memory downwards (mmap's
 * arenas) or unmapping in a loop makes pyebpf search, not shift every
 * page it holds at each event.
 *
 * Pure logic: no libbpf, no system calls.
 */
#ifndef PYEBPF_PAGE_SET_H
#define PYEBPF_PAGE_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PAGE_SET_CHUNK 128

struct page {
	uint64_t addr;
	uint64_t value;
};

struct page_chunk;

struct page_set {
	struct page_chunk **c; /* in address order, none empty */
	size_t nc, cap;
	size_t n; /* pages in all */
};

void page_set__free(struct page_set *s); /* empties it */

/* The page at addr, made (value 0) when there is none: *created says which.
 * Valid until the set changes again. */
struct page *page_set__at(struct page_set *s, uint64_t addr, bool *created);

/* Whether the set holds a page in [start, end). */
bool page_set__any(const struct page_set *s, uint64_t start, uint64_t end);

/* The pages in [start, end) out of the set, each passed to fn first. */
typedef void (*page_fn)(void *ctx, const struct page *pg);
void page_set__take(struct page_set *s, uint64_t start, uint64_t end, page_fn fn, void *ctx);

#endif
