/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * One sample: the header, then after the kernel and user stacks the Python
 * stack and (--native) the user stack copy, sized for the ring buffer. The
 * timer sampler (sample.bpf.c) takes all of a running task here
 * (capture_current); the off-CPU programs (offcpu.bpf.c,
 * offcpu_flush.bpf.c) read the kernel and user stacks their own way and
 * share finish_sample().
 */
#ifndef PYEBPF_CAPTURE_BPF_H
#define PYEBPF_CAPTURE_BPF_H

#include "shared.bpf.h"
#include "python.bpf.h"
#include "ustack.bpf.h"

/* Header fields every sample has; off-CPU ones set s->off afterwards. */
static __always_inline void sample_header(struct pyebpf_sample *s, __u32 pid, __u32 tid, __u64 cgroup_id)
{
	s->h.type = PYEBPF_EVENT_SAMPLE;
	s->h.pid = pid;
	s->h.tid = tid;
	s->h.cpu = bpf_get_smp_processor_id();
	s->h.ts_ns = bpf_ktime_get_ns();
	s->cgroup_id = cgroup_id;
	s->flags = 0;
	s->py_cycle = 0;
	__builtin_memset(&s->off, 0, sizeof(s->off));
	s->off.weight = 1;
	s->off.syscall = -1;
}

/* Python frames (unless py_done: read already) and the --native copy after
 * the native stacks (kn + un frames in s->stack); returns the bytes to send. */
static __always_inline __u32 finish_sample(struct pyebpf_sample *s, struct task_struct *task, __u32 kn, __u32 un,
					   int py_done)
{
	__u32 n, size;

	if (kn > PYEBPF_MAX_STACK)
		kn = PYEBPF_MAX_STACK;
	if (un > PYEBPF_MAX_STACK)
		un = PYEBPF_MAX_STACK;
	s->kstack_len = kn;
	s->ustack_len = un;
	if (!py_done)
		python_stack(s, s->h.pid, s->h.tid);
	if (ustack_copy) {
		n = s->py_len;
		if (n > PYEBPF_MAX_PY_FRAMES)
			n = PYEBPF_MAX_PY_FRAMES;
		s->py_len = n;
		size = PYEBPF_PY_SAMPLE_SIZE(n);
		size += copy_user_stack(task, s, size);
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
	return size;
}

/* The stacks of the current task, as the kernel hands them to `ctx` (a
 * perf event's registers). */
static __always_inline __u32 capture_current(void *ctx, struct pyebpf_sample *s)
{
	struct task_struct *task = current_task();
	long kbytes = 0, ubytes;
	__u32 kn;

	bpf_get_current_comm(s->task_comm, sizeof(s->task_comm));
	BPF_CORE_READ_STR_INTO(&s->comm, task, group_leader, comm);
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

	/* A Python stack stands for the interpreter's native frames (userspace
	 * reads no user addresses of a sample that has one): the user stack is
	 * walked only without one, and --native unwinds a copy instead. */
	python_stack(s, s->h.pid, s->h.tid);
	ubytes = ustack_copy || ((s->flags & PYEBPF_SAMPLE_PY) && s->py_len)
			 ? 0
			 : bpf_get_stack(ctx, &s->stack[kn], PYEBPF_MAX_STACK * 8, BPF_F_USER_STACK);
	if (ubytes < 0) {
		/* Kernel threads have no user stack: not a failure. */
		if (BPF_CORE_READ(task, mm)) {
			s->flags |= PYEBPF_SAMPLE_USTACK_ERR;
			count(PYEBPF_CNT_USTACK_ERR);
		}
		ubytes = 0;
	}
	return finish_sample(s, task, kn, (__u32)ubytes / 8, 1);
}

static __always_inline int send_sample(struct pyebpf_sample *s, __u32 size)
{
#ifdef PYEBPF_COPIES
	/* A sample that comes as something ends may be its process's last:
	 * its new code objects go ahead of it (copy_new_code). */
	if ((s->flags & PYEBPF_SAMPLE_PY) && (s->flags & (PYEBPF_SAMPLE_OFFCPU | PYEBPF_SAMPLE_MEM)))
		copy_new_code(s);
#endif
	if (bpf_ringbuf_output(&events, s, size, sample_wakeup_flag(s->h.pid, s->flags))) {
		/* Lost: every tick the record stood for (a wait's, or a tick and
		 * those the timer skipped before it), as the summary counts samples. */
		count_n(PYEBPF_CNT_RB_FULL, s->off.weight);
		return -1;
	}
	count(PYEBPF_CNT_SAMPLES);
	return 0;
}

#endif /* PYEBPF_CAPTURE_BPF_H */
