// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/mem_ledger.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"
#include "record/page_set.h"

#define PAGE 4096ULL

/* Where sampled memory grew: its labels and stack, in one process (its
 * serial). Kept for the recording (frame ids outlive an interval's
 * profile; stack ids do not). */
struct site {
	struct sample_labels labels;
	uint64_t held;  /* points */
	uint64_t peak;  /* points held at its process's last high-water mark (held, unless dirty) */
	uint32_t owner; /* its process's serial */
	bool dirty;     /* held changed since that mark: in its process's dirty list */
	uint32_t nframes;
	uint32_t frames[];
};

/* What the ledger keeps of a process beside its struct mem_proc (by the same index). */
struct proc_state {
	struct page_set pages;  /* its sampled pages held */
	struct page_set ending; /* ... given back as it ended (still held: see release_ending) */
	uint32_t *dirty;        /* sites changed since its last high-water mark */
	size_t ndirty, dirty_cap;
	uint64_t held; /* points, in pages and ending */
	uint64_t mark; /* the most it held at once since the last tidy */
	uint32_t serial;
	bool let_go; /* ended, and what it held was let go (after being shown) */
};

struct mem_ledger {
	struct hashmap *site_ids; /* labels + owner + frames → index in sites */
	struct site **sites;      /* NULL: a free slot, its index in free_sites */
	size_t nsites, sites_cap;
	uint32_t *free_sites;
	size_t nfree, free_cap;
	uint64_t held;
	struct hashmap *proc_ids; /* pid → index in procs (its latest process) */
	struct mem_proc *procs;
	struct proc_state *ps; /* beside procs, by the same index */
	size_t nprocs, procs_cap, ps_cap;
	size_t nended;        /* of procs, those that ended */
	uint32_t serials;     /* the last serial given to a process */
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

static void proc_state__free(struct proc_state *ps)
{
	page_set__free(&ps->pages);
	page_set__free(&ps->ending);
	free(ps->dirty);
	ps->dirty = NULL;
	ps->ndirty = ps->dirty_cap = 0;
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
		proc_state__free(&m->ps[i]);
	free(m->ps);
	free(m->procs);
	free(m->key_buf);
	free(m);
}

/* pid's record; a new one when it has none, or (`again`) when the pid's
 * last process ended: a pid seen again is another process's, whose figures
 * (and sites) are its own (the ended one keeps its line in the summary,
 * and what it held at its end). */
static size_t proc_index(struct mem_ledger *m, uint32_t pid, uint32_t comm, bool again)
{
	bool created;
	uint64_t *v = hashmap__put(m->proc_ids, &pid, sizeof(pid), &created);

	if (created || (again && m->procs[*v].exited)) {
		xgrow(&m->procs, &m->procs_cap, m->nprocs + 1, sizeof(*m->procs));
		xgrow(&m->ps, &m->ps_cap, m->nprocs + 1, sizeof(*m->ps));
		m->procs[m->nprocs] = (struct mem_proc){ .pid = pid, .comm = comm };
		m->ps[m->nprocs] = (struct proc_state){ .serial = ++m->serials };
		*v = m->nprocs++;
	}
	if (comm)
		m->procs[*v].comm = comm;
	return (size_t)*v;
}

/* The running process pid's index, or -1 (none known, or its last ended:
 * what a new process of that pid gives back it grew unseen). */
static long running_index(const struct mem_ledger *m, uint32_t pid)
{
	uint64_t *v = hashmap__get(m->proc_ids, &pid, sizeof(pid));

	return v && !m->procs[*v].exited ? (long)*v : -1;
}

/* A site's key (labels, owner, then frames) in m->key_buf; its length in bytes. */
static size_t site_key(struct mem_ledger *m, const struct sample_labels *l, uint32_t owner, const uint32_t *frames,
		       uint32_t n)
{
	size_t lw = sizeof(*l) / sizeof(uint32_t), words = lw + 1 + n;

	xgrow(&m->key_buf, &m->key_cap, words, sizeof(*m->key_buf));
	memcpy(m->key_buf, l, sizeof(*l));
	m->key_buf[lw] = owner;
	if (n)
		memcpy(m->key_buf + lw + 1, frames, (size_t)n * sizeof(*frames));
	return words * sizeof(uint32_t);
}

static uint32_t site_of(struct mem_ledger *m, const struct sample_labels *l, uint32_t owner, const uint32_t *frames,
			uint32_t n)
{
	size_t len = site_key(m, l, owner, frames, n); /* first: it may move key_buf */
	bool created;
	uint64_t *v = hashmap__put(m->site_ids, m->key_buf, len, &created);

	if (created) {
		struct site *s = xcalloc(1, sizeof(*s) + (size_t)n * sizeof(*frames));

		s->labels = *l;
		s->owner = owner;
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

/* Sites that hold nothing, held nothing at their process's mark and are in
 * no dirty list are forgotten (a long recording of a busy host sees stacks
 * come and go): their slots are reused. */
static void forget_empty_sites(struct mem_ledger *m)
{
	for (size_t i = 0; i < m->nsites; i++) {
		struct site *s = m->sites[i];

		if (!s || s->held || s->peak || s->dirty)
			continue;
		size_t len = site_key(m, &s->labels, s->owner, s->frames, s->nframes); /* first: it may move key_buf */

		hashmap__remove(m->site_ids, m->key_buf, len);
		free(s);
		m->sites[i] = NULL;
		xgrow(&m->free_sites, &m->free_cap, m->nfree + 1, sizeof(*m->free_sites));
		m->free_sites[m->nfree++] = (uint32_t)i;
	}
}

/* Site si's held is about to change in its process ps: noted, once, for the next mark. */
static void touch(struct mem_ledger *m, struct proc_state *ps, uint32_t si)
{
	struct site *s = m->sites[si];

	if (s->dirty)
		return;
	s->dirty = true;
	xgrow(&ps->dirty, &ps->dirty_cap, ps->ndirty + 1, sizeof(*ps->dirty));
	ps->dirty[ps->ndirty++] = si;
}

/* Each site of ps changed since its last mark takes what it holds now as its peak. */
static void mark_now(struct mem_ledger *m, struct proc_state *ps)
{
	for (size_t i = 0; i < ps->ndirty; i++) {
		struct site *s = m->sites[ps->dirty[i]];

		s->peak = s->held;
		s->dirty = false;
	}
	ps->ndirty = 0;
	ps->mark = ps->held;
}

/* A sampled page of the process at index pi goes: off its site and the
 * process's held, and (`counted`) into what it gave back. A page's value
 * (struct page_set's) is its site's index << 32 | its points. */
static void drop_page(struct mem_ledger *m, size_t pi, uint64_t value, bool counted)
{
	uint64_t points = value & 0xffffffffu;
	uint32_t si = (uint32_t)(value >> 32);

	touch(m, &m->ps[pi], si);
	m->sites[si]->held -= points;
	m->held -= points;
	m->ps[pi].held -= points;
	if (counted)
		m->procs[pi].returned += points;
}

struct dropping {
	struct mem_ledger *m;
	size_t pi;
	bool counted;
	uint64_t points;
};

static void drop_one(void *ctx, const struct page *pg)
{
	struct dropping *d = ctx;

	drop_page(d->m, d->pi, pg->value, d->counted);
	d->points += pg->value & 0xffffffffu;
}

/* The process at index pi gives back its sampled pages in [start, end)
 * (from the page start is in), those held and those it gave back as it
 * ended; the points of the latter. */
static uint64_t release_at(struct mem_ledger *m, size_t pi, uint64_t start, uint64_t end)
{
	struct dropping d = { m, pi, true, 0 };

	page_set__take(&m->ps[pi].ending, start & ~(PAGE - 1), end, drop_one, &d);
	uint64_t ending = d.points;

	m->procs[pi].ending -= ending;
	page_set__take(&m->ps[pi].pages, start & ~(PAGE - 1), end, drop_one, &d);
	return ending;
}

void mem_ledger__grow(struct mem_ledger *m, const struct sample_labels *l, uint64_t addr, uint32_t points,
		      const uint32_t *frames, uint32_t nframes)
{
	struct proc_state *ps;
	struct mem_proc *pr;
	struct page *pg;
	uint32_t site;
	bool created;

	if (!points) /* a page that holds no point stands for nothing (and would keep an empty stack's slot) */
		return;
	size_t pi = proc_index(m, l->pid, l->comm, true);

	site = site_of(m, l, m->ps[pi].serial, frames, nframes);
	addr &= ~(PAGE - 1);
	if (m->ps[pi].ending.n) /* given back unseen, since it "ended": it had not */
		release_at(m, pi, addr, addr + PAGE);
	ps = &m->ps[pi];
	pr = &m->procs[pi];
	pg = page_set__at(&ps->pages, addr, &created);
	if (!created) /* sampled before and not given back since: given back unseen (a mapping replaced) */
		drop_page(m, pi, pg->value, true);
	pg->value = (uint64_t)site << 32 | points;
	touch(m, ps, site);
	m->sites[site]->held += points;
	m->held += points;
	ps->held += points;
	pr->grown += points;
	if (ps->held > ps->mark)
		mark_now(m, ps);
	if (pr->grown - pr->returned > pr->peak)
		pr->peak = pr->grown - pr->returned;
}

/* The end of a range, kept within the address space (a hostile length wraps). */
static uint64_t range_end(uint64_t start, uint64_t len)
{
	return start + len < start ? UINT64_MAX : start + len;
}

void mem_ledger__release(struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t len)
{
	long pi = running_index(m, pid);

	if (pi >= 0)
		release_at(m, (size_t)pi, start, range_end(start, len));
}

bool mem_ledger__holds(const struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t len)
{
	long pi = running_index(m, pid);

	return pi >= 0 && page_set__any(&m->ps[pi].pages, start & ~(PAGE - 1), range_end(start, len));
}

struct ending {
	struct mem_ledger *m;
	size_t pi;
};

static void keep_ending(void *ctx, const struct page *pg)
{
	struct ending *e = ctx;
	bool created;
	struct page *to = page_set__at(&e->m->ps[e->pi].ending, pg->addr, &created);

	if (!created) /* cannot be: a page is in one of the two sets */
		drop_page(e->m, e->pi, to->value, true);
	to->value = pg->value;
	e->m->procs[e->pi].ending += pg->value & 0xffffffffu;
}

void mem_ledger__release_ending(struct mem_ledger *m, uint32_t pid, uint64_t start, uint64_t len)
{
	long pi = running_index(m, pid);
	struct ending e = { m, (size_t)pi };

	if (pi >= 0)
		page_set__take(&m->ps[pi].pages, start & ~(PAGE - 1), range_end(start, len), keep_ending, &e);
}

void mem_ledger__settle(struct mem_ledger *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		struct dropping d = { m, i, true, 0 };

		if (m->procs[i].exited || !m->ps[i].ending.n)
			continue;
		page_set__take(&m->ps[i].ending, 0, UINT64_MAX, drop_one, &d);
		m->procs[i].ending -= d.points;
	}
}

void mem_ledger__forget(struct mem_ledger *m, uint32_t pid)
{
	long pi = running_index(m, pid);

	if (pi >= 0)
		release_at(m, (size_t)pi, 0, UINT64_MAX);
}

/* The ended processes whose serials are in `gone` let go of what they held
 * at their end (it was shown, or they are forgotten): their pages leave
 * what is held, uncounted (they did not give them back), and their sites
 * their peaks. One walk of the sites for all of them. */
static void let_go(struct mem_ledger *m, struct hashmap *gone)
{
	if (!hashmap__size(gone))
		return;
	for (size_t i = 0; i < m->nprocs; i++) {
		struct proc_state *ps = &m->ps[i];

		if (ps->let_go || !hashmap__get(gone, &ps->serial, sizeof(ps->serial)))
			continue;
		struct dropping d = { m, i, false, 0 };

		page_set__take(&ps->pages, 0, UINT64_MAX, drop_one, &d);
		page_set__take(&ps->ending, 0, UINT64_MAX, drop_one, &d);
		proc_state__free(ps); /* and its dirty list: its sites are cleaned below */
		ps->held = ps->mark = 0;
		ps->let_go = true;
	}
	for (size_t i = 0; i < m->nsites; i++) {
		struct site *s = m->sites[i];

		if (s && hashmap__get(gone, &s->owner, sizeof(s->owner))) {
			s->peak = 0;
			s->dirty = false;
		}
	}
}

static int by_less_growth(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Past MEM_LEDGER_PROCS_MAX processes (a busy host's short-lived ones), the
 * ended processes that grew least are summed into rest and forgotten (what
 * they held at their end with them) until half that many are left, the
 * running ones all kept: what a recording of a host keeps grows with the
 * processes running, not with all it sees.
 */
static void forget_ended(struct mem_ledger *m)
{
	uint64_t *ended = xcalloc(m->nprocs, sizeof(*ended)); /* their growth */
	size_t nended = 0, keep = 0, drop;
	struct hashmap *gone;
	uint64_t cut;

	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].exited)
			ended[nended++] = m->procs[i].grown;
	drop = m->nprocs - MEM_LEDGER_PROCS_MAX / 2 < nended ? m->nprocs - MEM_LEDGER_PROCS_MAX / 2 : nended;
	if (!drop) {
		free(ended);
		return;
	}
	qsort(ended, nended, sizeof(*ended), by_less_growth);
	cut = ended[drop - 1]; /* those that grew less, and enough of those that grew as much */
	size_t at_cut = 0;

	for (size_t i = 0; i < drop; i++)
		at_cut += ended[i] == cut;
	gone = hashmap__new();
	for (size_t i = 0; i < m->nprocs; i++) {
		struct mem_proc *p = &m->procs[i];
		bool created;

		if (p->exited && (p->grown < cut || (p->grown == cut && at_cut && at_cut--)))
			*hashmap__put(gone, &m->ps[i].serial, sizeof(m->ps[i].serial), &created) = 1;
	}
	let_go(m, gone);
	hashmap__free(m->proc_ids);
	m->proc_ids = hashmap__new();
	for (size_t i = 0; i < m->nprocs; i++) {
		struct mem_proc *p = &m->procs[i];
		bool created;

		if (hashmap__get(gone, &m->ps[i].serial, sizeof(m->ps[i].serial))) {
			m->rest.grown += p->grown;
			m->rest.returned += p->returned;
			m->rest.ending += p->ending;
			if (p->peak > m->rest.peak)
				m->rest.peak = p->peak;
			m->nrest++;
			proc_state__free(&m->ps[i]);
			continue;
		}
		m->procs[keep] = *p;
		m->ps[keep] = m->ps[i];
		/* A pid's latest process: its running one, else the one that ended last (seen last). */
		*hashmap__put(m->proc_ids, &p->pid, sizeof(p->pid), &created) = keep++;
	}
	m->nprocs = keep;
	m->nended -= drop;
	hashmap__free(gone);
	free(ended);
}

void mem_ledger__exited(struct mem_ledger *m, uint32_t pid)
{
	long pi = running_index(m, pid);

	if (pi < 0)
		return;
	m->nended++;
	m->procs[pi].exited = true;
	/* Enough ended ones to forget that the walk pays for itself (not at every exit of a host whose
	 * running processes alone pass the bound). */
	if (m->nprocs > MEM_LEDGER_PROCS_MAX && m->nended >= MEM_LEDGER_PROCS_MAX / 4)
		forget_ended(m);
}

void mem_ledger__tidy(struct mem_ledger *m)
{
	struct hashmap *gone = hashmap__new();
	bool created;

	for (size_t i = 0; i < m->nprocs; i++) {
		if (m->procs[i].exited && !m->ps[i].let_go)
			*hashmap__put(gone, &m->ps[i].serial, sizeof(m->ps[i].serial), &created) = 1;
		else if (!m->procs[i].exited)
			mark_now(m, &m->ps[i]); /* the next peak is the next interval's */
	}
	let_go(m, gone);
	hashmap__free(gone);
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
	uint64_t end = range_end(start, len);
	long li = running_index(m, pid);
	struct moving mv = { 0 };
	size_t pi;

	if (end <= start || li < 0)
		return;
	pi = (size_t)li;
	if (to == start) { /* resized where it is: what is past its new end went back */
		if (to_len < len)
			release_at(m, pi, start + to_len, end);
		return;
	}
	/* Moved: whatever was mapped where it went was unmapped first (MREMAP_FIXED). */
	release_at(m, pi, to, range_end(to, to_len));
	{
		struct dropping d = { m, pi, true, 0 }; /* it "ended", yet moves memory: it runs */

		page_set__take(&m->ps[pi].ending, start & ~(PAGE - 1), end, drop_one, &d);
		m->procs[pi].ending -= d.points;
	}
	page_set__take(&m->ps[pi].pages, start & ~(PAGE - 1), end, collect_page, &mv);
	for (size_t i = 0; i < mv.n; i++) {
		uint64_t off = mv.v[i].addr - start, addr = to + off;
		struct page *pg;
		bool created;

		if (off >= to_len || addr < to) { /* cut off by a shrink (or a wrap) */
			drop_page(m, pi, mv.v[i].value, true);
			continue;
		}
		pg = page_set__at(&m->ps[pi].pages, addr, &created);
		if (!created)
			drop_page(m, pi, pg->value, true);
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

void mem_ledger__peak(const struct mem_ledger *m, mem_held_fn fn, void *ctx)
{
	for (size_t i = 0; i < m->nsites; i++)
		if (m->sites[i] && m->sites[i]->peak)
			fn(ctx, &m->sites[i]->labels, m->sites[i]->frames, m->sites[i]->nframes, m->sites[i]->peak);
}

uint32_t *mem_ledger__requests(const struct mem_ledger *m, size_t *n)
{
	uint32_t *ids = xcalloc(m->nsites + 1, sizeof(*ids));

	*n = m->nsites;
	for (size_t i = 0; i < m->nsites; i++)
		ids[i] = m->sites[i] ? m->sites[i]->labels.request : 0;
	return ids;
}

void mem_ledger__renumber_requests(struct mem_ledger *m, const uint32_t *ids)
{
	/* A site's key holds its labels: made again for every site, since
	 * old and new ids overlap. Distinct requests stay distinct (each is
	 * made again from its own strings), so no two sites become one. */
	hashmap__free(m->site_ids);
	m->site_ids = hashmap__new();
	for (size_t i = 0; i < m->nsites; i++) {
		struct site *s = m->sites[i];
		bool created;

		if (!s)
			continue;
		s->labels.request = ids[i];
		size_t len = site_key(m, &s->labels, s->owner, s->frames, s->nframes); /* first: it may move key_buf */

		*hashmap__put(m->site_ids, m->key_buf, len, &created) = i;
	}
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
