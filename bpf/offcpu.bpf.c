// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Off-CPU time (--mode wall/off-cpu). Cost must not grow with the switch
 * rate, so no stack is walked per switch:
 *
 * - sched_switch, prev side: note when the thread left and what it was
 *   doing (task state, syscall in progress, its first argument);
 * - sched_switch, next side: weigh the interval in timer ticks
 *   (offcpu_weight.h); most weigh nothing and cost nothing more. One that
 *   is worth a sample keeps the kernel stack it waited in (the task is not
 *   running yet, so its stack can be read) and becomes pending;
 * - the pending sample is sent from the thread's own context, where its
 *   user memory can be read: the return from the syscall it waited in
 *   (sys_exit, which asks one per-CPU word whether this thread is the one),
 *   or, for a thread preempted in user code, its next switch out.
 *
 * The OpenTelemetry profiler walks at finish_task_switch instead; that
 * takes kprobes or fentry, which kernels may not offer (this one has
 * neither): tracepoints are always there.
 */
#define SCRATCH_SLOT() (offcpu_slot_base + bpf_get_smp_processor_id())
#include "capture.bpf.h"
#include "offcpu.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Per CPU: the thread switched in with a sample pending (0: none), and
 * whether this CPU's off-CPU scratch slot is in use (a tracepoint program
 * can be preempted by another task's). */
struct pending_cpu {
	__u64 tid;
	__u64 busy; /* 64 bits: BPF exchanges no less */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pending_cpu);
} pending_cpu SEC(".maps");

/* Send the current task's pending interval, stacks read now. */
static __always_inline void send_pending(struct task_struct *task, struct off_task *t, struct pending_cpu *pc)
{
	struct pyebpf_sample *s;
	__u32 kn;
	__u64 weight;
	long ubytes;

	if (!t->pending || __sync_lock_test_and_set(&pc->busy, 1))
		return; /* the slot is taken: the next chance sends it */
	s = sample_buf();
	/* Taken, not read: the stop flush may be sending it too. */
	weight = s ? __sync_lock_test_and_set(&t->pending, 0) : 0;
	if (!weight) {
		if (!s)
			count(PYEBPF_CNT_SCRATCH_ERR);
		goto out;
	}
	kn = offcpu_sample(s, task, t, bpf_get_current_cgroup_id(), (__u32)weight);
	if (kn > PYEBPF_MAX_STACK)
		kn = PYEBPF_MAX_STACK;
	ubytes = ustack_copy ? 0
			     : bpf_get_task_stack(task, &s->stack[kn], PYEBPF_MAX_STACK * 8, BPF_F_USER_STACK);
	if (ubytes < 0) {
		s->flags |= PYEBPF_SAMPLE_USTACK_ERR;
		count(PYEBPF_CNT_USTACK_ERR);
		ubytes = 0;
	}
	if (!send_sample(s, finish_sample(s, task, kn, (__u32)ubytes / 8)))
		count(PYEBPF_CNT_OFFCPU);
out:
	pc->busy = 0; /* this CPU's word: a plain store will do */
}

/* prev leaves the CPU; current is still prev. */
static __always_inline void switch_out(struct task_struct *prev, bool preempt, unsigned int prev_state,
				       struct pending_cpu *pc)
{
	struct off_task *t;

	if (!prev->mm || !wanted((__u32)prev->tgid))
		return;
	t = bpf_task_storage_get(&off_tasks, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		count(PYEBPF_CNT_OFFCPU_STORAGE);
		return;
	}
	if (t->pending) /* preempted in user code since: this is its own context */
		send_pending(prev, t, pc);
	if (pc->tid == (__u32)prev->pid)
		pc->tid = 0;
	/* Preempted while runnable: waiting for a CPU, whatever the syscall. */
	t->state = preempt ? 0 : prev_state;
	syscall_in_progress(prev, &t->syscall, &t->wait_arg);
	t->since = bpf_ktime_get_ns();
}

/* next is about to run: weigh its time away. */
static __always_inline void switch_in(struct task_struct *next, struct pending_cpu *pc)
{
	struct off_task *t = bpf_task_storage_get(&off_tasks, next, 0, 0);
	__u64 since, now;
	__u32 weight, flags = 0;
	long kbytes;

	if (t) {
		/* Taken, not read: the stop flush may be counting it too. */
		since = __sync_lock_test_and_set(&t->since, 0);
		if (!since || t->pending)
			return;
		if (since < offcpu_start_ns)
			since = offcpu_start_ns;
	} else {
		/* Off the CPU since before the recording (or since it became a
		 * target): counted from then, its state when it left unseen. */
		if (!task_wanted(next))
			return;
		t = bpf_task_storage_get(&off_tasks, next, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!t) {
			count(PYEBPF_CNT_OFFCPU_STORAGE);
			return;
		}
		since = first_since(next);
		syscall_in_progress(next, &t->syscall, &t->wait_arg);
		t->state = 0;
		flags = PYEBPF_OFFCPU_STATE_UNKNOWN;
	}
	now = bpf_ktime_get_ns();
	weight = offcpu_weight(now > since ? now - since : 0, offcpu_freq, bpf_get_prandom_u32());
	if (!weight)
		return;
	t->pending_since = since;
	t->pending_until = now;
	t->pending_arg = t->wait_arg;
	t->pending_syscall = t->syscall;
	t->pending_state = t->state;
	t->pending_flags = flags;
	t->kstack_len = 0;
	if (kernel_stacks) {
		kbytes = bpf_get_task_stack(next, t->kstack, sizeof(t->kstack), 0);
		if (kbytes > 0)
			t->kstack_len = (__u32)kbytes / 8;
		else
			count(PYEBPF_CNT_KSTACK_ERR);
	}
	t->pending = weight;
	pc->tid = (__u32)next->pid;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)
{
	__u32 zero = 0;
	struct pending_cpu *pc;

	if (!offcpu_start_ns || offcpu_stop_ns)
		return 0;
	pc = bpf_map_lookup_elem(&pending_cpu, &zero);
	if (!pc)
		return 0;
	switch_out(prev, preempt, prev_state, pc);
	switch_in(next, pc);
	return 0;
}

/* Every syscall on the machine returns through here: one per-CPU word says
 * whether it is the thread with a sample pending. */
SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit)
{
	__u32 zero = 0, tid = (__u32)bpf_get_current_pid_tgid();
	struct pending_cpu *pc = bpf_map_lookup_elem(&pending_cpu, &zero);
	struct task_struct *task;
	struct off_task *t;

	if (!pc || !pc->tid || pc->tid != tid || offcpu_stop_ns)
		return 0;
	pc->tid = 0;
	task = bpf_get_current_task_btf();
	t = bpf_task_storage_get(&off_tasks, task, 0, 0);
	if (t)
		send_pending(task, t, pc);
	return 0;
}
