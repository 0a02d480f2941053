/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * An interval as one Pyroscope PushRequest (pyroscope.proto): a
 * RawProfileSeries per series and kind of time, __name__ "process_cpu" for
 * CPU time and "wall" for wall-clock time (the profile types Pyroscope's UI
 * shows as CPU and as wall: process_cpu:cpu:nanoseconds:cpu:nanoseconds and
 * wall:wall:nanoseconds:wall:nanoseconds), each holding one gzip'd pprof.
 * Each RawSample's ID is a UUID made from the interval file's name, the
 * series and the kind: the same interval always carries the same IDs.
 * No network here.
 */
#ifndef PYEBPF_PUSH_PYROSCOPE_REQ_H
#define PYEBPF_PUSH_PYROSCOPE_REQ_H

#include <stddef.h>
#include <stdint.h>

#include "push/series.h"

/* The request's bytes (malloc'd) for the series of interval file `name`;
 * *nprofiles says how many pprofs it holds. 0, or -1 with errno set. */
int pyroscope_request(const struct push_series *s, size_t n, const char *name, uint8_t **out, size_t *len,
		      size_t *nprofiles);

/* What asks Pyroscope whether interval `name`'s first CPU series is there
 * already: a SelectMergeProfileRequest for that series' labels at the
 * interval's start (to the millisecond). 0 with the request's bytes
 * (malloc'd); -1 when the interval has no CPU series to ask about. */
int pyroscope_query_request(const struct push_series *s, size_t n, uint8_t **out, size_t *len);
/* The answer (a pprof Profile, not gzip'd): the sum of its first value over
 * its samples, in *total. 0, or -1 when it is no profile. */
int pyroscope_query_total(const uint8_t *body, size_t len, int64_t *total);

/* A UUID (RFC 9562 version 4 layout) from a digest of `key`: 36 characters and NUL. */
void pyroscope_uuid(const char *key, char out[37]);

#endif
