/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The pusher: the interval files of a continuous directory sent to every
 * --push (Pyroscope) and --otlp backend, beside the sampling loop. One
 * thread per backend, each sending its unsent files one at a time, oldest
 * first (at most PUSH_MAX_RATE a second), so a backend that was away gets
 * its backlog in time order and memory stays one interval's worth however
 * long it was away. A file is marked sent in the backend's journal
 * (push/journal.h) only on a 2xx; a failure waits a capped exponential
 * backoff with jitter (push/backoff.h) and tries the same file again.
 * The one file that links libcurl.
 */
#ifndef PYEBPF_PUSH_SENDER_H
#define PYEBPF_PUSH_SENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "push/endpoint.h"
#include "push/secret.h"
#include "push/series.h"

#define PUSH_MAX_RATE 20 /* requests a second to one backend, catching up */

struct push_config {
	const char *dir;
	const struct push_endpoint *endpoints;
	size_t nendpoints;
	struct series_config series;
	struct push_auth auth;
	double connect_timeout_s, timeout_s;
	int64_t since_ns, until_ns; /* only intervals that start in [since, until) (epoch); INT64_MIN, INT64_MAX: all */
	bool log;                   /* a line per interval sent (stderr is a log) */
};

struct push_stats {
	uint64_t sent, rejected;  /* intervals (all backends) */
	uint64_t failures;        /* tries that will be tried again */
	uint64_t profiles, bytes; /* pprof profiles and request bytes sent */
	double cpu_s;             /* the senders' own CPU */
	size_t unsent;            /* intervals the backend that lacks most still lacks */
};

struct pusher;

/* Open each backend's journal and start its thread; NULL after one error line. */
struct pusher *pusher__start(const struct push_config *c);
/* A new interval file is in the directory. */
void pusher__poke(struct pusher *p);
/* The same, with its samples as they were written: each backend gets its
 * series without reading the file back (the last HANDOFF_MAX intervals;
 * older ones are read from the spool when their turn comes). */
void pusher__offer(struct pusher *p, const char *name, const struct profile *prof);
/* Does some backend still lack interval file `name`? (Rotation keeps it.) */
bool pusher__unsent(struct pusher *p, const char *name);
/*
 * Send what can be sent within `seconds` (a backend that fails is not
 * waited for past it), then stop the threads; what is left stays unsent in
 * the journals for the next run or `pyebpf push`.
 */
void pusher__finish(struct pusher *p, double seconds);
void pusher__stats(struct pusher *p, struct push_stats *st);
void pusher__free(struct pusher *p); /* accepts NULL; finishes at once if not finished */

#endif
