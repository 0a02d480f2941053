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

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = parent->tgid, cpid = child->tgid;
	__u8 one = 1;

	if (cpid == ppid) /* a new thread, not a new process */
		return 0;
	if (follow_forks && bpf_map_lookup_elem(&targets, &ppid) && bpf_map_update_elem(&targets, &cpid, &one, BPF_ANY))
		count(PYEBPF_CNT_TARGETS_FULL);
	if (wanted(ppid)) /* a forked Python (multiprocessing) is a new pid to register */
		note_young(cpid);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 pid = p->tgid;

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
