/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * --continuous DIR: the recording cut into intervals, each written to DIR as
 * one pprof file (atomic rename, names sortable by time), the oldest pruned
 * beyond --keep/--max-disk. A failed write is reported and counted, and
 * recording goes on. Each file names the host it was recorded on, and the
 * push's --service-name and --labels (comments, push/series.h), for the
 * backends it is pushed to.
 */
#ifndef PYEBPF_INTERVALS_H
#define PYEBPF_INTERVALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "push/series.h"

struct intervals {
	const char *dir;
	double seconds;    /* --interval */
	size_t keep;       /* --keep; 0: any number */
	uint64_t max_disk; /* --max-disk; 0: any size */
	/* the interval being recorded */
	uint64_t start_ns; /* monotonic; sample times are relative to it */
	int64_t epoch_ns;
	double cpu; /* own CPU seconds when it began */
	uint64_t seq, files_written, write_failures;
	size_t foreign_told; /* files in dir that are not ours, as last said */
	bool log;            /* a line per file written: stderr is a log (systemd, a file), no status line */
	/* --push/--otlp (push/sender.h): files a backend lacks are kept past
	 * --keep; `written` is told of each new file. NULL: not pushing. */
	bool (*unsent)(void *ctx, const char *name);
	void (*written)(void *ctx, const char *name, const struct profile *prof);
	void *push_ctx;
	/* How an interval's samples are cleared once written (the ingest's,
	 * which carries what memory still held needs); NULL: profile__clear_samples. */
	void (*clear)(void *ctx);
	void *clear_ctx;
	/* --service-name and --labels, kept in each file beside the host, so a
	 * later `pyebpf push DIR` files it where the live push did. */
	struct series_config identity;
	uint64_t unsent_deleted; /* unsent files --max-disk forced out */
};

/* A new interval begins at now (monotonic). */
void intervals__begin(struct intervals *iv, uint64_t now);
bool intervals__due(const struct intervals *iv, uint64_t now);
/* Write the interval's samples (period from freq Hz), clear them, prune. */
void intervals__write(struct intervals *iv, struct profile *prof, uint64_t freq, uint64_t now);
/* pyebpf's CPU since the interval began, in percent of one core. */
double intervals__cpu_share(const struct intervals *iv, uint64_t now);

#endif
