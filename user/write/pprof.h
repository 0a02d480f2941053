/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * pprof (gzip-compressed profile.proto), read by `go tool pprof`, Grafana
 * Pyroscope and friends: sample types samples/count and cpu/nanoseconds;
 * Functions with name, file and start line; Locations with line numbers;
 * Mappings for native and kernel frames; labels pid, tid, thread, comm, gil,
 * python, cgroup, cgroup_path, container, ns_pid and the time of each sample.
 */
#ifndef PYEBPF_WRITE_PPROF_H
#define PYEBPF_WRITE_PPROF_H

#include <stdint.h>
#include <stdio.h>

#include "../profile.h"

/* The profile's meta gives period, start and duration; 0, or -1 with errno set. */
int pprof__write(const struct profile *p, FILE *out);

#endif
