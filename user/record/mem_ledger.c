// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/mem_ledger.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"
#include "record/page_set.h"

#define PAGE 4096ULL

/* Where sampled memory grew: its labels and stack. Kept for the recording
 * (frame ids outlive an interval's profile; stack ids do not). */
struct site {
	struct sample_labels labels;
	uint64_t held; /* points */
	uint32_t nframes;
	uint32_t frames[];
};

struct mem_ledger {
	struct hashmap *site_ids; /* labels + frames → index in sites */
	struct site **sites;      /* NULL: a free slot, its index in free_sites */
	size_t nsites, sites_cap;
	uint32_t *free_sites;
	size_t nfree, free_cap;
	uint64_t held;
	struct hashmap *proc_ids; /* pid → index in procs */
	struct mem_proc *procs;
	struct page_set *proc_pages; /* beside procs, by the same index */
	size_t nprocs, procs_cap, pages_cap;
	size_t nended;        /* of procs, those that ended */
	struct mem_proc rest; /* processes that ended and were forgotten, summed (pid 0) */
	size_t nrest;
	uint32_t *key_buf; /* a site's key being built */
	size_t key_cap;
};

struct mem_ledger *mem_ledger__new(void)
{
	struct mem_ledger *m = xcalloc(1, sizeof(*m));

	m->site_ids = hashmap__new();
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
	hashmap__free(m->proc_ids);
	for (size_t i = 0; i < m->nprocs; i++)
		page_set__free(&m->proc_pages[i]);
	free(m->proc_pages);
	free(m->procs);
	free(m->key_buf);
	free(m);
}

/* pid's record; a new one when it has none, or (`again`) when the pid's
 * last process ended: a pid seen again is another process's, whose figures
 * are its own (the ended one keeps its line in the summary). */
static size_t proc_index(struct mem_ledger *m, uint32_t pid, uint32_t comm, bool again)
{
	bool created;
	uint64_t *v = hashmap__put(m->proc_ids, &pid, sizeof(pid), &created);

	if (created || (again && m->procs[*v].exited)) {
		xgrow(&m->procs, &m->procs_cap, m->nprocs + 1, sizeof(*m->procs));
		xgrow(&m->proc_pages, &m->pages_cap, m->nprocs + 1, sizeof(*m->proc_pages));
		m->procs[m->nprocs] = (struct mem_proc){ .pid = pid, .comm = comm };
		m->proc_pages[m->nprocs] = (struct page_set){ 0 };
		*v = m->nprocs++;
	}
	if (comm)
		m->procs[*v].comm = comm;
	return (size_t)*v;
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

/* A sampled page given back: off its site and its process's record. A
 * page's value (struct page_set's) is its site's index << 32 | its points. */
static void give_back(struct mem_ledger *m, struct mem_proc *pr, uint64_t value)
{
	uint64_t points = value & 0xffffffffu;

	m->sites[value >> 32]->held -= points;
	m->held -= points;
	pr->returned += points;
}

void mem_ledger__grow(struct mem_ledger *m, const struct sample_labels *l, uint64_t addr, uint32_t points,
		      const uint32_t *frames, uint32_t nframes)
{
	uint32_t site;
	struct mem_proc *pr;
	struct page *pg;
	bool created;

	if (!points) /* a page that holds no point stands for nothing (and would keep an empty stack's slot) */
		return;
	site = site_of(m, l, frames, nframes);
	size_t pi = proc_index(m, l->pid, l->comm, true);

	pr = &m->procs[pi];
	pg = page_set__at(&m->proc_pages[pi], addr & ~(PAGE - 1), &created);
	if (!created)
		give_back(m, pr, pg->value);
	pg->value = (uint64_t)site << 32 | points;
	m->sites[site]->held += points;
	m->held += points;
	pr->grown += points;
	if (pr->grown - pr->returned > pr->peak)
		pr->peak = pr->grown - pr->returned;
}

struct giving_back {
	struct mem_ledger *m;
	struct mem_proc *pr;
};

static void give_back_page(void *ctx, const struct page *pg)
{
	struct giving_back *g = ctx;

	give_back(g->m, g->pr, pg->value);
}

/* The process at index pi gives back its sampled pages in [start, end):
 * from the page start is in. */
static void release_at(struct mem_ledger *m, size_t pi, uint64_t start, uint64_t end)
{
	struct giving_back g = { m, &m->procs[pi] };

	page_set__take(&m->proc_pages[pi], start & ~(PAGE - 1), end, give_back_page, &g);
}

/* pid gives back its sampled pages in [start, end), every one when all. */
static void release(struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t end, bool all)
{
	uint64_t *v = hashmap__get(m->proc_ids, &pid, sizeof(pid));

	if (v)
		release_at(m, (size_t)*v, all ? 0 : start, all ? UINT64_MAX : end);
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
	release(m, pid, 0, 0, true);
}

static int by_less_growth(const void *a, const void *b)
{
	const struct mem_proc *x = a, *y = b;

	return x->grown < y->grown ? -1 : x->grown > y->grown;
}

/*
 * Past MEM_LEDGER_PROCS_MAX processes (a busy host's short-lived ones), the
 * ended processes that grew least are summed into rest and forgotten until
 * half that many are left, the running ones all kept: what a recording of
 * a host keeps grows with the processes running, not with all it sees.
 */
static void forget_ended(struct mem_ledger *m)
{
	struct mem_proc *ended = xcalloc(m->nprocs, sizeof(*ended));
	size_t nended = 0, keep = 0, drop;
	uint64_t cut;

	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].exited)
			ended[nended++] = m->procs[i];
	drop = m->nprocs - MEM_LEDGER_PROCS_MAX / 2 < nended ? m->nprocs - MEM_LEDGER_PROCS_MAX / 2 : nended;
	if (!drop) {
		free(ended);
		return;
	}
	qsort(ended, nended, sizeof(*ended), by_less_growth);
	cut = ended[drop - 1].grown; /* those that grew less, and enough of those that grew as much */
	size_t at_cut = 0;

	for (size_t i = 0; i < drop; i++)
		at_cut += ended[i].grown == cut;
	hashmap__free(m->proc_ids);
	m->proc_ids = hashmap__new();
	for (size_t i = 0; i < m->nprocs; i++) {
		struct mem_proc *p = &m->procs[i];
		bool created;

		if (p->exited && (p->grown < cut || (p->grown == cut && at_cut && at_cut--))) {
			m->rest.grown += p->grown;
			m->rest.returned += p->returned;
			if (p->peak > m->rest.peak)
				m->rest.peak = p->peak;
			m->nrest++;
			page_set__free(&m->proc_pages[i]); /* empty: an ended process gave everything back */
			continue;
		}
		m->procs[keep] = *p;
		m->proc_pages[keep] = m->proc_pages[i];
		*hashmap__put(m->proc_ids, &p->pid, sizeof(p->pid), &created) = keep++;
	}
	m->nprocs = keep;
	m->nended -= drop;
	free(ended);
}

void mem_ledger__exited(struct mem_ledger *m, uint32_t pid)
{
	uint64_t *v = hashmap__get(m->proc_ids, &pid, sizeof(pid));

	if (!v)
		return;
	release_at(m, (size_t)*v, 0, UINT64_MAX);
	m->nended += !m->procs[*v].exited;
	m->procs[*v].exited = true;
	/* Enough ended ones to forget that the walk pays for itself (not at every exit of a host whose
	 * running processes alone pass the bound). */
	if (m->nprocs > MEM_LEDGER_PROCS_MAX && m->nended >= MEM_LEDGER_PROCS_MAX / 4)
		forget_ended(m);
}

void mem_ledger__tidy(struct mem_ledger *m)
{
	forget_empty_sites(m);
}

struct moving {
	struct page *v;
	size_t n, cap;
};

static void collect_page(void *ctx, const struct page *pg)
{
	struct moving *mv = ctx;

	xgrow(&mv->v, &mv->cap, mv->n + 1, sizeof(*mv->v));
	mv->v[mv->n++] = *pg;
}

void mem_ledger__move(struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t len, uint64_t to, uint64_t to_len)
{
	uint64_t end = range_end(start, len), *v = hashmap__get(m->proc_ids, &pid, sizeof(pid));
	struct moving mv = { 0 };
	struct mem_proc *pr;
	size_t pi;

	if (end <= start || !v)
		return;
	pi = (size_t)*v;
	pr = &m->procs[pi];
	if (to == start) { /* resized where it is: what is past its new end went back */
		if (to_len < len)
			release_at(m, pi, start + to_len, end);
		return;
	}
	/* Moved: whatever was mapped where it went was unmapped first (MREMAP_FIXED). */
	release_at(m, pi, to, range_end(to, to_len));
	page_set__take(&m->proc_pages[pi], start & ~(PAGE - 1), end, collect_page, &mv);
	for (size_t i = 0; i < mv.n; i++) {
		uint64_t off = mv.v[i].addr - start, addr = to + off;
		struct page *pg;
		bool created;

		if (off >= to_len || addr < to) { /* cut off by a shrink (or a wrap) */
			give_back(m, pr, mv.v[i].value);
			continue;
		}
		pg = page_set__at(&m->proc_pages[pi], addr, &created);
		if (!created)
			give_back(m, pr, pg->value);
		pg->value = mv.v[i].value;
	}
	free(mv.v);
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

const struct mem_proc *mem_ledger__forgotten(const struct mem_ledger *m, size_t *n)
{
	*n = m->nrest;
	return &m->rest;
}
