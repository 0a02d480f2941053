// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The sampler: a perf_event program run by a cpu-clock timer on every CPU.
 * It filters (target pids, pyebpf itself), reads the kernel and user stacks
 * and sends one event per sample through a ring buffer. It never names
 * anything: symbolization is userspace's job.
 *
 * The stacks are read by capture.bpf.h (the Python walk in python.bpf.h,
 * the --native copy in ustack.bpf.h); process events live in
 * proc_events.bpf.c, off-CPU time in offcpu.bpf.c.
 */
#define PYEBPF_CU sample
#include "capture.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Ticks a sample's BPF outran. The hrtimer behind cpu-clock moves on past
 * the periods its handler overran (2,000 Python frames at -F 10000: 128 us
 * against 100), so the thread that was sampled loses those ticks. They are
 * handed to the next sample on this CPU if it is of the same thread (a busy
 * thread keeps its time in CPU and in wall mode: each sample stands for the
 * ticks it and the skipped ones were worth, as perf weighs a sample by its
 * period), else counted lost. Only this overrun: the timer does not tick on
 * an idle CPU, so a gap between ticks says nothing of what was skipped.
 */
struct tick_owed {
	__u64 ticks; /* skipped after the last sample on this CPU */
	__u32 tid;   /* of that sample's thread */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tick_owed);
} last_tick SEC(".maps");

/* Cap on what one sample may carry (a stall of the handler is not time
 * the thread ran sampled). */
#define MAX_TICK_WEIGHT 1000

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), t0, took;
	__u32 pid = id >> 32, tid = (__u32)id, zero = 0, weight = 1;
	struct tick_owed *o;
	struct pyebpf_sample *s;

	if (!wanted(pid))
		return 0;
	/* What a sample taken costs, apart from the ticks that take none. */
	t0 = bpf_ktime_get_ns();
	o = bpf_map_lookup_elem(&last_tick, &zero);
	if (o && o->ticks) {
		if (o->tid == tid)
			weight += (__u32)o->ticks;
		else
			count_n(PYEBPF_CNT_SKIPPED_LOST, o->ticks);
		o->ticks = 0;
	}
	s = sample_buf();
	if (!s) {
		count(PYEBPF_CNT_SCRATCH_ERR);
		return 0;
	}
	sample_header(s, pid, tid, bpf_get_current_cgroup_id());
	s->off.weight = weight;
	send_sample(s, capture_current(ctx, s));
	count(PYEBPF_CNT_TAKEN);
	took = bpf_ktime_get_ns() - t0;
	count_n(PYEBPF_CNT_TAKEN_NS, took);
	/* The timer moves on past the periods this sample outlasted. */
	if (timer_period_ns && took >= timer_period_ns) {
		__u64 n = took / timer_period_ns;

		count_n(PYEBPF_CNT_SKIPPED, n);
		if (o) {
			o->ticks = n < MAX_TICK_WEIGHT ? n : MAX_TICK_WEIGHT;
			o->tid = tid;
		}
	}
	return 0;
}
