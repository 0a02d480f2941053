// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Process events: tracepoints on fork/exec/exit keep the target set right
 * when a launched command forks, and tell userspace when a process's
 * address space changes (exec) or goes away (exit).
 */
#include "shared.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Exits wake the reader at once: the samples before them are named while
 * /proc and the process's memory are still there for the latest ones. */
static __always_inline void send_proc_event(__u32 type, struct task_struct *task)
{
	struct pyebpf_proc_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count(PYEBPF_CNT_PROC_RB_FULL);
		return;
	}
	e->h.type = type;
	e->h.pid = BPF_CORE_READ(task, tgid);
	e->h.tid = BPF_CORE_READ(task, pid);
	e->h.cpu = bpf_get_smp_processor_id();
	e->h.ts_ns = bpf_ktime_get_ns();
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_ringbuf_submit(e, type == PYEBPF_EVENT_EXIT ? BPF_RB_FORCE_WAKEUP : wakeup_flag());
}

/* --comm: is the task's name one of the targets'? (After exec it is the new
 * program's; a forked child has its parent's.) */
static __always_inline int comm_wanted(struct task_struct *task)
{
	char comm[PYEBPF_COMM_LEN] = {}; /* NUL-padded, as the keys are */

	if (!filter_comms)
		return 0;
	BPF_CORE_READ_STR_INTO(&comm, task, comm);
	return bpf_map_lookup_elem(&target_comms, comm) != NULL;
}

/* A process that becomes a target while recording; counted once. 1: it is new. */
static __always_inline int add_target(__u32 pid)
{
	__u8 one = 1;
	long err = bpf_map_update_elem(&targets, &pid, &one, BPF_NOEXIST);

	if (!err) {
		__sync_fetch_and_add(&targets_gen, 1); /* after the insert: see task_is_target() */
		count(PYEBPF_CNT_FOLLOWED);
	} else if (err != -17 /* EEXIST: a target already */)
		count(PYEBPF_CNT_TARGETS_FULL);
	return !err;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = parent->tgid, cpid = child->tgid;

	if (cpid == ppid) /* a new thread, not a new process */
		return 0;
	if (filter_pids) {
		int parent_is_target = bpf_map_lookup_elem(&targets, &ppid) != NULL;

		if (((parent_is_target && follow_forks) || comm_wanted(child)) && add_target(cpid))
			send_proc_event(PYEBPF_EVENT_FORK, child);
		else if (parent_is_target) /* --no-children: said in the summary, not silent */
			count(PYEBPF_CNT_NOT_FOLLOWED);
	}
	if (wanted(ppid)) /* a forked Python (multiprocessing) is a new pid to register */
		note_young(cpid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 pid = p->tgid;

	if (comm_wanted(p))
		add_target(pid);
	if (wanted(pid)) {
		note_young(pid);
		send_proc_event(PYEBPF_EVENT_EXEC, p);
	}
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 pid = p->tgid;

	/* Only when the whole thread group is gone. */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	if (!wanted(pid))
		return 0;
	send_proc_event(PYEBPF_EVENT_EXIT, p);
	if (filter_pids) /* the pid may be reused by an unrelated process */
		bpf_map_delete_elem(&targets, &pid);
	return 0;
}
