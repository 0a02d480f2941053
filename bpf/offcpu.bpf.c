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
/* No wall mode in this build: no kfunc a kernel could find incompatible. */
#define schedule_task_work(task, tw, map, fn) ((void)(fn), -1)
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

/* Send the current task's pending interval, stacks read now. */
static __always_inline void send_pending(struct task_struct *task, struct off_task *t)
{
	struct pyebpf_sample *s;
	__u32 kn, zero = 0;
	__u64 weight, *busy;
	long ubytes;

	busy = bpf_map_lookup_elem(&slot_busy, &zero);
	if (!busy || !t->pending || __sync_lock_test_and_set(busy, 1))
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
	ubytes = ustack_copy ? 0 : bpf_get_task_stack(task, &s->stack[kn], PYEBPF_MAX_STACK * 8, BPF_F_USER_STACK);
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

/* The task work: the thread is about to return to user mode. */
static int send_work_fn(struct bpf_map *map, void *key, void *value)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct off_task *t = bpf_task_storage_get(&off_tasks, task, 0, 0);

	if (t && !offcpu_stop_ns)
		send_pending(task, t);
	return 0;
}

/*
 * prev leaves the CPU at `now`; current is still prev. The one store every
 * switch of a target pays: when, and whether it was runnable (bit 0). What
 * it waits in is read only for an interval worth a sample, at the switch
 * in: until then the thread does not run, so its syscall is still the same.
 */
static __always_inline void switch_out(struct task_struct *prev, bool runnable, __u64 now)
{
	struct off_task *t;

	if (!prev->mm || !wanted((__u32)prev->tgid))
		return;
	t = bpf_task_storage_get(&off_tasks, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t) {
		count(PYEBPF_CNT_OFFCPU_STORAGE);
		return;
	}
	/* A pending sample whose task work could not be scheduled: sent now, from
	 * its own context (rare: never a stack walk per switch otherwise). */
	if (t->pending && t->unscheduled)
		send_pending(prev, t);
	/* Still runnable (preempted, or yielding at the return to user mode):
	 * waiting for a CPU, whatever the syscall. */
	t->since = (now & ~SINCE_PREEMPTED) | (runnable ? SINCE_PREEMPTED : 0);
}

/* next is about to run: weigh its time away. */
static __always_inline void switch_in(struct task_struct *next, __u64 now)
{
	struct off_task *t;
	struct send_work *w, fresh = {};
	__u64 since, raw;
	__u32 weight, flags = 0, tid, state = 0;
	long kbytes;
	int err;

	if (!next->mm)
		return;
	t = bpf_task_storage_get(&off_tasks, next, 0, 0);
	if (t) {
		/* A plain load and store, not an exchange: only the stop flush could
		 * race it, and the hook stands still once the stop is set. */
		raw = t->since;
		if (!raw)
			return;
		t->since = 0;
		since = since_of(raw, &state);
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
		flags = PYEBPF_OFFCPU_STATE_UNKNOWN;
	}
	weight = interval_weight(since, now);
	if (t->pending) { /* still in the wait its task work will send */
		__sync_fetch_and_add(&t->pending, weight);
		t->pending_until = now;
		return;
	}
	if (!weight)
		return;
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
	t->pending = weight;
	tid = (__u32)next->pid;
	if (!offcpu_task_work) {
		/* Handed over whole to the kprobe that runs next on this CPU. */
		__u32 zero = 0;
		struct off_task *h = bpf_map_lookup_elem(&handoff, &zero);

		if (h) {
			bpf_probe_read_kernel(h, sizeof(*h), t); /* too big for an inlined copy */
			h->tid = tid;
			t->pending = 0;
		}
		return;
	}
	w = bpf_map_lookup_elem(&send_works, &tid);
	if (!w) {
		bpf_map_update_elem(&send_works, &tid, &fresh, BPF_NOEXIST);
		w = bpf_map_lookup_elem(&send_works, &tid);
	}
	/* One still queued (-EBUSY) sends this one too. Not scheduled at all: its
	 * next switch out sends it. */
	err = w ? schedule_task_work(next, &w->tw, &send_works, send_work_fn) : -1;
	t->unscheduled = err && err != -EBUSY;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)
{
	__u64 now;

	if (offcpu_empty_hook || !offcpu_start_ns || offcpu_stop_ns)
		return 0;
	now = bpf_ktime_get_ns();
	switch_out(prev, preempt || prev_state == 0 /* TASK_RUNNING */, now);
	switch_in(next, now);
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
	send_pending(bpf_get_current_task_btf(), h);
	return 0;
}
