/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `pyebpf serve`'s answers, free of HTTP: a request is a route and its query
 * values, the answer a status, a content type and a body. Only the interval
 * files of the one directory are ever read, by the names its listing gives:
 * nothing from a request reaches a path. Files are read on demand; what is
 * kept between requests is one small summary per interval. A file that
 * cannot be read (truncated, or no longer the file listed) is skipped: the
 * answer holds the rest and names it, and stderr says so once.
 */
#ifndef PYEBPF_SERVE_API_H
#define PYEBPF_SERVE_API_H

#include <stddef.h>
#include <stdint.h>

/* A request's query value by name; NULL when absent. */
typedef const char *(*serve_query_fn)(void *ctx, const char *name);

struct serve_reply {
	int status;
	const char *type; /* content type */
	char *body;       /* malloc'ed */
	size_t len;
};

struct serve_api;

/* Limits that keep one request's work and memory bounded. */
#define SERVE_MAX_BYTES (64ULL << 20)         /* interval files read for one answer, compressed */
#define SERVE_MAX_DECODED (256ULL << 20)      /* their recordings decoded, as estimated */
#define SERVE_MAX_REPLY (64ULL << 20)         /* one answer's body */
#define SERVE_MAX_SUMMARIES 200000            /* intervals listed (a week of 3-second intervals) */
#define SERVE_SUMMARY_BUDGET_NS 2000000000ULL /* reading summaries in one /api/intervals */

/* NULL after one error line (dir cannot be opened); max_bytes: the interval
 * files one answer may read (SERVE_MAX_BYTES). */
struct serve_api *serve_api__new(const char *dir, uint64_t max_bytes);
void serve_api__free(struct serve_api *a);

/* Beyond one of them an answer is a one-line 413. */
struct serve_limits {
	uint64_t max_bytes;   /* SERVE_MAX_BYTES */
	uint64_t max_decoded; /* SERVE_MAX_DECODED */
	uint64_t max_reply;   /* SERVE_MAX_REPLY */
};
struct serve_limits *serve_api__limits(struct serve_api *a);
/* The directory's descriptor, opened once: every read is relative to it. */
int serve_api__dirfd(const struct serve_api *a);

/* The answer to GET `route` (the path, without query). */
void serve_api__handle(struct serve_api *a, const char *route, serve_query_fn q, void *ctx, struct serve_reply *r);

#endif
