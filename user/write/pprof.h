/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * pprof (gzip-compressed profile.proto), read by `go tool pprof`, Grafana
 * Pyroscope and friends: sample types samples/count and cpu/nanoseconds;
 * Functions with name, file and start line; Locations with line numbers;
 * Mappings for native and kernel frames; labels pid, tid, thread, comm, gil,
 * python, cgroup, cgroup_path, container, ns_pid, off_cpu_reason. One Sample
 * per distinct (labels, stack), so `pprof -traces` lists each stack once.
 *
 * The timeline travels beside them in field 100 of Profile (pyebpf_timeline
 * in profile.proto; other readers skip unknown fields): the adds in the order
 * made, each a varint (sample index << 3 | 4 if its time is before the
 * previous timed add's | 2 if untimed | 1 if its count is not 1), then the
 * count if not 1, then if timed the distance in microseconds from the
 * previous timed add's time (the first: from the profile's start), a varint. `pyebpf report` reads it back for --since/--until, timelines
 * and pprof written again byte for byte. Files of older pyebpf versions (one
 * Sample per add with a "time" label) are read too.
 */
#ifndef PYEBPF_WRITE_PPROF_H
#define PYEBPF_WRITE_PPROF_H

#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

#define PPROF_TIMELINE_FIELD 100

/* The profile's meta gives period, start and duration; 0, or -1 with errno set. */
int pprof__write(const struct profile *p, FILE *out);

/*
 * What a push sends (push/series.h): one kind of time as the one sample
 * type (cpu or wall, nanoseconds, the period type alike: what Pyroscope's
 * process_cpu and wall profile types read), the entries that have it, the
 * labels a backend filters by (thread_name, comm, gil, python,
 * off_cpu_reason; no pid or tid, which would make a series of each), and
 * no timeline.
 */
enum pprof_only {
	PPROF_EVERYTHING = 0, /* pprof__write's file */
	PPROF_ONLY_CPU,
	PPROF_ONLY_WALL,
	PPROF_ONLY_MEMORY, /* a memory profile's six types (its only kind), with a push's labels */
};
struct pprof_opts {
	enum pprof_only only;
	int gzip_level; /* 0: zlib's default */
};
int pprof__write_opts(const struct profile *p, const struct pprof_opts *o, FILE *out);
/* The same into memory (a push's body): *out (malloc'd) and *len set only on success. */
int pprof__write_mem(const struct profile *p, const struct pprof_opts *o, uint8_t **out, size_t *len);

#endif
