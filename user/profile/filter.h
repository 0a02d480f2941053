/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Which samples and frames a profile keeps: the filters `record` applies as
 * samples arrive and `report` applies to a saved recording, one rule for both.
 */
#ifndef PYEBPF_FILTER_H
#define PYEBPF_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct hashmap;

struct filter {
	uint32_t *pids; /* --pid: keep only these processes */
	size_t npids;
	uint32_t *tids; /* --tid: keep only these threads */
	size_t ntids;
	const char **threads; /* --thread NAME|TID: keep only these threads */
	size_t nthreads;
	const char **exclude_threads; /* --exclude-thread NAME|TID */
	size_t nexclude;
	const char **comms; /* --comm NAME: keep only these process names */
	size_t ncomms;
	const char **containers; /* --container ID: keep only these containers (an id's prefix will do) */
	size_t ncontainers;
	const char **container_names; /* --container NAME: and the containers recorded under these names */
	size_t ncontainer_names;
	const char **labels; /* --label KEY=VALUE: keep only samples with each of these */
	size_t nlabels;
	const char *trace_id;   /* --trace-id: 32 hex digits, either case; NULL: any */
	uint64_t since_ns;      /* --since: from this time into the recording */
	uint64_t until_ns;      /* --until: up to (not including) this time; UINT64_MAX: no limit */
	int64_t since_epoch_ns; /* --since as a wall-clock time; INT64_MIN: none */
	int64_t until_epoch_ns; /* --until as a wall-clock time (not included); INT64_MAX: none */
	bool timed;             /* --since or --until was given: untimed samples go */
	bool gil_only;          /* --gil: only threads holding the GIL */
	uint32_t reasons;       /* --reason: bit (1 << enum offcpu_reason) kept; bit 0: on-CPU; 0: no filter */
	bool no_kernel;         /* --no-kernel: kernel frames go */
	bool python_only;       /* --python-only: only Python frames; samples without any go */
	bool functions;         /* --functions: Python frames by function (line 0), not by line */
	int time_kind;          /* FILTER_TIME_*: threads' time, asyncio tasks' time (LABEL_TASK) or both */
	int mem_kind; /* FILTER_MEM_*: a memory profile's growth, what is held (LABEL_MEM_HELD), at the peak, or all */
	/* Threads ((pid << 32 | tid) keys) that ran on a CPU: only their samples
	 * stay (--exclude-idle, filter_idle.c); NULL: every thread. Not owned. */
	const struct hashmap *ran;
};

enum {
	FILTER_TIME_ALL = 0,     /* every sample */
	FILTER_TIME_THREADS = 1, /* threads' time: task time left out (report's table) */
	FILTER_TIME_TASKS = 2,   /* only asyncio task time (report --tasks) */
};

enum {
	FILTER_MEM_ALL = 0,   /* every sample */
	FILTER_MEM_GROWN = 1, /* memory mapped in while recording */
	FILTER_MEM_HELD = 2,  /* of that, what is still held at the end */
	FILTER_MEM_PEAK = 3,  /* ... held at each process's high-water mark (LABEL_MEM_PEAK) */
};

void filter__init(struct filter *f);
void filter__free(struct filter *f);
/* Does any filter drop samples (rather than only frames)? */
bool filter__drops_samples(const struct filter *f);

/*
 * The window in wall-clock time for a recording that started at start_ns
 * (epoch): offsets and wall-clock bounds together, the narrower of each.
 */
void filter__window(const struct filter *f, int64_t start_ns, int64_t *since, int64_t *until);
/*
 * The same filter for a recording that starts at start_ns (epoch) and the
 * window [since, until) in wall-clock time: the window as offsets into it.
 * Shares f's lists: free only f.
 */
struct filter filter__for_window(const struct filter *f, int64_t start_ns, int64_t since, int64_t until);

/* A thread's key in a filter's `ran` set: (pid << 32 | tid). */
static inline uint64_t filter__thread_key(const struct sample_labels *l)
{
	return (uint64_t)l->pid << 32 | l->tid;
}

/* Does a sample with these labels, taken at time_ns (or PROFILE_NO_TIME), stay? */
/* Samples of p the time kind leaves out (task time from the threads' table,
 * or the threads' time from --tasks): a view, not a filter. */
uint64_t filter__other_time(const struct filter *f, const struct profile *p);
bool filter__keep(const struct filter *f, const struct profile *p, const struct sample_labels *l, uint64_t time_ns);
/*
 * The frames that stay, moved to the front of frames (root first); returns
 * their number. With --python-only a stack without Python frames keeps none.
 */
uint32_t filter__frames(const struct filter *f, const struct profile *p, uint32_t *frames, uint32_t n);

/* --functions: each Python frame becomes its function's (line 0). */
void filter__functions(const struct filter *f, struct profile *p, uint32_t *frames, uint32_t n);

/*
 * A new profile with the samples and frames of `in` that stay, and its meta;
 * *dropped counts the samples left out.
 */
struct profile *filter__apply(const struct filter *f, const struct profile *in, uint64_t *dropped);
/*
 * The samples and frames of `in` that stay, added to `out` (notes and
 * modules too): times moved by shift_ns, counts times scale (the caller
 * keeps profile__total(in) * scale within INT64_MAX), label flags or'ed
 * with flags. Returns the samples left out. report merges so.
 */
uint64_t filter__copy(const struct filter *f, const struct profile *in, struct profile *out, uint64_t shift_ns,
		      uint64_t scale, uint32_t flags);

#endif
