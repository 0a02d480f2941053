/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * pprof (gzip-compressed profile.proto), read by `go tool pprof`, Grafana
 * Pyroscope and friends: sample types samples/count and cpu/nanoseconds;
 * Functions with name, file and start line; Locations with line numbers;
 * Mappings for native and kernel frames; labels pid, tid, thread, comm, gil.
 */
#ifndef PYEBPF_WRITE_PPROF_H
#define PYEBPF_WRITE_PPROF_H

#include <stdint.h>
#include <stdio.h>

#include "../profile.h"

struct pprof_opts {
	uint64_t period_ns;      /* nanoseconds between samples on a CPU (1e9 / Hz) */
	int64_t time_nanos;      /* when recording started, since the epoch */
	int64_t duration_nanos;
};

/* 0, or -1 with errno set. */
int pprof__write(const struct profile *p, const struct pprof_opts *o, FILE *out);

#endif
