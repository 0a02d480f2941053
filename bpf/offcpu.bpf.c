// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Off-CPU time (--mode wall/off-cpu). Cost must not grow with the switch
 * rate, so no stack is walked per switch, and sched_switch is the only
 * hook every switch pays for:
 *
 * - prev side: note when the thread left, and whether it was still
 *   runnable (one store);
 * - next side: weigh the interval in timer ticks (offcpu_weight.h); most
 *   weigh nothing and cost nothing more. One that is worth a sample keeps
 *   the kernel stack it waited in (the task is not running yet, so its
 *   stack can be read), its syscall and the argument, and becomes pending;
 *   a task work is scheduled for the thread;
 * - the task work runs in the thread's own context as it returns to user
 *   mode (from the syscall it waited in, or from the preemption): its user
 *   and Python stacks are still those of the wait, and its memory can be
 *   read. It sends the sample. A thread that wakes and waits again inside
 *   the same syscall (it has not returned to user mode) adds the new
 *   interval to the pending one: same wait, same stacks.
 *
 * bpf_task_work_schedule_resume is Linux 6.18's. Kernels without it take
 * the path the OpenTelemetry profiler takes: a kprobe on finish_task_switch,
 * which runs in the incoming thread's context right after the switch (its
 * user memory is readable, its stacks still those of the wait), sends the
 * interval there (on_switch_done); the switch hook hands it over through a
 * per-CPU record. Userspace picks the path by probing (offcpu_task_work).
 *
 * A kernel with neither (6.18.44's verifier refuses the task work's
 * callback from sched_switch, and a kernel without CONFIG_KPROBES has no
 * kprobe) sends a pending interval as its thread's syscall returns
 * (sys_exit, in the thread's context: its stacks still those of the wait)
 * or, for a wait no syscall ends (a preemption), at the thread's next
 * switch out, with the stacks of that moment (offcpu_at_sys_exit).
 */
#define SCRATCH_SLOT() (offcpu_slot_base + bpf_get_smp_processor_id())
#define PYEBPF_CU offcpu
#include "capture.bpf.h"
#include "offcpu.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define EBUSY 16 /* errno.h is not for BPF programs */

/* __weak: a kernel without it loads the other programs (kernel_compat.bpf.h
 * says why 7.x takes another build). */
typedef int (*task_work_fn)(struct bpf_map *map, void *key, void *value);
#if defined(PYEBPF_KERNEL_COMPAT)
/* No kfunc a kernel before 5.17 could find incompatible: wall mode takes
 * the finish_task_switch path there. */
#elif defined(PYEBPF_TASK_WORK_V2)
extern int bpf_task_work_schedule_resume(struct task_struct *task, struct bpf_task_work *tw, void *map__map,
					 task_work_fn callback) __ksym __weak;
#define schedule_task_work(task, tw, map, fn) bpf_task_work_schedule_resume(task, tw, map, fn)
#else
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw, void *map__map,
					      task_work_fn callback, void *aux__prog) __ksym __weak;
#define schedule_task_work(task, tw, map, fn) bpf_task_work_schedule_resume_impl(task, tw, map, fn, NULL)
#endif

/* Set by userspace: 1, intervals are sent from task works; 0, from the
 * finish_task_switch kprobe. */
const volatile __u8 offcpu_task_work = 1;
/* Set by userspace: 1, intervals are sent at sys_exit or the next switch
 * out (offcpu_task_work 0 then). */
const volatile __u8 offcpu_at_sys_exit;

/* The finish_task_switch path: the interval the switch hook weighed for the
 * thread it switched to on this CPU, sent by the kprobe that runs next on
 * the same CPU (tid says whose; pending 0: none). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct off_task);
} handoff SEC(".maps");

/* Per CPU: whether this CPU's off-CPU scratch slot is in use (a task work
 * can be preempted by another task's). 64 bits: BPF exchanges no less. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} slot_busy SEC(".maps");

/* The task works, one per thread with a sample pending (LRU: the entries of
 * threads that are gone make room by themselves). */
struct send_work {
	struct bpf_task_work tw;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct send_work);
} send_works SEC(".maps");

#ifdef PYEBPF_KERNEL_COMPAT
/* No atomic exchange before 5.12 (BPF_XCHG). The compat build sends only
 * from the finish_task_switch kprobe, which never nests on a CPU (kprobe
 * programs do not run inside one another), and has no stop flush: a load
 * and a store are enough there. */
#define exchange(p, v)                        \
	({                                    \
		__typeof__(*(p)) _old = *(p); \
		*(p) = (v);                   \
		_old;                         \
	})
#else
#define exchange(p, v) __sync_lock_test_and_set(p, v)
#endif

/* Send the current task's pending interval, stacks read now. ctx: the
 * kprobe's, where there is one (the compat build's task is not a BTF
 * pointer bpf_get_task_stack takes). */
static __always_inline void send_pending(void *ctx, struct task_struct *task, struct off_task *t)
{
	struct pyebpf_sample *s;
	__u32 kn, zero = 0;
	__u64 weight, *busy;
	long ubytes;

	busy = bpf_map_lookup_elem(&slot_busy, &zero);
	if (!busy || !t->pending || exchange(busy, 1))
		return; /* the slot is taken: the next chance sends it */
	s = sample_buf();
	/* Taken, not read: the stop flush may be sending it too. */
	weight = s ? exchange(&t->pending, 0) : 0;
	if (!weight) {
		if (!s)
			count(PYEBPF_CNT_SCRATCH_ERR);
		goto out;
	}
	kn = offcpu_sample(s, task, t, bpf_get_current_cgroup_id(), (__u32)weight);
	if (kn > PYEBPF_MAX_STACK)
		kn = PYEBPF_MAX_STACK;
#ifdef PYEBPF_KERNEL_COMPAT
	ubytes = ustack_copy ? 0 : bpf_get_stack(ctx, &s->stack[kn], PYEBPF_MAX_STACK * 8, BPF_F_USER_STACK);
#else
	ubytes = ustack_copy ? 0 : bpf_get_task_stack(task, &s->stack[kn], PYEBPF_MAX_STACK * 8, BPF_F_USER_STACK);
#endif
	if (ubytes < 0) {
		s->flags |= PYEBPF_SAMPLE_USTACK_ERR;
		count(PYEBPF_CNT_USTACK_ERR);
		ubytes = 0;
	}
	if (!send_sample(s, finish_sample(s, task, kn, (__u32)ubytes / 8, 0)))
		count(PYEBPF_CNT_OFFCPU);
out:
	*busy = 0; /* this CPU's word: a plain store will do */
}

#ifndef PYEBPF_KERNEL_COMPAT
/* The task work: the thread is about to return to user mode. */
static int send_work_fn(struct bpf_map *map, void *key, void *value)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct off_task *t = bpf_task_storage_get(&off_tasks, task, 0, 0);

	if (!t || offcpu_stop_ns)
		return 0;
	send_pending(NULL, task, t);
	/* Still pending: this CPU's slot was taken (a preempted task work of
	 * another thread holds it), or a wait was added while this one ran,
	 * after its send and before it finished, when scheduling again said
	 * -EBUSY. No task work is coming for it: the next switch out sends it.
	 * Without this a thread's waits piled up unsent for the rest of the
	 * recording (the wall split on sid's 7.2 guest: every wait of the main
	 * thread after the first seconds, in 3 runs of 4). */
	if (t->pending)
		t->unscheduled = 1;
	return 0;
}
#endif

#ifndef PYEBPF_KERNEL_COMPAT
/* The task's off-CPU record in task storage (NULL: none; create makes one). */
static __always_inline struct off_task *off_task_of(struct task_struct *task, bool create)
{
	return bpf_task_storage_get(&off_tasks, task, 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/* Where `task`'s switch-out time is kept: its record's since. */
static __always_inline __u64 *since_slot(struct task_struct *task, bool create)
{
	struct off_task *t = off_task_of(task, create);

	return t ? &t->since : NULL;
}
#endif

/*
 * prev leaves the CPU at `now`; current is still prev. The one store every
 * switch of a target pays: when, and whether it was runnable (bit 0). What
 * it waits in is read only for an interval worth a sample, at the switch
 * in: until then the thread does not run, so its syscall is still the same.
 */
/* The clock, read once per switch and only for a switch that concerns a
 * target: most of a host's switches never pay for it. */
static __always_inline __u64 clock_once(__u64 *now)
{
	if (!*now)
		*now = bpf_ktime_get_ns();
	return *now;
}

static __always_inline void switch_out(struct task_struct *prev, bool runnable, __u64 *now, struct cpu_current *cur)
{
	__u64 *since, cgrp;

	if (!prev->mm)
		return;
	cgrp = task_cgroup_key(prev);
	if (cur && cur->task == (__u64)prev && cur->gen == targets_generation() && cur->cgrp == cgrp) {
		if (!cur->wanted)
			return;
	} else if (!task_is_target(prev, cgrp)) {
		return;
	}
	since = since_slot(prev, true);
	if (!since) {
		count(PYEBPF_CNT_OFFCPU_STORAGE);
		return;
	}
#ifndef PYEBPF_KERNEL_COMPAT
	{
		/* A pending sample no task work will send (it could not be
		 * scheduled, met -EBUSY, or ran and could not send): sent now,
		 * from its own context (rare: never a stack walk per switch
		 * otherwise). */
		struct off_task *t = container_of(since, struct off_task, since);

		if (t->pending && t->unscheduled)
			send_pending(NULL, prev, t);
	}
#endif
	/* Still runnable (preempted, or yielding at the return to user mode):
	 * waiting for a CPU, whatever the syscall. */
	*since = (clock_once(now) & ~SINCE_PREEMPTED) | (runnable ? SINCE_PREEMPTED : 0);
}

/* What the interval worth `weight` that `next` waited needs to be sent:
 * its syscall and kernel stack, read now that it has not run yet. */
static __always_inline void take_wait(struct off_task *t, struct task_struct *next, __u64 since, __u64 now, __u32 state,
				      __u32 flags)
{
	long kbytes;

	t->pending_since = since;
	t->pending_until = now;
	syscall_in_progress(next, &t->pending_syscall, &t->pending_arg);
	t->pending_state = state;
	t->pending_flags = flags;
	t->kstack_len = 0;
	if (kernel_stacks) {
		kbytes = bpf_get_task_stack(next, t->kstack, sizeof(t->kstack), 0);
		if (kbytes > 0)
			t->kstack_len = (__u32)kbytes / 8;
		else
			count(PYEBPF_CNT_KSTACK_ERR);
	}
}

/* next is about to run: weigh its time away. */
static __always_inline void switch_in(struct task_struct *next, __u64 *nowp, struct cpu_current *cur)
{
	__u64 now, *slot, since, raw, cgrp;
	__u32 weight, flags = 0, state = 0, zero = 0, gen = targets_generation();
	struct off_task *h;
	int wanted;

	if (!next->mm)
		return;
	cgrp = task_cgroup_key(next);
	wanted = task_is_target(next, cgrp);
	if (cur) { /* for its switch out: gen read before the answer, as task_is_target() does */
		cur->task = (__u64)next;
		cur->gen = gen;
		cur->wanted = wanted != 0;
		cur->cgrp = cgrp;
	}
	if (!wanted)
		return;
	slot = since_slot(next, false);
	if (wanted == 2) {
		/* It became a target while away: when it left was not timed, and
		 * "since the recording started" would overstate it. Timed from its
		 * next switch out. */
		if (slot)
			*slot = 0;
		return;
	}
	if (slot) {
		/* A plain load and store, not an exchange: only the stop flush could
		 * race it, and the hook stands still once the stop is set. */
		raw = *slot;
		if (!raw)
			return;
		*slot = 0;
		since = since_of(raw, &state);
	} else {
		/* Off the CPU since before the recording (or since it was born):
		 * counted from then, its state when it left unseen. */
		slot = since_slot(next, true);
		if (!slot) {
			count(PYEBPF_CNT_OFFCPU_STORAGE);
			return;
		}
		since = first_since(next);
		flags = PYEBPF_OFFCPU_STATE_UNKNOWN;
	}
	now = clock_once(nowp);
	weight = interval_weight(since, now);
	if (!offcpu_task_work && !offcpu_at_sys_exit) {
		/* Handed over whole to the kprobe that runs next on this CPU. */
		h = weight ? bpf_map_lookup_elem(&handoff, &zero) : NULL;
		if (h) {
			take_wait(h, next, since, now, state, flags);
			h->tid = (__u32)next->pid;
			h->pending = weight;
		}
		return;
	}
#ifndef PYEBPF_KERNEL_COMPAT
	{
		struct off_task *t = container_of(slot, struct off_task, since);
		struct send_work *w, fresh = {};
		__u32 tid = (__u32)next->pid;
		int err;

		if (t->pending) { /* still in the wait its task work will send */
			__sync_fetch_and_add(&t->pending, weight);
			t->pending_until = now;
			return;
		}
		if (!weight)
			return;
		take_wait(t, next, since, now, state, flags);
		t->pending = weight;
		if (offcpu_at_sys_exit) { /* on_sys_exit or the next switch out sends it */
			t->unscheduled = 1;
			return;
		}
		w = bpf_map_lookup_elem(&send_works, &tid);
		if (!w) {
			bpf_map_update_elem(&send_works, &tid, &fresh, BPF_NOEXIST);
			w = bpf_map_lookup_elem(&send_works, &tid);
		}
		/* Not scheduled: its next switch out sends it. -EBUSY is a task
		 * work queued or running: a queued one sends this one too, but
		 * one running may be past its send, so the switch out is asked
		 * as well (whichever comes first takes the whole pending). */
		err = w ? schedule_task_work(next, &w->tw, &send_works, send_work_fn) : -1;
		t->unscheduled = err != 0;
	}
#endif
}

#ifdef PYEBPF_KERNEL_COMPAT
/* Before 5.18 sched_switch has no prev_state: it is the task's state, named
 * state (a long) before 5.14 and __state after. */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int state_of(struct task_struct *p)
{
	if (bpf_core_field_exists(p->__state))
		return BPF_CORE_READ(p, __state);
	return (unsigned int)BPF_CORE_READ((struct task_struct___pre514 *)p, state);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	unsigned int prev_state = preempt ? 0 : state_of(prev);
#else
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)
{
#endif
	__u64 now = 0; /* read when a target is involved */
	__u32 zero = 0;
	struct cpu_current *cur;

	if (offcpu_empty_hook || !offcpu_start_ns || offcpu_stop_ns)
		return 0;
	cur = targets_cached() ? bpf_map_lookup_elem(&cpu_current, &zero) : NULL;
	switch_out(prev, preempt || prev_state == 0 /* TASK_RUNNING */, &now, cur);
	switch_in(next, &now, cur);
	return 0;
}

/*
 * The incoming thread, in its own context: an interval the switch hook
 * handed over is sent now. Every switch of the machine runs it; for all but
 * the ones worth a sample it is one per-CPU lookup and a compare.
 */
SEC("kprobe/finish_task_switch")
int BPF_KPROBE(on_switch_done)
{
	__u32 zero = 0;
	struct off_task *h = bpf_map_lookup_elem(&handoff, &zero);

	/* Sent even after the stop: the switch hook took the interval out of
	 * the thread's record, where the stop flush would look for it. */
	if (!h || !h->pending || h->tid != (__u32)bpf_get_current_pid_tgid())
		return 0;
	send_pending(ctx, current_task(), h);
	return 0;
}

/*
 * Where there is neither task work nor kprobe: the thread's syscall returns,
 * in its own context, its stacks still those of the wait it returns from. A
 * pending interval is sent now. Every syscall of the machine runs it; for
 * all but a target's thread with a wait pending it is one task storage
 * lookup. (The compat build has the kprobe path only: a program that does
 * nothing, never loaded, keeps the builds' skeletons alike.)
 */
SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit)
{
#ifndef PYEBPF_KERNEL_COMPAT
	struct task_struct *task = bpf_get_current_task_btf();
	struct off_task *t = bpf_task_storage_get(&off_tasks, task, 0, 0);

	if (t && t->pending && !offcpu_stop_ns)
		send_pending(NULL, task, t);
#endif
	return 0;
}
