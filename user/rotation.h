/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Continuous mode's files: one pprof per interval in a directory, named so
 * that names sort by time, the oldest deleted beyond --keep N or --max-disk.
 */
#ifndef PYEBPF_ROTATION_H
#define PYEBPF_ROTATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "60s", "5m", "1h", "90" (seconds), at least 1 s; 0, or -1 when invalid. */
int parse_interval(const char *s, double *seconds);
/* "512M", "2G", "100K", "12345" (bytes), more than 0; 0, or -1 when invalid. */
int parse_size(const char *s, uint64_t *bytes);

/* "pyebpf-20261122T101500.123Z-000007.pb.gz" for an interval starting at epoch_ns. */
void rotation_file_name(int64_t epoch_ns, uint64_t seq, char *buf, size_t size);

/* Is `name` exactly an interval file name pyebpf writes? Its sequence number in *seq. */
bool rotation_parse_name(const char *name, uint64_t *seq);

/*
 * Delete the oldest interval files of dir until at most `keep` remain (0: any
 * number) and they take at most max_bytes (0: any size); the newest is never
 * deleted. Returns the number deleted, or -1 when dir cannot be read.
 */
int rotation_prune(const char *dir, size_t keep, uint64_t max_bytes);

#endif
