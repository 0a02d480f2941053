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

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	struct pyebpf_sample *s;

	if (!wanted(pid))
		return 0;
	s = sample_buf();
	if (!s) {
		count(PYEBPF_CNT_SCRATCH_ERR);
		return 0;
	}
	sample_header(s, pid, (__u32)id, bpf_get_current_cgroup_id());
	send_sample(s, capture_current(ctx, s));
	return 0;
}
