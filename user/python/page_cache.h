/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Another process's memory in 16 KiB lines, kept for one walk: a walk of
 * asyncio's tasks reads a dozen fields of each task, its coroutines and its
 * name, most of them near what it has just read (objects of a kind sit side
 * by side in the allocator's 16 KiB pools), and one process_vm_readv per
 * field was most of its cost (1,000 tasks: 60 ms a walk, then 2.2 ms with
 * 4 KiB pages). A line that cannot be read whole (the end of a mapping) is
 * read a page at a time; a page that cannot be read makes the reads on it
 * fail, as a direct read would. Pure: memory comes through a reader callback.
 */
#ifndef PYEBPF_PY_PAGE_CACHE_H
#define PYEBPF_PY_PAGE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define PAGE_CACHE_PAGE 4096UL
#define PAGE_CACHE_LINE (4UL * PAGE_CACHE_PAGE)

/* Reads len bytes at addr: 0, or -1 when it cannot. */
typedef int (*page_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct page_cache_stats {
	uint64_t reads;      /* page_cache__read calls */
	uint64_t page_reads; /* lines (or single pages) read through the reader */
};

struct page_cache;

/* Room for `lines` lines of PAGE_CACHE_LINE bytes. */
struct page_cache *page_cache__new(size_t lines);
void page_cache__free(struct page_cache *c); /* accepts NULL */
/* Forget every page; the next reads go to rd(ctx, ...). */
void page_cache__reset(struct page_cache *c, page_read_fn rd, void *ctx);
/* 0 when all len bytes at addr were read into buf, else -1. */
int page_cache__read(struct page_cache *c, uint64_t addr, void *buf, size_t len);
const struct page_cache_stats *page_cache__stats(const struct page_cache *c);

#endif
