/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Ingest: one ring-buffer record at a time, raw bytes → checked sample
 * (sample_view.h) → frames → profile. Behind it the symbolizers: processes
 * and their mappings (procs.h), Python code objects and thread names
 * (python/), --native unwinding and merging (native/), kernel symbols
 * (kallsyms.h). Free of libbpf: what needs the BPF side is asked through
 * two hooks, so unit tests and a fuzzer drive it with synthetic samples.
 */
#ifndef PYEBPF_INGEST_H
#define PYEBPF_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/filter.h"
#include "native/stack.h"
#include "profile/profile.h"
#include "python/detect.h"
#include "record/task_sampler.h"

struct ingest_hooks {
	void *ctx;
	/* pid's Python state changed: `in` is where its interpreter is (register
	 * it with the BPF walker), or NULL (it is not Python any more: forget it). */
	void (*python_changed)(void *ctx, uint32_t pid, const struct py_interp *in);
	/* pid exec'd, or exited and its caches are freed: forget it in BPF too. */
	void (*forget_pid)(void *ctx, uint32_t pid);
	/* A sample of pid's said its thread lists go on beyond the BPF walk:
	 * index its threads (NULL: nobody to ask). */
	void (*thread_beyond_walk)(void *ctx, uint32_t pid);
	/* What BPF must read of pid's context variables (its requests) changed. */
	void (*requests_found)(void *ctx, uint32_t pid, const struct pyebpf_py_ctx *c);
	/* pid's span `span` is named (under py_ctx generation gen): BPF need
	 * not read its trace, name and parent again (NULL: it reads them). */
	void (*span_named)(void *ctx, uint32_t pid, uint64_t span, uint32_t gen);
};

struct ingest_config {
	const struct filter
		*filter;      /* kept, not copied, not to change: stacks are cached filtered; NULL: keep everything */
	bool native;          /* --native: samples may carry registers and a stack copy */
	const char *kallsyms; /* kernel symbols file, read at the first kernel frame to name; NULL: [unknown] */
	/* ... in a thread, while samples with kernel frames wait for it, not the
	 * reader (ingest__name_waiting); false: the reader waits. */
	bool kernel_frames_later;
	const char *const *debug_dirs; /* --debug-dir, NULL-terminated; NULL: the default */
	uint64_t task_period_ns;       /* --mode wall: asyncio tasks sampled at this period (task_sampler.h); 0: not */
	/* Thread samples get `[task NAME]` above the coroutine of the asyncio
	 * task their thread runs (3.14+: read by BPF with the sample). */
	bool running_tasks;
	bool memory;               /* --mode memory: memory samples' growth is kept in a ledger of what is held */
	bool requests;             /* label samples by their request (docs/requests.md) */
	const char *context_label; /* --context-label: a context variable's name; NULL: none */
};

/* A sample named later than this after it was taken is counted late. */
#define INGEST_LATE_NS (1000 * 1000000ULL)

struct ingest_stats {
	uint64_t samples;        /* sample events received */
	uint64_t bad;            /* malformed events ignored */
	uint64_t filtered;       /* samples left out by the filters */
	uint64_t offcpu_ticks;   /* timer ticks of off-CPU time received (--mode wall/off-cpu) */
	uint64_t offcpu_records; /* ... in this many records (a wait is one record, worth its ticks) */
	uint64_t oncpu_extra;    /* ticks on-CPU samples stand for beyond one each (the timer skipped them) */
	/* Samples (by weight) whose stack ... */
	uint64_t fp_cut;         /* ended where frame pointers did ([no frame pointers]) */
	uint64_t no_symbol;      /* has a native frame without a symbol (named module+0xSTART) */
	uint64_t no_symbol_leaf; /* ... as its leaf */
	/* On-CPU samples named more than INGEST_LATE_NS after they were taken: a
	 * process gone by then is named from what was read of it while alive. */
	uint64_t late;
	uint64_t most_behind_ns; /* the longest a sample waited to be named */
};

struct ingest;

struct ingest *ingest__new(struct profile *prof, const struct ingest_config *c, const struct ingest_hooks *h);
/* kernel_frames_later: name and add the samples waiting for the kernel's
 * symbols if they are read (when wait: once they are). Before the profile
 * is written or its time base moves. ingest__event and ingest__gc call it
 * without waiting. */
void ingest__name_waiting(struct ingest *in, bool wait);
/* The kernel's symbols now (read here if no thread reads them), and the
 * samples waiting for them named: before a burst of samples with kernel
 * frames (--mode wall's stop flush), which would each wait, and be named one
 * by one, bypassing the stack cache. */
void ingest__kernel_symbols(struct ingest *in);
void ingest__free(struct ingest *in); /* accepts NULL */

/* One ring-buffer record (libbpf's ring_buffer_sample_fn shape: ctx is the ingest). */
int ingest__event(void *ctx, void *data, size_t size);
/* Sample times are kept relative to this (monotonic ns): the recording's or the interval's start. */
void ingest__set_time_base(struct ingest *in, uint64_t start_ns);
/* Free the state of processes that exited a while ago (calls forget_pid). */
void ingest__gc(struct ingest *in, uint64_t now);
/* Look at the variables of processes whose requests were not found yet
 * (record/request_labels.h), at most INGEST_LOOKING_MAX of them; true while
 * more looks are wanted: call again in REQUEST_LOOK_EVERY_MS. */
#define INGEST_LOOKING_MAX 16
bool ingest__look_for_requests(struct ingest *in);
/* Look at pid now (is it Python? where is its interpreter?), before any
 * sample of it: a target's first waits then carry their Python stacks. */
void ingest__register(struct ingest *in, uint32_t pid);

/* Task time: at each period elapsed since the last call, one sample of
 * every pending asyncio task of the Python processes known (one walk a call,
 * weighted by the periods it stands for). Nothing without task_period_ns. */
void ingest__tasks_tick(struct ingest *in, uint64_t now);
/* NULL without task_period_ns nor running_tasks. */
const struct task_stats *ingest__task_stats(const struct ingest *in);
/* `pyebpf dump`: every pending task now, one sample each (with running_tasks
 * or task_period_ns). */
void ingest__tasks_now(struct ingest *in, uint64_t now);

/* --mode memory: the memory held now (an ended process's: at its end),
 * into the profile as LABEL_MEM_HELD entries, and at each process's
 * high-water mark as LABEL_MEM_PEAK ones, untimed (before a profile is
 * written); then the ended processes are let go, and the peaks start anew. */
void ingest__mem_held(struct ingest *in);
/* --mode memory without held memory in the output (top): the sites whose
 * pages all went back are forgotten, as ingest__mem_held does after its walk. */
void ingest__mem_tidy(struct ingest *in);
/* An interval's end: the profile's samples and requests cleared
 * (profile__clear_samples), the requests of memory still held carried. */
void ingest__clear_samples(struct ingest *in);
struct mem_ledger;
const struct mem_ledger *ingest__mem_ledger(const struct ingest *in); /* NULL outside memory mode */

const struct ingest_stats *ingest__stats(const struct ingest *in);
size_t ingest__processes(const struct ingest *in); /* seen, alive or not */
uint64_t ingest__python_processes(const struct ingest *in);
const struct native_stats *ingest__native_stats(const struct ingest *in); /* NULL without --native */
/* Raw stacks named, and samples whose stack came from the cache. */
void ingest__stack_cache_counts(const struct ingest *in, uint64_t *named, uint64_t *cached);

/* Of a Python stack (leaf first) that ends in a loop of `cycle` frames, the
 * frames to keep so the loop appears once. */
uint32_t ingest_frames_before_loop(const struct pyebpf_pyframe *f, uint32_t n, uint32_t cycle);

/* Frames one sample can become: kernel, Python (or native merged with Python), marks. */
#define INGEST_MAX_FRAMES (2 * PYEBPF_MAX_STACK + PYEBPF_MAX_PY_FRAMES + NATIVE_MAX_FRAMES + 8)

#endif
