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

/* The start of an interval as its name tells it (to the millisecond, UTC);
 * 0 when the name is not one rotation_parse_name() accepts. */
int64_t rotation_name_time(const char *name);

/* An interval file of a directory. */
struct rotation_file {
	char *name;
	uint64_t size;
	uint64_t seq;
	int64_t start_ns; /* from the name */
	int64_t mtime_ns;
	uint32_t uid;   /* its owner */
	uint64_t nlink; /* its hard links */
	uint64_t dev, ino;
};
/* The interval files of a directory (an open fd), oldest first; NULL with
 * *n == 0 when there are none or it cannot be read. */
struct rotation_file *rotation_list(int dirfd, size_t *n);
void rotation_list_free(struct rotation_file *v, size_t n);

/* Names dated this far past now are not pyebpf's (its clock may step back a little). */
#define ROTATION_FUTURE_NS (60LL * 1000000000LL)

struct rotation_prune {
	size_t keep;         /* keep the newest N interval files; 0: any number */
	uint64_t max_bytes;  /* and within this many bytes; 0: any size */
	const char *written; /* the file just written: counted as the newest, never deleted */
	int64_t now_ns;      /* epoch */
	size_t foreign;      /* out: files of an interval's name that are not pyebpf's, left alone */
	/* A file a backend still lacks (push/sender.h): kept beyond --keep, and
	 * deleted for --max-disk only once every sent file is gone, with a line
	 * that says so. NULL: none is. */
	bool (*unsent)(void *ctx, const char *name);
	void *unsent_ctx;
	size_t unsent_deleted; /* out: unsent files the disk bound forced out */
};

/*
 * Delete the oldest interval files of dir beyond pr's bounds, one line on
 * stderr for each. Only files pyebpf can show it wrote count or are
 * deleted: an interval file's whole name, a regular file, owned by the user
 * pyebpf runs as, with no other hard link, dated no later than now (a
 * planted name dated 2199 would rank newest and push every real file out).
 * Files a backend still lacks go last, and only for the disk bound.
 * Returns the number deleted, or -1 when dir cannot be read.
 */
int rotation_prune(const char *dir, struct rotation_prune *pr);

#endif
