/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * When to try a push again, and what an answer means. Capped exponential
 * backoff with jitter, as Grafana Alloy's pyroscope.write does (0.5 s
 * doubling to 5 minutes); a 429 or 503's Retry-After (libcurl parses it)
 * is honoured. Unlike
 * Alloy, nothing is dropped after N tries: the interval stays in the spool
 * and is tried again, oldest first. No network here.
 */
#ifndef PYEBPF_PUSH_BACKOFF_H
#define PYEBPF_PUSH_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

#define BACKOFF_FIRST_S 0.5
#define BACKOFF_MAX_S 300.0
/* A Retry-After further away than this is taken as this. */
#define RETRY_AFTER_MAX_S 3600.0

/* The wait after a failure: the backoff, or a longer Retry-After (capped). */
double backoff_wait(unsigned failures, double rand01, double retry_after_s);

/* The wait before try `failures` + 1 (failures >= 1): 0.5 s * 2^(failures-1),
 * capped at 5 min, then a random part (rand01 in [0, 1)) of up to half of
 * it taken off, so hosts that failed together do not retry together. */
double backoff_delay(unsigned failures, double rand01);

enum push_verdict {
	PUSH_SENT = 0, /* 2xx: the backend has it */
	PUSH_RETRY,    /* no answer, 408, 429, 5xx: try again later */
	PUSH_SETUP,    /* 3xx, 401, 403, 404, 405, 407, 421, 501, a 2xx not in the protocol: the
			* credentials or URL are wrong, for every interval alike;
			    * tried again with backoff (a fixed file or server is taken), said once */
	PUSH_REJECTED, /* any other 4xx (400, 413, 422, too old...): this interval will never be
			    * taken; kept on disk, not tried again */
};

/* What an HTTP status means for the interval (0: no answer at all). */
enum push_verdict push_verdict_of(long status);
const char *push_verdict_name(enum push_verdict v);

#endif
