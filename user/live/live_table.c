// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "live/live_table.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "write/top.h"
#include "base/util.h"

/* One thread's function (or line) in one of the two kinds of rows. */
struct cell {
	char *name;
	uint32_t func_len;
	uint32_t pid, tid;
	bool by_line;
	struct live_counts now, all;
};

struct live_table {
	struct cell *cells;
	size_t ncells, cells_cap;
	struct hashmap *cell_of; /* (by_line, pid, tid, name) → cell */
	struct live_thread *threads;
	size_t nthreads, threads_cap;
	struct hashmap *thread_of; /* (pid << 32 | tid) → thread */
	uint64_t intervals;
	bool wall;
};

struct live_table *live_table__new(void)
{
	struct live_table *t = xcalloc(1, sizeof(*t));

	t->cell_of = hashmap__new();
	t->thread_of = hashmap__new();
	return t;
}

void live_table__free(struct live_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->ncells; i++)
		free(t->cells[i].name);
	for (size_t i = 0; i < t->nthreads; i++) {
		free(t->threads[i].comm);
		free(t->threads[i].thread);
	}
	free(t->cells);
	free(t->threads);
	hashmap__free(t->cell_of);
	hashmap__free(t->thread_of);
	free(t);
}

static void counts_add(struct live_counts *c, const struct top_row *r)
{
	c->self += r->self;
	c->total += r->total;
	for (int i = 0; i < OFFCPU__COUNT; i++)
		c->by_reason[i] += r->by_reason[i];
}

static struct cell *cell_of(struct live_table *t, bool by_line, const struct top_row *r)
{
	size_t len = strlen(r->name), klen = 9 + len;
	char stack_key[512], *key = klen <= sizeof(stack_key) ? stack_key : xmalloc(klen);
	bool created;
	uint64_t *v;

	key[0] = (char)by_line;
	memcpy(key + 1, &r->pid, 4);
	memcpy(key + 5, &r->tid, 4);
	memcpy(key + 9, r->name, len);
	v = hashmap__put(t->cell_of, key, klen, &created);
	if (key != stack_key)
		free(key);
	if (created) {
		xgrow(&t->cells, &t->cells_cap, t->ncells + 1, sizeof(*t->cells));
		t->cells[t->ncells] = (struct cell){ .name = xstrdup(r->name),
						     .func_len = r->func_len,
						     .pid = r->pid,
						     .tid = r->tid,
						     .by_line = by_line };
		*v = t->ncells++;
	}
	return &t->cells[*v];
}

/* Names can change (a thread renamed, an exec): the latest wins. */
static void set_name(char **dst, const char *name)
{
	if (*dst && !strcmp(*dst, name))
		return;
	free(*dst);
	*dst = xstrdup(name);
}

static int cmp_thread(const void *a, const void *b)
{
	const struct live_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void add_threads(struct live_table *t, const struct profile *p)
{
	struct profile_entry e;
	size_t pos = 0;
	bool added = false;

	while (profile__next(p, &pos, &e)) {
		uint64_t key = (uint64_t)e.labels.pid << 32 | e.labels.tid, *v;
		bool created;
		struct live_thread *th;

		v = hashmap__put(t->thread_of, &key, sizeof(key), &created);
		if (created) {
			xgrow(&t->threads, &t->threads_cap, t->nthreads + 1, sizeof(*t->threads));
			t->threads[t->nthreads] = (struct live_thread){ .pid = e.labels.pid, .tid = e.labels.tid };
			*v = t->nthreads++;
			added = true;
		}
		th = &t->threads[*v];
		set_name(&th->comm, profile__str_at(p, e.labels.comm));
		set_name(&th->thread, profile__str_at(p, e.labels.thread));
		th->now += e.count;
		th->all += e.count;
	}
	if (!added)
		return;
	/* Kept by pid and tid (the filters cycle in that order): the index moves. */
	qsort(t->threads, t->nthreads, sizeof(*t->threads), cmp_thread);
	for (size_t i = 0; i < t->nthreads; i++) {
		uint64_t key = (uint64_t)t->threads[i].pid << 32 | t->threads[i].tid;
		bool created;

		*hashmap__put(t->thread_of, &key, sizeof(key), &created) = i;
	}
}

void live_table__add(struct live_table *t, const struct profile *p)
{
	for (size_t i = 0; i < t->ncells; i++)
		t->cells[i].now = (struct live_counts){ 0 };
	for (size_t i = 0; i < t->nthreads; i++)
		t->threads[i].now = 0;
	for (int by_line = 0; by_line < 2; by_line++) {
		struct top_opts o = { .by_line = by_line, .per_thread = true };
		size_t n;
		struct top_row *rows = top__rows_opts(p, &o, &n);

		for (size_t i = 0; i < n; i++) {
			struct cell *c = cell_of(t, by_line, &rows[i]);

			counts_add(&c->now, &rows[i]);
			counts_add(&c->all, &rows[i]);
		}
		top__free(rows, n);
	}
	add_threads(t, p);
	t->wall = t->wall || profile__meta_of(p)->wall;
	t->intervals++;
}

uint64_t live_table__intervals(const struct live_table *t)
{
	return t->intervals;
}

bool live_table__wall(const struct live_table *t)
{
	return t->wall;
}

static bool picked(const struct live_view *v, uint32_t pid, uint32_t tid)
{
	return (!v->pid || v->pid == pid) && (!v->tid || v->tid == tid);
}

static void counts_sum(struct live_counts *dst, const struct live_counts *src)
{
	dst->self += src->self;
	dst->total += src->total;
	for (int i = 0; i < OFFCPU__COUNT; i++)
		dst->by_reason[i] += src->by_reason[i];
}

static uint64_t sort_key(const struct live_row *r, enum live_sort s, bool since_start)
{
	const struct live_counts *c = since_start ? &r->all : &r->now;

	return s == LIVE_SORT_TOTAL ? c->total : c->self;
}

/* qsort has no context: the view being sorted. */
static const struct live_view *sorting;

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int cmp_row(const void *a, const void *b)
{
	const struct live_row *x = a, *y = b;
	enum live_sort other = sorting->sort == LIVE_SORT_SELF ? LIVE_SORT_TOTAL : LIVE_SORT_SELF;
	int c;

	if ((c = cmp_u64(sort_key(x, sorting->sort, sorting->since_start),
			 sort_key(y, sorting->sort, sorting->since_start))))
		return c;
	/* Equal totals: callers (less self) above their callees, as in the stack;
	 * equal self: the larger total first. */
	if ((c = cmp_u64(sort_key(x, other, sorting->since_start), sort_key(y, other, sorting->since_start))))
		return sorting->sort == LIVE_SORT_TOTAL ? -c : c;
	/* Then the other period's numbers, so ties keep a steady order. */
	if ((c = cmp_u64(sort_key(x, sorting->sort, !sorting->since_start),
			 sort_key(y, sorting->sort, !sorting->since_start))))
		return c;
	return strcmp(x->name, y->name);
}

struct live_row *live_table__view(const struct live_table *t, const struct live_view *v, size_t *n,
				  struct live_totals *tot)
{
	struct hashmap *row_of = hashmap__new();
	struct live_row *rows = xcalloc(t->ncells + 1, sizeof(*rows)); /* at most a row per cell */

	*n = 0;
	*tot = (struct live_totals){ 0 };
	for (size_t i = 0; i < t->ncells; i++) {
		const struct cell *c = &t->cells[i];
		bool created;
		uint64_t *slot;

		if (c->by_line != v->by_line || !picked(v, c->pid, c->tid))
			continue;
		slot = hashmap__put(row_of, c->name, strlen(c->name), &created);
		if (created) {
			rows[*n] = (struct live_row){ .name = c->name, .func_len = c->func_len };
			*slot = (*n)++;
		}
		counts_sum(&rows[*slot].now, &c->now);
		counts_sum(&rows[*slot].all, &c->all);
	}
	hashmap__free(row_of);
	for (size_t i = 0; i < t->nthreads; i++)
		if (picked(v, t->threads[i].pid, t->threads[i].tid)) {
			tot->now += t->threads[i].now;
			tot->all += t->threads[i].all;
		}
	for (size_t i = 0; i < *n; i++)
		for (int r = 0; r < OFFCPU__COUNT; r++)
			if (rows[i].all.by_reason[r])
				tot->reasons |= 1u << r;
	if (*n) {
		sorting = v;
		qsort(rows, *n, sizeof(*rows), cmp_row);
		sorting = NULL;
	}
	return rows;
}

const struct live_thread *live_table__threads(const struct live_table *t, size_t *n)
{
	*n = t->nthreads;
	return t->threads;
}

const struct live_thread *live_table__thread(const struct live_table *t, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid, *v = hashmap__get(t->thread_of, &key, sizeof(key));

	return v ? &t->threads[*v] : NULL;
}

uint32_t live_table__next_pid(const struct live_table *t, uint32_t pid)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].pid > pid)
			return t->threads[i].pid;
	return 0;
}

uint32_t live_table__next_tid(const struct live_table *t, uint32_t pid, uint32_t tid)
{
	bool past = !tid;

	for (size_t i = 0; i < t->nthreads; i++) {
		const struct live_thread *th = &t->threads[i];

		if (pid && th->pid != pid)
			continue;
		if (past)
			return th->tid;
		past = th->tid == tid;
	}
	return 0;
}
