// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The sampler: a perf_event program run by a cpu-clock timer on every CPU.
 * It filters (target pids, pyebpf itself), reads the kernel and user stacks
 * and sends one event per sample through a ring buffer. It never names
 * anything: symbolization is userspace's job.
 *
 * The Python stack walk (python.bpf.h) and the --native stack copy
 * (ustack.bpf.h) are its parts; process events live in proc_events.bpf.c.
 */
#include "shared.bpf.h"
#include "python.bpf.h"
#include "ustack.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	struct pyebpf_sample *s;
	long kbytes = 0, ubytes;
	__u32 kn, un, n, size;

	if (!wanted(pid))
		return 0;

	s = sample_buf();
	if (!s) {
		count(PYEBPF_CNT_SCRATCH_ERR);
		return 0;
	}
	s->h.type = PYEBPF_EVENT_SAMPLE;
	s->h.pid = pid;
	s->h.tid = (__u32)id;
	s->h.cpu = bpf_get_smp_processor_id();
	s->h.ts_ns = bpf_ktime_get_ns();
	s->cgroup_id = bpf_get_current_cgroup_id();
	s->flags = 0;
	s->py_cycle = 0;
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	if (kernel_stacks) {
		kbytes = bpf_get_stack(ctx, s->stack, PYEBPF_MAX_STACK * 8, 0);
		if (kbytes < 0) {
			s->flags |= PYEBPF_SAMPLE_KSTACK_ERR;
			count(PYEBPF_CNT_KSTACK_ERR);
			kbytes = 0;
		}
	}
	kn = (__u32)kbytes / 8;
	if (kn > PYEBPF_MAX_STACK) /* bounds the offset below for the verifier */
		kn = PYEBPF_MAX_STACK;

	/* --native unwinds the copied stack with DWARF CFI instead. */
	ubytes = ustack_copy ? 0 : bpf_get_stack(ctx, &s->stack[kn], PYEBPF_MAX_STACK * 8, BPF_F_USER_STACK);
	if (ubytes < 0) {
		/* Kernel threads have no user stack: not a failure. */
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		if (BPF_CORE_READ(task, mm)) {
			s->flags |= PYEBPF_SAMPLE_USTACK_ERR;
			count(PYEBPF_CNT_USTACK_ERR);
		}
		ubytes = 0;
	}
	un = (__u32)ubytes / 8;
	if (un > PYEBPF_MAX_STACK)
		un = PYEBPF_MAX_STACK;
	s->kstack_len = kn;
	s->ustack_len = un;

	python_stack(s, pid, (__u32)id);
	if (ustack_copy) {
		n = s->py_len;
		if (n > PYEBPF_MAX_PY_FRAMES)
			n = PYEBPF_MAX_PY_FRAMES;
		s->py_len = n;
		size = PYEBPF_PY_SAMPLE_SIZE(n);
		size += copy_user_stack(s, size);
	} else if (s->flags & PYEBPF_SAMPLE_PY) {
		/* Python frames follow the whole native stack array. */
		n = s->py_len;
		if (n > PYEBPF_MAX_PY_FRAMES)
			n = PYEBPF_MAX_PY_FRAMES;
		size = PYEBPF_PY_SAMPLE_SIZE(n);
	} else {
		n = kn + un;
		if (n > 2 * PYEBPF_MAX_STACK)
			n = 2 * PYEBPF_MAX_STACK;
		size = PYEBPF_SAMPLE_SIZE(n);
	}
	if (bpf_ringbuf_output(&events, s, size, wakeup_flag())) {
		count(PYEBPF_CNT_RB_FULL);
		return 0;
	}
	count(PYEBPF_CNT_SAMPLES);
	return 0;
}
