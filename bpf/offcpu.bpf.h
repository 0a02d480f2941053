/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What the off-CPU programs share (--mode wall/off-cpu): each target
 * thread's record of its time off the CPU, in task storage (freed with the
 * task, no table to size), and the recording's clock, set by userspace.
 */
#ifndef PYEBPF_OFFCPU_BPF_H
#define PYEBPF_OFFCPU_BPF_H

#include "shared.bpf.h"
#include "offcpu_weight.h"

/* Written by userspace while running (.bss): nothing counts before start_ns;
 * once stop_ns is set the hooks stand still and the flush counts what is
 * still off the CPU up to it. */
__u64 offcpu_start_ns __weak;
__u64 offcpu_stop_ns __weak;
__u32 offcpu_freq __weak; /* Hz: what one tick is worth (follows --rate-limit) */
/* bench/offcpu.sh only: the switch hook returns at once, to measure what
 * running any program at each switch costs (PYEBPF_BENCH_EMPTY_HOOK=1). */
const volatile __u8 offcpu_empty_hook __weak = 0;

/*
 * One thread's off-CPU record. An interval runs from `since` (switch out) to
 * the switch back in, where it is weighed; one worth a sample becomes
 * `pending` with the kernel stack it waited in, and is sent from the
 * thread's own context (a task work as it returns to user mode), where its
 * user memory can be read.
 */
#define SINCE_PREEMPTED 1ULL /* bit 0 of off_task.since: it left the CPU runnable */

struct off_task {
	__u64 since; /* left the CPU at (bpf_ktime_get_ns), bit 0: runnable; 0: on it */
	/* The interval weighed at the switch in, waiting to be sent. */
	__u64 pending; /* its weight; 0: none (64 bits: BPF exchanges no less) */
	__u64 pending_since;
	__u64 pending_until;
	__u64 pending_arg;
	__s32 pending_syscall;
	__u32 pending_state;
	__u32 pending_flags;
	__u32 kstack_len;
	__u32 unscheduled; /* no task work will send it: its next switch out does */
	__u32 tid;         /* the thread's (the finish_task_switch path's per-CPU copy: whose it is) */
	__u64 kstack[PYEBPF_MAX_STACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct off_task);
} off_tasks SEC(".maps") __weak;

/* A task seen for the first time has been off the CPU since the recording
 * started, or since it was born. */
static __always_inline __u64 first_since(struct task_struct *task)
{
	__u64 born = BPF_CORE_READ(task, start_time);

	return born > offcpu_start_ns ? born : offcpu_start_ns;
}

/* Ticks worth an interval from `since` to `until` (offcpu_weight.h). */
static __always_inline __u32 interval_weight(__u64 since, __u64 until)
{
	return offcpu_weight(until > since ? until - since : 0, offcpu_freq, bpf_get_prandom_u32());
}

/* An off_task.since taken from the record: the time, clipped to the
 * recording's start, and the state it left in (0: runnable, 1: blocked). */
static __always_inline __u64 since_of(__u64 raw, __u32 *state)
{
	__u64 since = raw & ~SINCE_PREEMPTED;

	*state = raw & SINCE_PREEMPTED ? 0 : 1;
	return since < offcpu_start_ns ? offcpu_start_ns : since;
}

/* The user syscall in progress (-1: none) and its first argument. */
static __always_inline void syscall_in_progress(struct task_struct *task, __s32 *nr, __u64 *arg)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

	*nr = -1;
	*arg = 0;
	if (!regs)
		return;
#ifdef __TARGET_ARCH_x86
	*nr = (__s32)regs->orig_ax;
	*arg = regs->di;
#endif
}

/* The task's cgroup v2 and its ancestors against --cgroup/--container. */
static __always_inline int task_in_target_cgroup(struct task_struct *task)
{
	struct cgroup *cg = BPF_CORE_READ(task, cgroups, dfl_cgrp), *anc;
	int level = BPF_CORE_READ(cg, level);

	for (int i = 0; i <= MAX_CGROUP_LEVEL; i++) {
		__u64 cid;

		if (i > level)
			return 0;
		if (bpf_probe_read_kernel(&anc, sizeof(anc), &cg->ancestors[i]) || !anc)
			return 0;
		cid = BPF_CORE_READ(anc, kn, id);
		if (bpf_map_lookup_elem(&target_cgroups, &cid))
			return 1;
	}
	return 0;
}

/* Whether a task is on a CPU. task_struct.on_cpu is an int before Linux
 * 7.x and a u8 there: read at the size the kernel has (a plain load of a
 * signed field cannot be narrowed by CO-RE). */
static __always_inline int task_on_cpu(struct task_struct *task)
{
	return BPF_CORE_READ_BITFIELD_PROBED(task, on_cpu) != 0;
}

/* wanted() for a task that is not the current one. */
static __always_inline int task_wanted(struct task_struct *task)
{
	__u32 pid = (__u32)BPF_CORE_READ(task, tgid);

	if (pid == 0 || pid == self_pid || !BPF_CORE_READ(task, mm))
		return 0;
	if (filter_pids && !bpf_map_lookup_elem(&targets, &pid))
		return 0;
	return !filter_cgroups || task_in_target_cgroup(task);
}

/* The header of an off-CPU sample of `task` worth `weight` (taken from
 * t->pending) and its stashed kernel stack; returns the kernel frames
 * copied into s->stack. */
static __always_inline __u32 offcpu_sample(struct pyebpf_sample *s, struct task_struct *task, struct off_task *t,
					   __u64 cgroup_id, __u32 weight)
{
	__u32 kn = t->kstack_len;

	s->h.type = PYEBPF_EVENT_SAMPLE;
	s->h.pid = (__u32)BPF_CORE_READ(task, tgid);
	s->h.tid = (__u32)BPF_CORE_READ(task, pid);
	s->h.cpu = bpf_get_smp_processor_id();
	s->h.ts_ns = t->pending_until;
	s->cgroup_id = cgroup_id;
	s->flags = PYEBPF_SAMPLE_OFFCPU;
	s->py_cycle = 0;
	s->off.since_ns = t->pending_since;
	s->off.wait_arg = t->pending_arg;
	s->off.weight = weight;
	s->off.syscall = t->pending_syscall;
	s->off.state = t->pending_state;
	s->off.flags = t->pending_flags;
	BPF_CORE_READ_STR_INTO(&s->task_comm, task, comm);
	BPF_CORE_READ_STR_INTO(&s->comm, task, group_leader, comm);
	if (kn > PYEBPF_MAX_STACK)
		kn = PYEBPF_MAX_STACK;
	if (kn && bpf_probe_read_kernel(s->stack, kn * 8, t->kstack))
		kn = 0;
	return kn;
}

#endif /* PYEBPF_OFFCPU_BPF_H */
