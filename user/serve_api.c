// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "serve_api.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "filter.h"
#include "hashmap.h"
#include "rotation.h"
#include "top.h"
#include "util.h"
#include "wallclock.h"
#include "write/escape.h"
#include "write/flamegraph.h"
#include "flamegraph_js.h" /* generated from write/flamegraph.js */
#include "serve_page.h"    /* generated from serve_page.html */

/* One interval file as last seen, and what it holds once read. */
struct summary {
	char *name;
	uint64_t seq, size;
	int64_t start_ns, mtime_ns;
	bool known; /* read: the fields below are set */
	bool bad;   /* could not be read */
	bool wall;
	int64_t duration_ns;
	uint64_t samples, offcpu;
};

struct serve_api {
	int dirfd;
	uint64_t max_bytes;
	char *dir;
	struct summary *v;
	size_t n;
};

struct serve_api *serve_api__new(const char *dir, uint64_t max_bytes)
{
	struct serve_api *a;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		err_msg("cannot serve '%s': %s", dir, strerror(errno));
		return NULL;
	}
	a = xcalloc(1, sizeof(*a));
	a->dirfd = fd;
	a->max_bytes = max_bytes;
	a->dir = xstrdup(dir);
	return a;
}

static void free_summaries(struct summary *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

void serve_api__free(struct serve_api *a)
{
	if (!a)
		return;
	close(a->dirfd);
	free(a->dir);
	free_summaries(a->v, a->n);
	free(a);
}

/* The directory listed again: summaries of files unchanged (same size and
 * time) are kept, files gone are forgotten, the newest SERVE_MAX_SUMMARIES kept. */
static void refresh(struct serve_api *a)
{
	size_t n, first = 0;
	struct rotation_file *files = rotation_list(a->dirfd, &n);
	struct hashmap *old = hashmap__new();
	struct summary *v;

	if (!old)
		die("out of memory");
	for (size_t i = 0; i < a->n; i++) {
		bool created;

		*hashmap__put(old, a->v[i].name, strlen(a->v[i].name), &created) = i;
	}
	if (n > SERVE_MAX_SUMMARIES)
		first = n - SERVE_MAX_SUMMARIES;
	v = xcalloc(n - first + 1, sizeof(*v));
	for (size_t i = first; i < n; i++) {
		struct summary *s = &v[i - first];
		uint64_t *was = hashmap__get(old, files[i].name, strlen(files[i].name));

		if (was && a->v[*was].size == files[i].size && a->v[*was].mtime_ns == files[i].mtime_ns) {
			*s = a->v[*was];
			a->v[*was].name = NULL; /* moved */
			free(files[i].name);
			continue;
		}
		*s = (struct summary){ .name = files[i].name,
				       .seq = files[i].seq,
				       .size = files[i].size,
				       .start_ns = files[i].start_ns,
				       .mtime_ns = files[i].mtime_ns };
	}
	for (size_t i = 0; i < first; i++)
		free(files[i].name);
	free(files);
	hashmap__free(old);
	free_summaries(a->v, a->n);
	a->v = v;
	a->n = n - first;
}

static void summarize(struct serve_api *a, struct summary *s)
{
	struct profile *p = recording__read_at(a->dirfd, s->name, O_NOFOLLOW);
	struct profile_entry e;
	size_t pos = 0;

	s->known = true;
	if (!p) {
		s->bad = true;
		return;
	}
	s->wall = profile__meta_of(p)->wall;
	s->start_ns = profile__meta_of(p)->start_epoch_ns;
	s->duration_ns = profile__meta_of(p)->duration_ns;
	s->samples = profile__total(p);
	while (profile__next(p, &pos, &e))
		if (e.labels.offcpu)
			s->offcpu += e.count;
	profile__free(p);
}

/* ---- replies ------------------------------------------------------------ */

static void reply_text(struct serve_reply *r, int status, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&r->body, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("out of memory");
	r->status = status;
	r->type = "text/plain; charset=utf-8";
	r->len = (size_t)n;
}

/* A body written to a memory stream. */
struct membuf {
	FILE *f;
	char *buf;
	size_t len;
};

static FILE *membuf_open(struct membuf *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	if (!m->f)
		die("out of memory");
	return m->f;
}

static void membuf_reply(struct membuf *m, struct serve_reply *r, int status, const char *type)
{
	fclose(m->f);
	r->status = status;
	r->type = type;
	r->body = m->buf;
	r->len = m->len;
}

static void intervals_json(struct serve_api *a, struct serve_reply *r)
{
	uint64_t deadline = now_ns() + SERVE_SUMMARY_BUDGET_NS;
	size_t pending = 0;
	bool wall = false;
	struct membuf m;
	FILE *f;

	refresh(a);
	/* The newest first: they are what an operator looks at first. */
	for (size_t i = a->n; i-- > 0;) {
		if (!a->v[i].known && now_ns() < deadline)
			summarize(a, &a->v[i]);
		pending += !a->v[i].known;
		wall |= a->v[i].known && a->v[i].wall;
	}
	f = membuf_open(&m);
	fputs("{\"dir\":", f);
	json_str(f, a->dir);
	fprintf(f, ",\"wall\":%s,\"pending\":%zu,\"intervals\":[", wall ? "true" : "false", pending);
	for (size_t i = 0; i < a->n; i++) {
		const struct summary *s = &a->v[i];

		fprintf(f, "%s{\"seq\":%" PRIu64 ",\"name\":\"%s\",\"start\":%.3f", i ? "," : "", s->seq, s->name,
			s->start_ns / 1e6);
		if (!s->known)
			fputs(",\"pending\":true", f);
		else if (s->bad)
			fputs(",\"bad\":true", f);
		else
			fprintf(f, ",\"duration\":%.3f,\"samples\":%" PRIu64 ",\"offcpu\":%" PRIu64,
				s->duration_ns / 1e6, s->samples, s->offcpu);
		fputc('}', f);
	}
	fputs("]}\n", f);
	membuf_reply(&m, r, 200, "application/json");
}

/* The summary of interval `seq`, or NULL. */
static struct summary *by_seq(struct serve_api *a, uint64_t seq)
{
	size_t lo = 0, hi = a->n;

	/* Sorted by time, and sequence numbers grow with time within one recorder. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (a->v[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < a->n && a->v[lo].seq == seq)
		return &a->v[lo];
	for (size_t i = 0; i < a->n; i++) /* a directory of several recorders' runs */
		if (a->v[i].seq == seq)
			return &a->v[i];
	return NULL;
}

/* Interval numbers from..to of the query: the indexes of their files. */
static int range(struct serve_api *a, serve_query_fn q, void *ctx, const char *from_key, const char *to_key, size_t *lo,
		 size_t *hi, struct serve_reply *r)
{
	const char *from = q(ctx, from_key), *to = q(ctx, to_key);
	uint64_t f, t, bytes = 0;
	struct summary *sf, *st;

	if (!from || !to || parse_u64(from, 0, UINT64_MAX, &f) || parse_u64(to, 0, UINT64_MAX, &t) || t < f) {
		reply_text(r, 400, "%s and %s must be interval numbers, %s not after %s\n", from_key, to_key, from_key,
			   to_key);
		return -1;
	}
	if (!a->n)
		refresh(a);
	sf = by_seq(a, f);
	st = by_seq(a, t);
	if (!sf || !st) {
		refresh(a);
		sf = by_seq(a, f);
		st = by_seq(a, t);
	}
	if (!sf || !st || st < sf) {
		reply_text(r, 404, "no interval %" PRIu64 " in this directory\n", !sf ? f : t);
		return -1;
	}
	*lo = (size_t)(sf - a->v);
	*hi = (size_t)(st - a->v);
	for (size_t i = *lo; i <= *hi; i++)
		bytes += a->v[i].size;
	if (bytes > a->max_bytes) {
		reply_text(r, 413,
			   "%zu intervals hold %" PRIu64 " KiB: at most %" PRIu64
			   " KiB are read for one answer; choose a shorter range\n",
			   *hi - *lo + 1, bytes >> 10, a->max_bytes >> 10);
		return -1;
	}
	return 0;
}

/* The filters a query names: pid, comm, thread, container (strings stay the query's). */
static int query_filter(serve_query_fn q, void *ctx, struct filter *f, struct serve_reply *r)
{
	static const char *const names[] = { "comm", "thread", "container" };
	const char *pid = q(ctx, "pid");

	filter__init(f);
	if (pid && *pid) {
		uint64_t v;

		if (parse_u64(pid, 1, UINT32_MAX, &v)) {
			reply_text(r, 400, "pid must be a process id\n");
			return -1;
		}
		f->pids = xcalloc(1, sizeof(*f->pids));
		f->pids[0] = (uint32_t)v;
		f->npids = 1;
	}
	for (size_t i = 0; i < 3; i++) {
		const char *v = q(ctx, names[i]);
		const char ***list = i == 0 ? &f->comms : i == 1 ? &f->threads : &f->containers;
		size_t *n = i == 0 ? &f->ncomms : i == 1 ? &f->nthreads : &f->ncontainers;

		if (!v || !*v)
			continue;
		*list = xcalloc(1, sizeof(**list));
		(*list)[0] = v;
		*n = 1;
	}
	f->functions = q(ctx, "functions") != NULL;
	f->python_only = q(ctx, "python_only") != NULL;
	return 0;
}

static struct profile *load(struct serve_api *a, size_t lo, size_t hi, const struct filter *f, uint32_t flags)
{
	struct archive ar = { 0 };
	struct archive_stats st;
	struct profile *p;
	char *path;

	for (size_t i = lo; i <= hi; i++) {
		if (asprintf(&path, "%s/%s", a->dir, a->v[i].name) < 0)
			die("out of memory");
		archive__add(&ar, path);
		free(path);
	}
	p = archive__load(&ar, f, flags, &st);
	archive__free(&ar);
	return p;
}

static void span_text(const struct serve_api *a, size_t lo, size_t hi, char *buf, size_t size)
{
	char t0[64];

	epoch_format(a->v[lo].start_ns, t0, sizeof(t0));
	if (lo == hi)
		snprintf(buf, size, "interval %" PRIu64 " (%s)", a->v[lo].seq, t0);
	else
		snprintf(buf, size, "intervals %" PRIu64 "-%" PRIu64 " (from %s)", a->v[lo].seq, a->v[hi].seq, t0);
}

/* /api/flame and /api/top: a range (and a base range for a diff) as an SVG or a table. */
static void profile_reply(struct serve_api *a, serve_query_fn q, void *ctx, bool svg, struct serve_reply *r)
{
	struct filter f;
	size_t lo, hi, blo = 0, bhi = 0;
	bool diff = q(ctx, "base_from") || q(ctx, "base_to");
	struct profile *p = NULL, *base = NULL;
	char title[512], span[200], bspan[200];
	struct membuf m;

	if (range(a, q, ctx, "from", "to", &lo, &hi, r) ||
	    (diff && range(a, q, ctx, "base_from", "base_to", &blo, &bhi, r)) || query_filter(q, ctx, &f, r))
		return;
	f.functions |= diff; /* as report's diffs: a deploy moves line numbers */
	p = load(a, lo, hi, &f, 0);
	if (p && diff) {
		base = load(a, blo, bhi, &f, LABEL_BASE);
		if (base) {
			struct filter all;

			filter__init(&all);
			filter__copy(&all, base, p, 0, 1, 0);
		}
	}
	filter__free(&f);
	if (!p || (diff && !base)) {
		reply_text(r, 500, "an interval file of the range cannot be read (pyebpf serve's output says why)\n");
		goto out;
	}
	span_text(a, lo, hi, span, sizeof(span));
	if (diff) {
		span_text(a, blo, bhi, bspan, sizeof(bspan));
		snprintf(title, sizeof(title), "%s against %s", span, bspan);
	} else {
		snprintf(title, sizeof(title), "%s", span);
	}
	membuf_open(&m);
	if (svg) {
		struct flamegraph_opts o = { .title = title,
					     .diff = diff,
					     .threads = q(ctx, "threads") != NULL,
					     .processes = diff ? PROCESSES_MERGED : PROCESSES_AUTO };

		flamegraph__write(p, &o, m.f);
		membuf_reply(&m, r, 200, "image/svg+xml");
	} else {
		size_t top = 30;
		const char *n = q(ctx, "top");
		uint64_t v;

		if (n && !parse_u64(n, 1, 1000, &v))
			top = v;
		fprintf(m.f, "%s\n", title);
		diff ? top__print_diff(p, top, m.f) : top__print(p, top, m.f);
		membuf_reply(&m, r, 200, "text/plain; charset=utf-8");
	}
out:
	profile__free(p);
	profile__free(base);
}

void serve_api__handle(struct serve_api *a, const char *route, serve_query_fn q, void *ctx, struct serve_reply *r)
{
	memset(r, 0, sizeof(*r));
	if (!strcmp(route, "/") || !strcmp(route, "/index.html")) {
		r->status = 200;
		r->type = "text/html; charset=utf-8";
		r->body = xstrdup(serve_page);
		r->len = strlen(serve_page);
	} else if (!strcmp(route, "/flamegraph.js")) {
		r->status = 200;
		r->type = "text/javascript; charset=utf-8";
		r->body = xstrdup(flamegraph_js);
		r->len = strlen(flamegraph_js);
	} else if (!strcmp(route, "/api/intervals")) {
		intervals_json(a, r);
	} else if (!strcmp(route, "/api/flame")) {
		profile_reply(a, q, ctx, true, r);
	} else if (!strcmp(route, "/api/top")) {
		profile_reply(a, q, ctx, false, r);
	} else {
		reply_text(r, 404, "not found\n");
	}
}
