// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "write/top.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/frame_format.h"
#include "base/hashmap.h"
#include "base/util.h"
#include "base/escape.h"

/* A function's name: Python "qualname (file:first line)" (by_line: the line
 * itself), else the frame as printed; the length of its function part. */
static uint32_t function_name(const struct profile *p, const struct frame *f, bool by_line, char *buf, size_t size)
{
	if (f->kind == FRAME_PYTHON) {
		const char *name = profile__str_at(p, f->name), *file = profile__str_at(p, f->module);
		uint32_t line = by_line && f->line ? f->line : f->start_line;
		int len;

		name = *name ? name : "<unknown>";
		if (line)
			snprintf(buf, size, "%s (%s:%u)", name, file, line);
		else
			snprintf(buf, size, "%s (%s)", name, file);
		len = (int)strlen(name);
		return (uint32_t)(len < (int)strlen(buf) ? len : (int)strlen(buf));
	}
	frame__format(p, f, buf, size);
	if (f->kind == FRAME_KERNEL)
		strncat(buf, "_[k]", size - strlen(buf) - 1);
	return (uint32_t)strlen(buf);
}

static int cmp_row(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Which frame gets the self time. CPU recordings: the leaf. Wall recordings
 * rank Python functions by their own wall time: the innermost Python frame,
 * with the native calls and waits below it (a handler blocked in libc's
 * read() is the handler waiting); a stack without Python frames, off the
 * CPU: the innermost native frame, else where in the kernel it waited.
 */
static uint32_t self_frame(const struct profile *p, const struct profile_entry *e)
{
	uint32_t leaf = e->nframes - 1, last_kernel = leaf, native = UINT32_MAX;

	if (!profile__meta_of(p)->wall)
		return leaf;
	/* A task: the innermost coroutine of its own code, above asyncio's (sleep, Lock.acquire...). */
	if (e->labels.flags & LABEL_TASK) {
		uint32_t py = UINT32_MAX;

		for (uint32_t i = leaf + 1; i-- > 0;) {
			const struct frame *f = profile__frame_at(p, e->frames[i]);
			const char *file = profile__str_at(p, f->module);

			if (f->kind != FRAME_PYTHON)
				continue;
			if (!strstr(file ? file : "", "/asyncio/"))
				return i;
			if (py == UINT32_MAX)
				py = i;
		}
		return py != UINT32_MAX ? py : leaf;
	}
	for (uint32_t i = leaf + 1; i-- > 0;) {
		uint32_t kind = profile__frame_at(p, e->frames[i])->kind;

		if (kind == FRAME_PYTHON)
			return i;
		if (kind == FRAME_KERNEL && last_kernel == leaf)
			last_kernel = i;
		else if (kind != FRAME_MARK && kind != FRAME_KERNEL && native == UINT32_MAX)
			native = i;
	}
	if (!e->labels.offcpu)
		return leaf;
	return native != UINT32_MAX ? native : last_kernel; /* no user frame: where in the kernel it waited */
}

/* A row of one thread's function, by_thread's key. */
struct thread_fn {
	uint32_t pid, tid, fn;
};

/* The row of function fn (of names[]) in the sample's thread, made when new. */
static uint32_t thread_row(struct hashmap *by_thread, struct top_row **rows, size_t *cap, size_t *n,
			   const struct sample_labels *l, uint32_t fn, const struct top_row *names)
{
	struct thread_fn k = { l->pid, l->tid, fn };
	bool created;
	uint64_t *v = hashmap__put(by_thread, &k, sizeof(k), &created);

	if (created) {
		xgrow(rows, cap, *n + 1, sizeof(**rows));
		(*rows)[*n] = (struct top_row){
			.name = xstrdup(names[fn].name), .func_len = names[fn].func_len, .pid = l->pid, .tid = l->tid
		};
		*v = (*n)++;
	}
	return (uint32_t)*v;
}

struct top_row *top__rows(const struct profile *p, size_t *n)
{
	return top__rows_opts(p, NULL, n);
}

struct top_row *top__rows_opts(const struct profile *p, const struct top_opts *opts, size_t *n)
{
	struct top_opts o = opts ? *opts : (struct top_opts){ 0 };
	size_t nframes = profile__nframes(p), cap = 0, nfn = 0, pos = 0, tcap = 0, seen_cap = 0;
	uint32_t *func_of = xcalloc(nframes + 1, sizeof(*func_of)); /* frame id → function + 1 */
	struct hashmap *by_name = hashmap__new(), *by_thread = o.per_thread ? hashmap__new() : NULL;
	struct top_row *fns = NULL, *rows; /* fns: one per function; rows: fns, or per thread */
	uint64_t *seen = NULL;             /* row → last entry counted + 1 */
	uint64_t entry = 0;
	struct profile_entry e;
	char name[4096];

	*n = 0;
	for (uint32_t id = 0; id < nframes; id++) {
		bool created;
		uint64_t *v;
		uint32_t func_len = function_name(p, profile__frame_at(p, id), o.by_line, name, sizeof(name));

		v = hashmap__put(by_name, name, strlen(name), &created);
		if (created) {
			xgrow(&fns, &cap, nfn + 1, sizeof(*fns));
			fns[nfn] = (struct top_row){ .name = xstrdup(name), .func_len = func_len };
			*v = nfn++;
		}
		func_of[id] = (uint32_t)*v + 1;
	}
	rows = o.per_thread ? NULL : fns;
	*n = o.per_thread ? 0 : nfn;
	while (profile__next(p, &pos, &e)) {
		uint32_t why = e.labels.offcpu < OFFCPU__COUNT ? e.labels.offcpu : OFFCPU_OTHER;
		int awaits = -1;

		bool base = e.labels.flags & LABEL_BASE;

		entry++;
		if (!e.nframes || !fns) /* fns: every frame has one, once there is a frame */
			continue;
		if (o.by) {
			const char *v = profile__label_value(p, &e.labels, o.by);

			if (!v != !o.by_value || (v && strcmp(v, o.by_value) != 0))
				continue;
		}
		uint32_t self_fn = func_of[e.frames[self_frame(p, &e)]] - 1;
		uint32_t self = o.per_thread ? thread_row(by_thread, &rows, &tcap, n, &e.labels, self_fn, fns)
					     : self_fn;

		/* Rows are made as threads show up: seen[] follows. */
		if (o.per_thread)
			for (uint32_t i = 0; i < e.nframes; i++)
				thread_row(by_thread, &rows, &tcap, n, &e.labels, func_of[e.frames[i]] - 1, fns);
		if (seen_cap < *n + 1) {
			size_t was = seen_cap;

			xgrow(&seen, &seen_cap, *n + 1, sizeof(*seen));
			memset(seen + was, 0, (seen_cap - was) * sizeof(*seen));
		}
		if (e.labels.flags & LABEL_TASK) {
			const struct frame *f = profile__frame_at(p, e.frames[e.nframes - 1]);

			awaits = f->kind == FRAME_MARK ? asyncio_await_parse(profile__str_at(p, f->name)) : -1;
			if (awaits < 0)
				awaits = AWAIT_FUTURE;
		}
		*(base ? &rows[self].base_self : &rows[self].self) += e.count;
		for (uint32_t i = 0; i < e.nframes; i++) {
			uint32_t r = func_of[e.frames[i]] - 1;

			if (o.per_thread)
				r = thread_row(by_thread, &rows, &tcap, n, &e.labels, r, fns);
			if (seen[r] == entry) /* recursion: once per sample */
				continue;
			seen[r] = entry;
			if (base) {
				rows[r].base_total += e.count;
				continue;
			}
			rows[r].total += e.count;
			if (awaits >= 0)
				rows[r].by_await[awaits] += e.count;
			else
				rows[r].by_reason[why] += e.count;
		}
	}
	if (o.per_thread)
		top__free(fns, nfn);
	if (*n)
		qsort(rows, *n, sizeof(*rows), cmp_row);
	free(seen);
	free(func_of);
	hashmap__free(by_name);
	hashmap__free(by_thread);
	return rows;
}

void top__free(struct top_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].name);
	free(rows);
}

/* A table with a column per kind of time that occurs: wall time by off-CPU
 * reason (on the CPU first, as CPU(s)), or task time by what tasks await. */
struct split_table {
	const char *total_head; /* "WALL(s)" or "TASK(s)" */
	int first, count;       /* the kinds with a column of their own: [first, count) */
	bool cpu_column;        /* wall: kind 0 (on the CPU) as CPU(s) after the total */
	bool awaits;            /* the kinds are what tasks await (by_await), else reasons (by_reason) */
};

static uint64_t kind_of(const struct top_row *row, const struct split_table *t, int k)
{
	return t->awaits ? row->by_await[k] : row->by_reason[k];
}

static const char *kind_name(const struct split_table *t, int k)
{
	return t->awaits ? asyncio_await_name((enum asyncio_await)k) : offcpu_reason_name((enum offcpu_reason)k);
}

static void print_split(const struct profile *p, const struct top_row *rows, size_t n, size_t limit,
			const struct split_table *t, FILE *out)
{
	double period_s = (double)profile__meta_of(p)->period_ns / 1e9;
	uint64_t total = profile__total(p), seen[OFFCPU__COUNT > AWAIT__COUNT ? OFFCPU__COUNT : AWAIT__COUNT] = { 0 };
	static char name[4 * 4096 + 1];

	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < t->count; k++)
			seen[k] += kind_of(&rows[i], t, k);
	fprintf(out, "%7s %7s %9s %9s", "SELF%", "TOTAL%", "SELF(s)", t->total_head);
	if (t->cpu_column)
		fprintf(out, " %9s", "CPU(s)");
	for (int k = t->first; k < t->count; k++)
		if (seen[k])
			fprintf(out, " %9s", kind_name(t, k));
	fprintf(out, "  FUNCTION\n");
	for (size_t i = 0; i < n && i < limit; i++) {
		fprintf(out, "%6.1f%% %6.1f%% %9.3f %9.3f", total ? 100.0 * rows[i].self / total : 0.0,
			total ? 100.0 * rows[i].total / total : 0.0, rows[i].self * period_s, rows[i].total * period_s);
		if (t->cpu_column)
			fprintf(out, " %9.3f", kind_of(&rows[i], t, 0) * period_s);
		for (int k = t->first; k < t->count; k++)
			if (seen[k])
				fprintf(out, " %9.3f", kind_of(&rows[i], t, k) * period_s);
		fprintf(out, "  %s\n", text_escape(rows[i].name, name, sizeof(name)));
	}
}

/* Wall time: seconds on the CPU and off it, by reason. */
static const struct split_table wall_table = {
	.total_head = "WALL(s)", .first = OFFCPU_RUNQUEUE, .count = OFFCPU__COUNT, .cpu_column = true
};
/* Task time (report --tasks): seconds of pending tasks, split by what they await. */
static const struct split_table task_table = {
	.total_head = "TASK(s)", .first = 0, .count = AWAIT__COUNT, .awaits = true
};

/* Every sample is task time (and there is one). */
static bool only_tasks(const struct profile *p)
{
	struct profile_entry e;
	size_t pos = 0;
	bool any = false;

	while (profile__next(p, &pos, &e)) {
		if (!(e.labels.flags & LABEL_TASK))
			return false;
		any = true;
	}
	return any;
}

int top__print(const struct profile *p, size_t limit, FILE *out)
{
	size_t n;
	struct top_row *rows = top__rows(p, &n);
	uint64_t total = profile__total(p);

	static char name[4 * 4096 + 1];

	if (profile__meta_of(p)->wall && only_tasks(p)) {
		print_split(p, rows, n, limit, &task_table, out);
		goto more;
	}
	if (profile__meta_of(p)->wall) {
		print_split(p, rows, n, limit, &wall_table, out);
		goto more;
	}
	fprintf(out, "%7s %7s %9s %9s  %s\n", "SELF%", "TOTAL%", "SELF", "TOTAL", "FUNCTION");
	/* Names come from the profiled processes: no control character reaches the terminal. */
	for (size_t i = 0; i < n && i < limit; i++) {
		char self[32], all[32];

		/* A memory profile's view counts bytes: said as sizes. */
		if (profile__meta_of(p)->value_unit == PROFILE_UNIT_BYTES) {
			human_bytes(rows[i].self, self, sizeof(self));
			human_bytes(rows[i].total, all, sizeof(all));
		} else {
			snprintf(self, sizeof(self), "%" PRIu64, rows[i].self);
			snprintf(all, sizeof(all), "%" PRIu64, rows[i].total);
		}
		fprintf(out, "%6.1f%% %6.1f%% %9s %9s  %s\n", total ? 100.0 * rows[i].self / total : 0.0,
			total ? 100.0 * rows[i].total / total : 0.0, self, all,
			text_escape(rows[i].name, name, sizeof(name)));
	}
more:
	if (n > limit)
		fprintf(out, "(%zu more functions; --top N shows more)\n", n - limit);
	top__free(rows, n);
	return stream_finish(out);
}

/* A row's change: its share of the after side less its share of the before side, in points. */
struct change {
	const struct top_row *row;
	double total, self;
};

static int cmp_change(const void *a, const void *b)
{
	const struct change *x = a, *y = b;
	double ax = x->total < 0 ? -x->total : x->total, ay = y->total < 0 ? -y->total : y->total;
	double sx = x->self < 0 ? -x->self : x->self, sy = y->self < 0 ? -y->self : y->self;

	if (ax != ay)
		return ax > ay ? -1 : 1;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return strcmp(x->row->name, y->row->name);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

int top__print_diff(const struct profile *p, size_t limit, FILE *out)
{
	size_t n, nc = 0, pos = 0;
	struct top_row *rows = top__rows(p, &n);
	struct change *ch = xcalloc(n + 1, sizeof(*ch));
	uint64_t before = 0, after = 0;
	struct profile_entry e;
	static char name[4 * 4096 + 1];

	while (profile__next(p, &pos, &e))
		*(e.labels.flags & LABEL_BASE ? &before : &after) += e.count;
	for (size_t i = 0; i < n; i++) {
		struct change c = { &rows[i], share(rows[i].total, after) - share(rows[i].base_total, before),
				    share(rows[i].self, after) - share(rows[i].base_self, before) };

		if (c.total != 0 || c.self != 0)
			ch[nc++] = c;
	}
	if (nc)
		qsort(ch, nc, sizeof(*ch), cmp_change);
	if (profile__meta_of(p)->value_unit == PROFILE_UNIT_BYTES) { /* a memory recording's view */
		char b[32], a[32];

		fprintf(out, "before: %s, after: %s; shares of each side's bytes\n", human_bytes(before, b, sizeof(b)),
			human_bytes(after, a, sizeof(a)));
	} else {
		fprintf(out, "before: %" PRIu64 " samples, after: %" PRIu64 " samples; shares of each side's samples\n",
			before, after);
	}
	fprintf(out, "%7s %7s %8s %7s %7s %8s  %s\n", "BEFORE", "AFTER", "CHANGE", "SELF-B", "SELF-A", "CHANGE",
		"FUNCTION");
	for (size_t i = 0; i < nc && i < limit; i++) {
		const struct top_row *r = ch[i].row;

		fprintf(out, "%6.1f%% %6.1f%% %+8.2f %6.1f%% %6.1f%% %+8.2f  %s\n", share(r->base_total, before),
			share(r->total, after), ch[i].total, share(r->base_self, before), share(r->self, after),
			ch[i].self, text_escape(r->name, name, sizeof(name)));
	}
	if (!nc)
		fprintf(out, "(no change: every function has the same share before and after)\n");
	else if (nc > limit)
		fprintf(out, "(%zu more changed functions; --top N shows more)\n", nc - limit);
	free(ch);
	top__free(rows, n);
	return stream_finish(out);
}
