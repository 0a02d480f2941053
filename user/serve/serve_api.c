// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "serve/serve_api.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive/archive.h"
#include "profile/filter.h"
#include "base/hashmap.h"
#include "serve/serve_body.h"
#include "serve/serve_dir.h"
#include "serve/serve_split.h"
#include "write/top.h"
#include "base/util.h"
#include "base/wallclock.h"
#include "profile/mem_view.h"
#include "base/escape.h"
#include "write/flamegraph.h"
#include "flamegraph_js.h" /* generated from write/flamegraph.js */
#include "serve_page.h"    /* generated from serve_page.html */

/* One interval file as listed, and what it holds once read. */
struct summary {
	struct serve_file f;
	bool known; /* read: the fields below are set */
	char *bad;  /* why it cannot be read (then skipped), or NULL */
	bool wall;
	uint64_t mem_sample_bytes; /* a memory interval's bytes per sample point; 0: time */
	int64_t duration_ns;
	uint64_t samples;
	struct serve_split split; /* on the CPU and off it by reason: the timeline's bar */
};

struct serve_api {
	int dirfd;
	struct serve_limits lim;
	char *dir;
	struct summary *v;
	size_t n;
	bool stale; /* a listed file changed: list again before the next answer */
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
	a->lim = (struct serve_limits){ max_bytes, SERVE_MAX_DECODED, SERVE_MAX_REPLY };
	a->dir = xstrdup(dir);
	return a;
}

struct serve_limits *serve_api__limits(struct serve_api *a)
{
	return &a->lim;
}

int serve_api__dirfd(const struct serve_api *a)
{
	return a->dirfd;
}

static void free_summaries(struct summary *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].f.name);
		free(v[i].bad);
	}
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

/* The directory listed again: summaries of files unchanged (same file, size
 * and time) are kept, files gone are forgotten, one replaced is a new
 * interval; the newest SERVE_MAX_SUMMARIES kept. */
static void refresh(struct serve_api *a)
{
	size_t n, first = 0;
	struct serve_file *files = serve_dir__list(a->dirfd, &n);
	struct hashmap *old = hashmap__new();
	struct summary *v;

	if (!old)
		die("out of memory");
	for (size_t i = 0; i < a->n; i++) {
		bool created;

		*hashmap__put(old, a->v[i].f.name, strlen(a->v[i].f.name), &created) = i;
	}
	if (n > SERVE_MAX_SUMMARIES)
		first = n - SERVE_MAX_SUMMARIES;
	v = xcalloc(n - first + 1, sizeof(*v));
	for (size_t i = first; i < n; i++) {
		struct summary *s = &v[i - first];
		uint64_t *was = hashmap__get(old, files[i].name, strlen(files[i].name));

		if (was && serve_file__same(&a->v[*was].f, &files[i])) {
			*s = a->v[*was];
			a->v[*was].f.name = NULL; /* moved */
			a->v[*was].bad = NULL;
			free(files[i].name);
			continue;
		}
		*s = (struct summary){ .f = files[i] };
	}
	for (size_t i = 0; i < first; i++)
		free(files[i].name);
	free(files);
	hashmap__free(old);
	free_summaries(a->v, a->n);
	a->v = v;
	a->n = n - first;
	a->stale = false;
}

/* A file that cannot be read: skipped from now on, said once. */
static void skip(struct serve_api *a, struct summary *s, const char *why)
{
	s->known = true;
	if (!s->bad) {
		s->bad = xstrdup(why);
		err_msg("serve skips '%s': %s", s->f.name, why);
		a->stale = true; /* it may have been replaced: the next answer lists again */
	}
}

static struct profile *read_interval(struct serve_api *a, struct summary *s)
{
	char why[256];
	struct profile *p = serve_dir__read(a->dirfd, &s->f, a->lim.max_bytes, why, sizeof(why));

	if (!p)
		skip(a, s, why);
	return p;
}

static void summarize(struct serve_api *a, struct summary *s)
{
	struct profile *p = read_interval(a, s);

	s->known = true;
	if (!p)
		return;
	s->wall = profile__meta_of(p)->wall;
	s->mem_sample_bytes = profile__meta_of(p)->mem_sample_bytes;
	s->f.start_ns = profile__meta_of(p)->start_epoch_ns;
	s->duration_ns = profile__meta_of(p)->duration_ns;
	/* A memory interval's bar: its growth, in sample points (what it holds is as of its end). */
	s->samples = profile__meta_of(p)->mem_sample_bytes ? mem_view_points(p, false) : profile__total(p);
	serve_split__count(&s->split, p);
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

/* A body within the answer's bound, or a 413 that says which bound. */
static void body_reply(struct serve_api *a, struct serve_body *b, struct serve_reply *r, int status, const char *type)
{
	if (!serve_body__close(b)) {
		reply_text(r, 413, "the answer would be over %" PRIu64 " KiB: choose a shorter range\n",
			   a->lim.max_reply >> 10);
		return;
	}
	r->status = status;
	r->type = type;
	r->body = b->buf;
	r->len = b->len;
}

/* The timeline: per interval its samples, those off the CPU, and for a wall
 * interval the split by reason ("split"), which is what shows its load. */
static void intervals_json(struct serve_api *a, struct serve_reply *r)
{
	uint64_t deadline = now_ns() + SERVE_SUMMARY_BUDGET_NS;
	size_t pending = 0;
	bool wall = false;
	uint64_t mem = 0;
	struct serve_body b;
	FILE *f;

	refresh(a);
	/* The newest first: they are what an operator looks at first. */
	for (size_t i = a->n; i-- > 0;) {
		if (!a->v[i].known && now_ns() < deadline)
			summarize(a, &a->v[i]);
		pending += !a->v[i].known;
		wall |= a->v[i].known && !a->v[i].bad && a->v[i].wall;
		if (a->v[i].known && !a->v[i].bad && a->v[i].mem_sample_bytes)
			mem = a->v[i].mem_sample_bytes;
	}
	f = serve_body__open(&b, a->lim.max_reply);
	fputs("{\"dir\":", f);
	json_str(f, a->dir);
	/* memory: the bytes a sample point of a memory recording stands for (0: time) */
	fprintf(f, ",\"wall\":%s,\"memory\":%" PRIu64 ",\"pending\":%zu,\"intervals\":[", wall ? "true" : "false", mem,
		pending);
	for (size_t i = 0; i < a->n; i++) {
		const struct summary *s = &a->v[i];

		/* Names are ours (rotation_parse_name): no character to escape. */
		fprintf(f, "%s{\"seq\":%" PRIu64 ",\"name\":\"%s\",\"start\":%.3f", i ? "," : "", s->f.seq, s->f.name,
			s->f.start_ns / 1e6);
		if (!s->known) {
			fputs(",\"pending\":true", f);
		} else if (s->bad) {
			fputs(",\"bad\":", f);
			json_str(f, s->bad);
		} else {
			fprintf(f, ",\"duration\":%.3f,\"samples\":%" PRIu64 ",\"offcpu\":%" PRIu64,
				s->duration_ns / 1e6, s->samples, serve_split__offcpu(&s->split));
			/* Wall intervals only: a CPU recording's bar is all CPU. */
			if (s->wall) {
				fputc(',', f);
				serve_split__write_json(&s->split, f);
			}
		}
		fputc('}', f);
	}
	/* The files skipped, by name: what an operator looks for. */
	fputs("],\"skipped\":[", f);
	for (size_t i = 0, k = 0; i < a->n; i++)
		if (a->v[i].bad)
			fprintf(f, "%s\"%s\"", k++ ? "," : "", a->v[i].f.name);
	fputs("]}\n", f);
	body_reply(a, &b, r, 200, "application/json");
}

/* The summary of interval `seq`, or NULL. */
static struct summary *by_seq(struct serve_api *a, uint64_t seq)
{
	size_t lo = 0, hi = a->n;

	/* Sorted by time, and sequence numbers grow with time within one recorder. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (a->v[mid].f.seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < a->n && a->v[lo].f.seq == seq)
		return &a->v[lo];
	for (size_t i = 0; i < a->n; i++) /* a directory of several recorders' runs */
		if (a->v[i].f.seq == seq)
			return &a->v[i];
	return NULL;
}

/* A range of the query: interval numbers from..to. */
struct span {
	uint64_t from, to;
	size_t lo, hi; /* the indexes of their files, once found */
};

static int parse_span(serve_query_fn q, void *ctx, const char *from_key, const char *to_key, struct span *sp,
		      struct serve_reply *r)
{
	const char *from = q(ctx, from_key), *to = q(ctx, to_key);

	if (!from || !to || parse_u64(from, 0, UINT64_MAX, &sp->from) || parse_u64(to, 0, UINT64_MAX, &sp->to) ||
	    sp->to < sp->from) {
		reply_text(r, 400, "%s and %s must be interval numbers, %s not after %s\n", from_key, to_key, from_key,
			   to_key);
		return -1;
	}
	return 0;
}

/* The files of a span in the listing; false when one of its ends is not there. */
static bool find_span(struct serve_api *a, struct span *sp, uint64_t *missing)
{
	struct summary *sf = by_seq(a, sp->from), *st = by_seq(a, sp->to);

	if (!sf || !st || st < sf) {
		*missing = !sf ? sp->from : sp->to;
		return false;
	}
	sp->lo = (size_t)(sf - a->v);
	sp->hi = (size_t)(st - a->v);
	return true;
}

/* The spans found in one listing (listed again if one is not found, or a
 * file changed), within the bytes one answer may read; -1 after a reply. */
static int find_spans(struct serve_api *a, struct span *sp, size_t n, struct serve_reply *r)
{
	uint64_t missing = 0, bytes = 0;
	bool found = true;

	if (!a->n || a->stale)
		refresh(a);
	for (size_t k = 0; k < n && found; k++)
		found = find_span(a, &sp[k], &missing);
	if (!found) {
		refresh(a);
		found = true;
		for (size_t k = 0; k < n && found; k++)
			found = find_span(a, &sp[k], &missing);
	}
	if (!found) {
		reply_text(r, 404, "no interval %" PRIu64 " in this directory\n", missing);
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		for (size_t i = sp[k].lo; i <= sp[k].hi; i++)
			bytes += a->v[i].f.size;
		if (bytes > a->lim.max_bytes) {
			reply_text(r, 413,
				   "%zu intervals hold %" PRIu64 " KiB: at most %" PRIu64
				   " KiB are read for one answer; choose a shorter range\n",
				   sp[k].hi - sp[k].lo + 1, bytes >> 10, a->lim.max_bytes >> 10);
			return -1;
		}
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

/* What a decoded recording takes, roughly: its event log, stacks, frames and strings. */
static uint64_t decoded_bytes(const struct profile *p)
{
	struct profile_entry e;
	size_t log = 0, pos = 0;
	uint64_t b;

	profile__event_log(p, &log);
	b = log + profile__nframes(p) * (sizeof(struct frame) + 16) + profile__nstrs(p) * 48;
	while (profile__next(p, &pos, &e))
		b += sizeof(e) + e.nframes * sizeof(uint32_t) + 32;
	return b;
}

/* One answer's reading: the files of the archive (summary indexes), what
 * their recordings took, and whether one could not be read. */
struct reading {
	struct serve_api *a;
	size_t *idx;
	uint64_t decoded;
	bool over, failed;
};

/* archive's reader: a listed file, relative to the directory, as listed. */
static struct profile *read_for_archive(void *ctx, size_t i)
{
	struct reading *rd = ctx;
	struct profile *p = read_interval(rd->a, &rd->a->v[rd->idx[i]]);

	if (!p) {
		rd->failed = true;
		return NULL;
	}
	rd->decoded += decoded_bytes(p);
	if (rd->decoded > rd->a->lim.max_decoded) {
		rd->over = true;
		profile__free(p);
		return NULL;
	}
	return p;
}

enum loaded {
	LOADED,
	NONE_READABLE,
	OVER_BUDGET,
	NOT_MERGED
};

/* The span's readable files merged; a file found unreadable on the way is
 * skipped and the rest merged again. */
static enum loaded load(struct serve_api *a, const struct span *sp, const struct filter *f, uint32_t flags,
			uint64_t *decoded, struct profile **out)
{
	struct reading rd = { .a = a, .decoded = *decoded };
	size_t *idx = xcalloc(sp->hi - sp->lo + 1, sizeof(*idx));
	enum loaded ret = NOT_MERGED;

	*out = NULL;
	for (;;) {
		struct archive ar = { .reader = read_for_archive, .reader_ctx = &rd };
		struct archive_stats st;
		size_t n = 0;

		for (size_t i = sp->lo; i <= sp->hi; i++)
			if (!a->v[i].bad)
				idx[n++] = i;
		if (!n) {
			ret = NONE_READABLE;
			break;
		}
		xgrow(&ar.v, &ar.cap, n, sizeof(*ar.v));
		for (size_t k = 0; k < n; k++) {
			const struct summary *s = &a->v[idx[k]];

			/* Starts from the names; the reader gives the exact ones. */
			ar.v[k] = (struct archive_file){ .path = xstrdup(s->f.name),
							 .start_ns = s->f.start_ns,
							 .end_ns = k + 1 < n ? a->v[idx[k + 1]].f.start_ns
									     : INT64_MAX };
		}
		ar.n = n;
		rd.idx = idx;
		rd.decoded = *decoded;
		rd.failed = false;
		*out = archive__load(&ar, f, flags, &st);
		archive__free(&ar);
		if (*out) {
			ret = LOADED;
			*decoded = rd.decoded;
			break;
		}
		if (rd.over) {
			ret = OVER_BUDGET;
			break;
		}
		if (!rd.failed) /* merge refused (CPU and wall-clock), said on stderr */
			break;
	}
	free(idx);
	return ret;
}

static void span_text(const struct serve_api *a, const struct span *sp, char *buf, size_t size)
{
	char t0[64];

	epoch_format(a->v[sp->lo].f.start_ns, t0, sizeof(t0));
	if (sp->lo == sp->hi)
		snprintf(buf, size, "interval %" PRIu64 " (%s)", sp->from, t0);
	else
		snprintf(buf, size, "intervals %" PRIu64 "-%" PRIu64 " (from %s)", sp->from, sp->to, t0);
}

/* "NAME: why" of the spans' skipped files, joined by sep (at most `size`
 * bytes, ending in "..."); how many there are. */
static size_t skipped_text(const struct serve_api *a, const struct span *sp, size_t nsp, const char *sep, char *buf,
			   size_t size)
{
	size_t n = 0, len = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < nsp; k++)
		for (size_t i = sp[k].lo; i <= sp[k].hi; i++) {
			if (!a->v[i].bad)
				continue;
			if (len < size) {
				int w = snprintf(buf + len, size - len, "%s%s: %s", n ? sep : "", a->v[i].f.name,
						 a->v[i].bad);

				len += w > 0 ? (size_t)w : 0;
				if (len >= size && size > 4)
					memcpy(buf + size - 4, "...", 4); /* with its NUL */
			}
			n++;
		}
	return n;
}

static void load_error(struct serve_api *a, enum loaded why, const struct span *sp, size_t nsp, struct serve_reply *r)
{
	char skipped[1024];

	if (why == NONE_READABLE) {
		skipped_text(a, sp, nsp, "; ", skipped, sizeof(skipped));
		reply_text(r, 422, "no interval file of the range can be read: %s\n", skipped);
	} else if (why == OVER_BUDGET) {
		reply_text(r, 413,
			   "the range's recordings take over %" PRIu64
			   " MiB once decoded, more than one answer may; choose a shorter range\n",
			   a->lim.max_decoded >> 20);
	} else {
		reply_text(r, 422, "the range's recordings cannot be merged (pyebpf serve's output says why)\n");
	}
}

/* A memory recording shows one of its values (?sample_type=, default
 * inuse_space: what the range's newest interval holds), in bytes. */
static void memory_view(struct profile **p, const char *type)
{
	enum mem_value v = MEM_INUSE_SPACE;
	struct profile *view;

	if (!profile__meta_of(*p)->mem_sample_bytes)
		return;
	if (type)
		mem_value_parse(type, &v); /* an unknown one: the default */
	view = mem_view(*p, v);
	profile__free(*p);
	*p = view;
}

/* /api/flame and /api/top: a range (and a base range for a diff) as an SVG or a table. */
static void profile_reply(struct serve_api *a, serve_query_fn q, void *ctx, bool svg, struct serve_reply *r)
{
	struct filter f;
	struct span sp[2];
	bool diff = q(ctx, "base_from") || q(ctx, "base_to");
	size_t nsp = diff ? 2 : 1, nskipped;
	struct profile *p = NULL, *base = NULL;
	char title[1200], span[200], bspan[200], skipped[700];
	enum loaded got;
	uint64_t decoded = 0;
	struct serve_body b;

	if (parse_span(q, ctx, "from", "to", &sp[0], r) ||
	    (diff && parse_span(q, ctx, "base_from", "base_to", &sp[1], r)) || find_spans(a, sp, nsp, r) ||
	    query_filter(q, ctx, &f, r))
		return;
	f.functions |= diff; /* as report's diffs: a deploy moves line numbers */
	got = load(a, &sp[0], &f, 0, &decoded, &p);
	if (got == LOADED)
		memory_view(&p, q(ctx, "sample_type"));
	if (got == LOADED && diff) {
		got = load(a, &sp[1], &f, LABEL_BASE, &decoded, &base);
		if (got == LOADED)
			memory_view(&base, q(ctx, "sample_type"));
		if (got == LOADED) {
			struct filter all;

			filter__init(&all);
			filter__copy(&all, base, p, 0, 1, 0);
		}
	}
	filter__free(&f);
	if (got != LOADED) {
		load_error(a, got, sp, nsp, r);
		goto out;
	}
	span_text(a, &sp[0], span, sizeof(span));
	if (diff) {
		span_text(a, &sp[1], bspan, sizeof(bspan));
		snprintf(title, sizeof(title), "%s against %s", span, bspan);
	} else {
		snprintf(title, sizeof(title), "%s", span);
	}
	serve_body__open(&b, a->lim.max_reply);
	nskipped = skipped_text(a, sp, nsp, svg ? "; " : "\nskipped ", skipped, sizeof(skipped));
	if (svg) {
		struct flamegraph_opts o = { .title = title,
					     .diff = diff,
					     .threads = q(ctx, "threads") != NULL,
					     .processes = PROCESSES_MERGED };

		/* The title is what the page shows: the skipped files are named there. */
		if (nskipped)
			snprintf(title + strlen(title), sizeof(title) - strlen(title),
				 "; %zu interval file%s skipped (%s)", nskipped, nskipped > 1 ? "s" : "", skipped);
		flamegraph__write(p, &o, b.f);
		body_reply(a, &b, r, 200, "image/svg+xml");
	} else {
		size_t top = 30;
		const char *n = q(ctx, "top");
		uint64_t v;

		if (n && !parse_u64(n, 1, 1000, &v))
			top = v;
		fprintf(b.f, "%s\n", title);
		diff ? top__print_diff(p, top, b.f) : top__print(p, top, b.f);
		if (nskipped)
			fprintf(b.f, "skipped %s\n", skipped);
		body_reply(a, &b, r, 200, "text/plain; charset=utf-8");
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
