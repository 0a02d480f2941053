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

#ifdef PYEBPF_KERNEL_COMPAT
/*
 * Before Linux 5.11 there is no task storage: the compat build keeps only
 * when each thread left the CPU, by tid, in an LRU table (a gone thread's
 * entry makes room by itself). Its intervals are sent from the
 * finish_task_switch kprobe right after the switch in, so nothing else of
 * a thread has to be kept. `born` tells a reused tid from the thread that
 * had it.
 */
struct off_since {
	__u64 since; /* as off_task.since */
	__u64 born;  /* task_struct.start_time */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, struct off_since);
} off_since_by_tid SEC(".maps") __weak;

/* Where `task`'s switch-out time is kept (NULL: nowhere yet; with create,
 * a fresh zero record). */
static __always_inline __u64 *since_slot(struct task_struct *task, bool create)
{
	__u32 tid = (__u32)BPF_CORE_READ(task, pid);
	__u64 born = BPF_CORE_READ(task, start_time);
	struct off_since *o = bpf_map_lookup_elem(&off_since_by_tid, &tid), fresh = { .born = born };

	if (o && o->born == born)
		return &o->since;
	if (!create)
		return NULL;
	if (bpf_map_update_elem(&off_since_by_tid, &tid, &fresh, BPF_ANY))
		return NULL;
	o = bpf_map_lookup_elem(&off_since_by_tid, &tid);
	return o ? &o->since : NULL;
}
#else
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[2]);
} off_since_by_tid SEC(".maps") __weak; /* the compat build's (one skeleton for every build) */
#endif

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

#ifdef PYEBPF_KERNEL_COMPAT
/* No bpf_task_pt_regs before 5.15: x86-64 and arm64 save the user registers at the
 * top of the task's kernel stack (THREAD_SIZE 16 KiB, no padding there;
 * a KASAN kernel's 32 KiB stack reads as "no syscall"). */
#define COMPAT_THREAD_SIZE 16384
static __always_inline struct pt_regs *user_regs(struct task_struct *task)
{
	void *stack = BPF_CORE_READ(task, stack);

	return stack ? (struct pt_regs *)(stack + COMPAT_THREAD_SIZE) - 1 : NULL;
}
#define MAX_SYSCALL_NR 1024
#else
#define user_regs(task) ((struct pt_regs *)bpf_task_pt_regs(task))
#endif

/* The user syscall in progress (-1: none) and its first argument. */
static __always_inline void syscall_in_progress(struct task_struct *task, __s32 *nr, __u64 *arg)
{
	struct pt_regs *regs = user_regs(task);

	*nr = -1;
	*arg = 0;
	if (!regs)
		return;
	*nr = ARCH_SYSCALL_NR(regs);
	*arg = ARCH_SYSCALL_ARG0(regs);
#ifdef PYEBPF_KERNEL_COMPAT
	if (*nr < -1 || *nr >= MAX_SYSCALL_NR)
		*nr = -1;
#endif
}

/* The task's cgroup v2 and its ancestors against --cgroup/--container. */
#ifdef PYEBPF_KERNEL_COMPAT
/* Before 6.0 a cgroup keeps its ancestors' ids (shared.bpf.h). */
static __always_inline int task_in_target_cgroup(struct task_struct *task)
{
	struct cgroup___ids *cg = (struct cgroup___ids *)BPF_CORE_READ(task, cgroups, dfl_cgrp);

	for (int i = 0; i <= MAX_CGROUP_LEVEL; i++) {
		__u64 cid = ancestor_cgroup_id(cg, i);

		if (!cid)
			return 0;
		if (bpf_map_lookup_elem(&target_cgroups, &cid))
			return 1;
	}
	return 0;
}
#else
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
#endif

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

/*
 * The switch hook runs at every context switch of the host, and most concern
 * no target: with -p/--comm, each task's answer is kept in its own storage,
 * so a task that is not a target costs one storage lookup per switch, not a
 * hash lookup of its process. Valid while targets_gen is what it was when
 * decided (gen + 1: a fresh record, 0, is no answer). A task stops being a
 * target only by exiting, which frees its record. With --cgroup/--container
 * the answer is kept with the task's cgroup: a task moved into another
 * cgroup is asked again (two loads to tell, where the ancestors' walk costs
 * a hash lookup per level).
 */
struct task_target {
	__u32 gen;
	__u32 wanted;
	__u64 cgrp; /* task->cgroups->dfl_cgrp when decided */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_target);
} task_targets SEC(".maps") __weak; /* not created by the compat build (no task storage before 5.11) */

/*
 * The answer for the task each CPU last switched in: the task that leaves a
 * CPU is the one that came in last there, so a switch looks only the
 * incoming task up. Checked by task and generation (the set may grow while
 * it runs: an exec into a --comm name).
 */
struct cpu_current {
	__u64 task; /* the task_struct's address */
	__u32 gen;
	__u32 wanted;
	__u64 cgrp; /* as in task_target: a task moved while it ran is asked again */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_current);
} cpu_current SEC(".maps") __weak;

/* Are the answers kept (any target filter: without one, every task is)? */
static __always_inline bool targets_cached(void)
{
	return filter_pids || filter_cgroups;
}

/* The cgroup the answer depends on; 0 without a cgroup filter. task is the
 * switch hook's (a BTF pointer): plain loads, not two probe-read calls. */
static __always_inline __u64 task_cgroup_key(struct task_struct *task)
{
	return filter_cgroups ? (__u64)task->cgroups->dfl_cgrp : 0;
}

/* task_wanted(), cached where it can be; task has an mm (a user task) and
 * is in cgroup cgrp (task_cgroup_key()). 2: a target now, where the kept
 * answer said it was not (an exec into a --comm name, a move into a target
 * cgroup): when its present wait began is unknown. */
static __always_inline int task_is_target(struct task_struct *task, __u64 cgrp)
{
#ifndef PYEBPF_KERNEL_COMPAT
	if (targets_cached()) {
		__u32 gen = targets_generation(); /* before the lookup */
		struct task_target *c = bpf_task_storage_get(&task_targets, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		int w;

		if (c && c->gen == gen && c->cgrp == cgrp)
			return c->wanted;
		w = task_wanted(task);
		if (c) {
			int turned = c->gen && !c->wanted && w;

			c->wanted = w;
			c->gen = gen;
			c->cgrp = cgrp;
			return turned ? 2 : w;
		}
		return w;
	}
#endif
	return task_wanted(task);
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
