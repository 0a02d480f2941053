// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Nothing lost at stop (--mode wall/off-cpu): a thread still off the CPU
 * when recording stops (a server idle in epoll_wait, a function that never
 * returns) never switches back in, so the switch hook never counts it.
 * Userspace runs this task iterator after setting offcpu_stop_ns, twice: to
 * name the processes it will read (flush_announce), then to count each such
 * thread up to the stop and read its stacks from outside
 * (bpf_get_task_stack, a frame-pointer walk and the Python walk through
 * bpf_copy_from_user_task, hence sleepable), into a scratch slot of its own.
 */
#define READ_OTHER_TASK
#define SCRATCH_SLOT() flush_slot
#define PYEBPF_CU flush
#include "capture.bpf.h"
#include "offcpu.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * The user stack of a blocked task by its frame pointers, from the
 * registers saved when it entered the kernel. The frame count lives in the
 * sample (s->ustack_len), not in the loop's context: a count the verifier
 * tracks would differ at every iteration and never let it converge.
 */
struct fp_ctx {
	__u64 bp;
	__u32 base; /* where the user frames start in s->stack */
};

static long fp_step(__u32 i, void *data)
{
	struct fp_ctx *c = data;
	struct pyebpf_sample *s = sample_buf();
	__u64 frame[2]; /* saved bp, return address */
	__u32 at;

	if (!s || !c->bp || user_read(frame, sizeof(frame), (const void *)c->bp))
		return 1;
	if (frame[0] <= c->bp) /* stacks grow down: a caller's frame is above */
		return 1;
	at = c->base + s->ustack_len;
	if (s->ustack_len >= PYEBPF_MAX_STACK || at >= 2 * PYEBPF_MAX_STACK)
		return 1;
	s->stack[at] = frame[1] & PYEBPF_USER_PC_MASK; /* arm64: without its signature */
	s->ustack_len++;
	c->bp = frame[0];
	return 0;
}

static __always_inline __u32 user_stack_fp(struct task_struct *task, struct pyebpf_sample *s, __u32 kn)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct fp_ctx c = { .base = kn };

	s->ustack_len = 0;
	if (!regs || kn >= PYEBPF_MAX_STACK)
		return 0;
	s->stack[kn] = ARCH_PC(regs);
	c.bp = ARCH_FP(regs);
	s->ustack_len = 1;
	bpf_loop(PYEBPF_MAX_STACK - 1, fp_step, &c, 0); /* wall mode: never in the compat build */
	return s->ustack_len;
}

/* The stacks of a blocked task from outside, after the header and kernel
 * stack (kn frames) are in place; sends it. */
/* The kernel stack of a task that is not running, into s->stack: its
 * frame count (0 when not asked for or not readable, the error counted). */
static __always_inline __u32 task_kstack(struct task_struct *task, struct pyebpf_sample *s)
{
	long kbytes = kernel_stacks ? bpf_get_task_stack(task, s->stack, PYEBPF_MAX_STACK * 8, 0) : 0;

	if (kbytes < 0) {
		s->flags |= PYEBPF_SAMPLE_KSTACK_ERR;
		count(PYEBPF_CNT_KSTACK_ERR);
		kbytes = 0;
	}
	return (__u32)kbytes / 8;
}

/* A sample of another task than the current one, kn kernel frames in:
 * its user stack from its saved registers, its Python stack through its
 * thread pointer. 0 when sent. */
static __always_inline int send_task_sample(struct pyebpf_sample *s, struct task_struct *task, __u32 kn)
{
	if (kn > PYEBPF_MAX_STACK)
		kn = PYEBPF_MAX_STACK;
	walk_tid = (__u32)task->pid;
	walk_tp = ARCH_THREAD_POINTER(task);
	return send_sample(s, finish_sample(s, task, kn, ustack_copy ? 0 : user_stack_fp(task, s, kn), 0));
}

static __always_inline void send_blocked(struct pyebpf_sample *s, struct task_struct *task, __u32 kn)
{
	if (!send_task_sample(s, task, kn))
		count(PYEBPF_CNT_OFFCPU);
}

/* Weighed at its switch in but not sent yet (it has not returned from the
 * syscall it waited in): its kernel stack is the one kept then. */
static __always_inline int flush_pending(struct task_struct *task, struct off_task *t, struct pyebpf_sample *s)
{
	__u64 weight = __sync_lock_test_and_set(&t->pending, 0);

	if (weight)
		send_blocked(s, task,
			     offcpu_sample(s, task, t, BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id), (__u32)weight));
	return weight != 0;
}

/* Pass 1 of the flush: name the processes of blocked threads that were
 * never registered, so that userspace can tell whether they are Python. */
__u32 flush_announce;

static __always_inline int announce(struct task_struct *task)
{
	__u32 pid = (__u32)task->tgid;
	struct pyebpf_proc_event *e;

	if (bpf_map_lookup_elem(&py_procs, &pid))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(PYEBPF_CNT_PROC_RB_FULL);
		return 0;
	}
	e->h.type = PYEBPF_EVENT_BLOCKED;
	e->h.pid = pid;
	e->h.tid = (__u32)task->pid;
	e->h.cpu = bpf_get_smp_processor_id();
	e->h.ts_ns = bpf_ktime_get_ns();
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_ringbuf_submit(e, 0);
	return 1;
}

/* One byte into the iterator per record sent: userspace reads it in small
 * chunks and drains the ring buffer between them (user/sampler.c). */
static __always_inline void sent_one(struct bpf_iter__task *ctx)
{
	__u8 one = 1;

	bpf_seq_write(ctx->meta->seq, &one, sizeof(one));
}

SEC("iter.s/task")
int flush_offcpu(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct pyebpf_sample *s;
	struct off_task *t;
	__u64 since, until = offcpu_stop_ns;
	__u32 weight;

	if (!task || !until || !task_wanted(task))
		return 0;
	t = bpf_task_storage_get(&off_tasks, task, 0, 0);
	if (flush_announce) {
		if ((t ? t->since || t->pending : !task_on_cpu(task)) && announce(task))
			sent_one(ctx);
		return 0;
	}
	s = sample_buf();
	if (!s) {
		count(PYEBPF_CNT_SCRATCH_ERR);
		return 0;
	}
	if (t) {
		if (flush_pending(task, t, s))
			sent_one(ctx);
		since = __sync_lock_test_and_set(&t->since, 0);
		if (!since)
			return 0; /* on a CPU */
		since = since_of(since, &t->pending_state);
		t->pending_flags = 0;
	} else {
		if (task_on_cpu(task)) /* running since before the recording */
			return 0;
		t = bpf_task_storage_get(&off_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!t) {
			count(PYEBPF_CNT_OFFCPU_STORAGE);
			return 0;
		}
		since = first_since(task);
		t->pending_state = 0;
		t->pending_flags = PYEBPF_OFFCPU_STATE_UNKNOWN;
	}
	weight = interval_weight(since, until);
	if (!weight)
		return 0;
	t->pending_since = since;
	t->pending_until = until;
	syscall_in_progress(task, &t->pending_syscall, &t->pending_arg);
	t->pending_flags |= PYEBPF_OFFCPU_AT_STOP;
	t->kstack_len = 0;
	offcpu_sample(s, task, t, BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id), weight);
	send_blocked(s, task, task_kstack(task, s));
	sent_one(ctx);
	return 0;
}

/*
 * `pyebpf dump -p PID`: every thread of one process, once, from the same
 * sleepable iterator: the kernel stack of a thread that is not running,
 * the user stack by frame pointers from its saved registers (or the copy
 * for --native), its Python stack by the same walker as every sample, and
 * what the kernel says of its state (task state, syscall in progress and
 * its first argument) for userspace to name the reason it waits. Nothing
 * is sent to the target: no signal, no ptrace stop.
 */
__u32 dump_pid;

struct task_struct___pre514_dump {
	long state;
} __attribute__((preserve_access_index));

static __always_inline __u32 dump_task_state(struct task_struct *p)
{
	if (bpf_core_field_exists(p->__state))
		return BPF_CORE_READ(p, __state);
	return (__u32)BPF_CORE_READ((struct task_struct___pre514_dump *)p, state);
}

SEC("iter.s/task")
int dump_threads(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct pyebpf_sample *s;
	__u32 kn = 0, state;
	int on;

	if (!task || !dump_pid || (__u32)task->tgid != dump_pid || !task->mm)
		return 0;
	s = sample_buf();
	if (!s) {
		count(PYEBPF_CNT_SCRATCH_ERR);
		return 0;
	}
	sample_header(s, dump_pid, (__u32)task->pid, BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id));
	BPF_CORE_READ_STR_INTO(&s->task_comm, task, comm);
	BPF_CORE_READ_STR_INTO(&s->comm, task, group_leader, comm);
	on = task_on_cpu(task);
	state = dump_task_state(task);
	if (!on || state) {
		/* Off the CPU (or on its way off): a wait, as the stop flush's. */
		s->flags |= PYEBPF_SAMPLE_OFFCPU;
		s->off.state = state;
		s->off.since_ns = s->h.ts_ns;
		s->off.flags = PYEBPF_OFFCPU_AT_STOP;
		syscall_in_progress(task, &s->off.syscall, &s->off.wait_arg);
		kn = task_kstack(task, s);
	}
	if (!send_task_sample(s, task, kn))
		sent_one(ctx);
	return 0;
}
