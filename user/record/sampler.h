/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The sampler: the BPF skeleton, its maps, the perf events that run it, the
 * process tracepoints and the ring buffer. The one room that links libbpf;
 * each function prints one error line when it fails.
 */
#ifndef PYEBPF_SAMPLER_H
#define PYEBPF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/kernel_plan.h"
#include "pyebpf.h"
#include "python/detect.h"

struct sampler_config {
	bool all;                 /* sample every process (else only targets) */
	bool follow_forks;        /* children of targets become targets */
	const char *const *comms; /* --comm: processes of these names become targets, now and later */
	size_t ncomms;
	bool kernel_stacks;
	uint32_t ustack_copy;       /* --native: stack bytes copied per sample; 0: frame-pointer walk */
	const uint64_t *cgroup_ids; /* only these cgroups (and below); none: no cgroup filter */
	size_t ncgroup_ids;
	bool verbose; /* libbpf's debug output and the verifier log */
	/* The highest rate sampler__start will be given, in Hz: it sizes the
	 * ring buffer (a higher one may lose samples, counted); 0: not known,
	 * sized for 1,000 Hz. */
	uint64_t freq;
	bool on_cpu;  /* the timer samples running threads (--mode cpu, wall) */
	bool off_cpu; /* the switch hooks weigh time off the CPU (--mode wall, off-cpu) */
	bool dump;    /* `pyebpf dump`: only the dump iterator (sampler__dump), no tracepoints */
	/* --mode memory: a sample every this many bytes of anonymous memory the
	 * targets map in, on average (bpf/memory.bpf.c); 0: not this mode. */
	uint64_t mem_sample_bytes;
};

/* Called with each record read from the ring buffer. */
typedef int (*sampler_event_fn)(void *ctx, void *data, size_t size);

struct sampler;

/* Open, configure and load the BPF programs, attach the process tracepoints
 * and open the ring buffer; NULL after one error line. */
struct sampler *sampler__new(const struct sampler_config *c, sampler_event_fn fn, void *ctx);
void sampler__free(struct sampler *s); /* accepts NULL */

int sampler__add_target(struct sampler *s, uint32_t pid);
/* --container followed: old_id out of the target cgroups, new_id in (either 0: none); -1 after one error line. */
int sampler__swap_cgroup(struct sampler *s, uint64_t old_id, uint64_t new_id);
/* Is any process of the target map (the pids given and those followed) alive? */
bool sampler__targets_alive(struct sampler *s);
/* Start sampling every online CPU at freq Hz (again: closes the old events
 * first), and off-CPU time from now on at the same rate. */
int sampler__start(struct sampler *s, uint64_t freq);
/* No new samples; off-CPU time still running is counted up to now (its
 * samples follow in the ring buffer: drain it next). */
void sampler__stop(struct sampler *s);
int sampler__ncpus(const struct sampler *s); /* CPUs sampled */
/* --mode memory: where growth is seen (a kernel function at fentry, or the
 * tracepoint "mm_lru_insertion" where fentry is refused); NULL in other modes. */
const char *sampler__mem_hook(const struct sampler *s);
/* The build of the BPF programs this kernel took, and how --mode wall sends its samples. */
const struct kernel_plan *sampler__plan(const struct sampler *s);

/* Tell the BPF walker where pid's interpreter is; in NULL: forget pid. */
void sampler__python(struct sampler *s, uint32_t pid, const struct py_interp *in);
/* What BPF reads of pid's context variables (record/request_labels.h). */
void sampler__requests(struct sampler *s, uint32_t pid, const struct pyebpf_py_ctx *c);
/* pid's span `span` is named in userspace (py_spans_known): BPF reads only its id from now on. */
void sampler__span_known(struct sampler *s, uint32_t pid, uint64_t span, uint32_t gen);
void sampler__forget(struct sampler *s, uint32_t pid);
/* Index pid's thread states for BPF (include/pyebpf.h: py_tstate_index). */
int sampler__index_threads(struct sampler *s, uint32_t pid);
/* A sample of pid said PYEBPF_PY_THREAD_LIMIT: index it (at most once a second). */
void sampler__thread_beyond_walk(struct sampler *s, uint32_t pid);

/* `pyebpf dump`: one sample of every thread of pid, handed to the callback
 * as the iterator runs; -1 after one error line. */
int sampler__dump(struct sampler *s, uint32_t pid);

/* Wait up to timeout_ms for records and hand them to the callback; < 0: an error line was printed. */
int sampler__poll(struct sampler *s, int timeout_ms);
/* Everything still in the ring buffer. */
int sampler__drain(struct sampler *s);

/* Counter totals over all CPUs, totals[PYEBPF_CNT__COUNT]. */
void sampler__counters(const struct sampler *s, uint64_t *totals);
/* The sample program's mean run time in microseconds, or -1 when unknown. */
/* Every run of the timer program and their BPF time (the kernel's statistics); -1: unknown. */
int sampler__sample_runs(const struct sampler *s, uint64_t *runs, uint64_t *run_ns);
/* --mode memory (with PYEBPF_BPF_STATS=1): the growth hook's runs (every
 * process's pages, not only the targets') and the BPF time of all of memory
 * mode's programs; -1: unknown. */
int sampler__mem_runs(const struct sampler *s, uint64_t *runs, uint64_t *run_ns);
/* --mode wall/off-cpu: context switches seen and the switch hook's BPF time
 * (with the finish_task_switch kprobe's where that path is taken; its task
 * works, which send the samples, not included). */
int sampler__switch_stats(const struct sampler *s, uint64_t *runs, uint64_t *run_ns);

#endif
