/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Many recordings as one: files named on the command line and the interval
 * files of continuous directories, merged in time order into one profile
 * (labels and timeline kept), reading only the files that overlap the
 * --since/--until window. report and serve read recordings so.
 */
#ifndef PYEBPF_ARCHIVE_H
#define PYEBPF_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/filter.h"
#include "profile/profile.h"

struct archive_file {
	char *path;
	int64_t start_ns;            /* epoch; from an interval file's name, else INT64_MIN until read */
	int64_t end_ns;              /* the next interval's named start; INT64_MAX: not known before reading */
	bool start_exact, end_exact; /* read from the file (else to the millisecond of a name) */
	struct profile *read;        /* read already (to learn its start), not yet merged */
};

struct archive {
	struct archive_file *v;
	size_t n, cap;
	size_t reads; /* files read so far */
	/* When set, file `index` of v is read by it instead of recording__read()
	 * of its path (serve reads only relative to its directory's descriptor);
	 * NULL fails the load as a file that cannot be read does. */
	struct profile *(*reader)(void *ctx, size_t index);
	void *reader_ctx;
};

/* A recording file or a continuous directory (its interval files); -1 after one error line. */
int archive__add(struct archive *a, const char *arg);
void archive__free(struct archive *a);

/* A recording: a regular file of at most PPROF_MAX_SIZE bytes, read without
 * blocking; NULL after one error line. */
struct profile *recording__read(const char *path);
/* The same, relative to a directory, with extra open flags (O_NOFOLLOW). */
struct profile *recording__read_at(int dirfd, const char *path, int flags);

struct archive_stats {
	size_t files;               /* files read (to merge, or to learn where they start) */
	uint64_t samples;           /* in the files read, in the window or not */
	uint64_t dropped;           /* left out by the window and the filters */
	uint64_t other_time;        /* of those, the other kind of time (threads' or tasks': FILTER_TIME_*) */
	int64_t since_ns, until_ns; /* the window, epoch; INT64_MIN / INT64_MAX: open */
	int64_t first_ns, last_ns;  /* what the recordings cover, as far as known without reading them all */
};

/*
 * The samples of every recording that the filters keep, merged: times from
 * the earliest file's start, labels or'ed with `flags`. Different sampling
 * frequencies are counted in the finest one's samples (a note says so);
 * CPU and wall-clock recordings are refused. NULL after one error line.
 */
struct profile *archive__load(struct archive *a, const struct filter *f, uint32_t flags, struct archive_stats *st);

#endif
