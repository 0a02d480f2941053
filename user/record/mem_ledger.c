// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/mem_ledger.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"

#define PAGE 4096ULL

/* Where sampled memory grew: its labels and stack. Kept for the recording
 * (frame ids outlive an interval's profile; stack ids do not). */
struct site {
	struct sample_labels labels;
	uint64_t held; /* points */
	uint32_t nframes;
	uint32_t frames[];
};

/* A sampled page: its process and address. */
struct page_key {
	uint32_t pid;
	uint32_t zero; /* hashed as bytes: no padding */
	uint64_t addr;
};

struct mem_ledger {
	struct hashmap *site_ids; /* labels + frames → index in sites */
	struct site **sites;      /* NULL: a free slot, its index in free_sites */
	size_t nsites, sites_cap;
	uint32_t *free_sites;
	size_t nfree, free_cap;
	/* page_key → site index << 32 | points */
	struct hashmap *pages;
	uint64_t held;
	struct hashmap *proc_ids; /* pid → index in procs */
	struct mem_proc *procs;
	size_t nprocs, procs_cap;
	uint32_t *key_buf; /* a site's key being built */
	size_t key_cap;
};

struct mem_ledger *mem_ledger__new(void)
{
	struct mem_ledger *m = xcalloc(1, sizeof(*m));

	m->site_ids = hashmap__new();
	m->pages = hashmap__new();
	m->proc_ids = hashmap__new();
	return m;
}

void mem_ledger__free(struct mem_ledger *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nsites; i++)
		free(m->sites[i]);
	free(m->sites);
	free(m->free_sites);
	hashmap__free(m->site_ids);
	hashmap__free(m->pages);
	hashmap__free(m->proc_ids);
	free(m->procs);
	free(m->key_buf);
	free(m);
}

static struct mem_proc *proc_of(struct mem_ledger *m, uint32_t pid, uint32_t comm)
{
	bool created;
	uint64_t *v = hashmap__put(m->proc_ids, &pid, sizeof(pid), &created);

	if (created) {
		xgrow(&m->procs, &m->procs_cap, m->nprocs + 1, sizeof(*m->procs));
		m->procs[m->nprocs] = (struct mem_proc){ .pid = pid, .comm = comm };
		*v = m->nprocs++;
	}
	if (comm)
		m->procs[*v].comm = comm;
	return &m->procs[*v];
}

/* A site's key (labels, then frames) in m->key_buf; its length in bytes. */
static size_t site_key(struct mem_ledger *m, const struct sample_labels *l, const uint32_t *frames, uint32_t n)
{
	size_t words = sizeof(*l) / sizeof(uint32_t) + n;

	xgrow(&m->key_buf, &m->key_cap, words, sizeof(*m->key_buf));
	memcpy(m->key_buf, l, sizeof(*l));
	if (n)
		memcpy(m->key_buf + sizeof(*l) / sizeof(uint32_t), frames, (size_t)n * sizeof(*frames));
	return words * sizeof(uint32_t);
}

static uint32_t site_of(struct mem_ledger *m, const struct sample_labels *l, const uint32_t *frames, uint32_t n)
{
	size_t len = site_key(m, l, frames, n); /* first: it may move key_buf */
	bool created;
	uint64_t *v = hashmap__put(m->site_ids, m->key_buf, len, &created);

	if (created) {
		struct site *s = xcalloc(1, sizeof(*s) + (size_t)n * sizeof(*frames));

		s->labels = *l;
		s->nframes = n;
		if (n)
			memcpy(s->frames, frames, (size_t)n * sizeof(*frames));
		if (m->nfree) {
			*v = m->free_sites[--m->nfree];
		} else {
			xgrow(&m->sites, &m->sites_cap, m->nsites + 1, sizeof(*m->sites));
			*v = m->nsites++;
		}
		m->sites[*v] = s;
	}
	return (uint32_t)*v;
}

/* Sites that hold nothing are forgotten (a long recording of a busy host
 * sees stacks come and go): their slots are reused. */
static void forget_empty_sites(struct mem_ledger *m)
{
	for (size_t i = 0; i < m->nsites; i++) {
		struct site *s = m->sites[i];

		if (!s || s->held)
			continue;
		size_t len = site_key(m, &s->labels, s->frames, s->nframes); /* first: it may move key_buf */

		hashmap__remove(m->site_ids, m->key_buf, len);
		free(s);
		m->sites[i] = NULL;
		xgrow(&m->free_sites, &m->free_cap, m->nfree + 1, sizeof(*m->free_sites));
		m->free_sites[m->nfree++] = (uint32_t)i;
	}
}

/* A sampled page given back: off its site and its process. */
static void give_back(struct mem_ledger *m, uint32_t pid, uint64_t value)
{
	uint64_t points = value & 0xffffffffu;

	m->sites[value >> 32]->held -= points;
	m->held -= points;
	proc_of(m, pid, 0)->returned += points;
}

static void release(struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t end, bool all);

void mem_ledger__grow(struct mem_ledger *m, const struct sample_labels *l, uint64_t addr, uint32_t points,
		      const uint32_t *frames, uint32_t nframes)
{
	struct page_key k = { .pid = l->pid, .addr = addr & ~(PAGE - 1) };
	uint32_t site;
	struct mem_proc *pr;
	bool created;
	uint64_t *v;

	if (!points) /* a page that holds no point stands for nothing (and would keep an empty stack's slot) */
		return;
	site = site_of(m, l, frames, nframes);
	pr = proc_of(m, l->pid, l->comm);

	pr->exited = false; /* a pid seen again: another process's now */
	v = hashmap__put(m->pages, &k, sizeof(k), &created);

	if (!created)
		give_back(m, l->pid, *v);
	*v = (uint64_t)site << 32 | points;
	m->sites[site]->held += points;
	m->held += points;
	pr->grown += points;
	if (pr->grown - pr->returned > pr->peak)
		pr->peak = pr->grown - pr->returned;
}

/* Every sampled page of pid in [start, end) (all of pid's when all): into *keys, n of them. */
static size_t pages_in(const struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t end, bool all,
		       struct page_key **keys)
{
	size_t n = 0, cap = 0, pos = 0, klen;
	const void *key;
	uint64_t value;

	*keys = NULL;
	/* A range of few pages is looked up page by page; a larger one than
	 * the ledger holds pages is found by going through them all. */
	if (!all && (end - start) / PAGE <= 4 * hashmap__size(m->pages)) {
		uint64_t first = start & ~(PAGE - 1), pages = (end - first) / PAGE + ((end - first) % PAGE != 0);

		/* Counted, not compared with end: the last page of the address space does not wrap to 0. */
		for (uint64_t i = 0; i < pages; i++) {
			struct page_key k = { .pid = pid, .addr = first + i * PAGE };

			if (hashmap__get(m->pages, &k, sizeof(k))) {
				xgrow(keys, &cap, n + 1, sizeof(**keys));
				(*keys)[n++] = k;
			}
		}
		return n;
	}
	while (hashmap__next(m->pages, &pos, &key, &klen, &value)) {
		const struct page_key *k = key;

		if (k->pid == pid && (all || (k->addr >= start && k->addr < end))) {
			xgrow(keys, &cap, n + 1, sizeof(**keys));
			(*keys)[n++] = *k;
		}
	}
	return n;
}

static void release(struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t end, bool all)
{
	struct page_key *keys;
	size_t n;

	if (!hashmap__size(m->pages) || (!all && end <= start))
		return;
	n = pages_in(m, pid, start, end, all, &keys);
	for (size_t i = 0; i < n; i++) {
		uint64_t *v = hashmap__get(m->pages, &keys[i], sizeof(keys[i]));

		give_back(m, pid, *v);
		hashmap__remove(m->pages, &keys[i], sizeof(keys[i]));
	}
	free(keys);
}

/* The end of a range, kept within the address space (a hostile length wraps). */
static uint64_t range_end(uint64_t start, uint64_t len)
{
	return start + len < start ? UINT64_MAX : start + len;
}

void mem_ledger__release(struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t len)
{
	release(m, pid, start, range_end(start, len), false);
}

void mem_ledger__forget(struct mem_ledger *m, uint32_t pid)
{
	if (hashmap__get(m->proc_ids, &pid, sizeof(pid)))
		release(m, pid, 0, 0, true);
}

void mem_ledger__exited(struct mem_ledger *m, uint32_t pid)
{
	uint64_t *v = hashmap__get(m->proc_ids, &pid, sizeof(pid));

	if (!v)
		return;
	release(m, pid, 0, 0, true);
	m->procs[*v].exited = true;
}

void mem_ledger__tidy(struct mem_ledger *m)
{
	forget_empty_sites(m);
}

void mem_ledger__move(struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t len, uint64_t to, uint64_t to_len)
{
	uint64_t end = range_end(start, len);
	struct page_key *keys;
	uint64_t *values;
	size_t n;

	if (!hashmap__size(m->pages) || end <= start)
		return;
	n = pages_in(m, pid, start, end, false, &keys);
	values = xcalloc(n + 1, sizeof(*values));
	/* Out first, then in: the old and new ranges may overlap. */
	for (size_t i = 0; i < n; i++) {
		values[i] = *hashmap__get(m->pages, &keys[i], sizeof(keys[i]));
		hashmap__remove(m->pages, &keys[i], sizeof(keys[i]));
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t off = keys[i].addr - start;
		struct page_key k = { .pid = pid, .addr = to + off };
		bool created;
		uint64_t *v;

		if (off >= to_len || k.addr < to) { /* cut off by a shrink (or a wrap) */
			give_back(m, pid, values[i]);
			continue;
		}
		v = hashmap__put(m->pages, &k, sizeof(k), &created);
		if (!created)
			give_back(m, pid, *v);
		*v = values[i];
	}
	free(values);
	free(keys);
}

void mem_ledger__held(const struct mem_ledger *m, mem_held_fn fn, void *ctx)
{
	for (size_t i = 0; i < m->nsites; i++)
		if (m->sites[i] && m->sites[i]->held)
			fn(ctx, &m->sites[i]->labels, m->sites[i]->frames, m->sites[i]->nframes, m->sites[i]->held);
}

uint64_t mem_ledger__held_points(const struct mem_ledger *m)
{
	return m->held;
}

const struct mem_proc *mem_ledger__procs(const struct mem_ledger *m, size_t *n)
{
	*n = m->nprocs;
	return m->procs;
}
