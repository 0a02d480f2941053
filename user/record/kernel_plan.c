// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/kernel_plan.h"

#include <stdio.h>

int kernel_plan(const struct kernel_features *k, bool off_cpu, bool native, struct kernel_plan *out, char *why,
		size_t whylen)
{
	*out = (struct kernel_plan){ 0 };
	if (!k->btf) {
		snprintf(why, whylen,
			 "this kernel has no BTF (/sys/kernel/btf/vmlinux): pyebpf needs CONFIG_DEBUG_INFO_BTF=y");
		return -1;
	}
	if (!k->ringbuf) {
		snprintf(why, whylen, "this kernel has no BPF ring buffer: pyebpf needs Linux 5.8 or later");
		return -1;
	}
	/* Before 5.17 (no bpf_loop) or 5.11 (no bpf_get_current_task_btf): the
	 * compat build, whose walks are bounded loops. */
	if (!k->bpf_loop || !k->task_btf)
		out->build = BPF_BUILD_COMPAT;
	else if (k->task_work == TASK_WORK_V2)
		out->build = BPF_BUILD_TW2;
	if (native && !k->task_pt_regs) {
		snprintf(why, whylen,
			 "--native needs the BPF helper bpf_task_pt_regs (Linux 5.15); this kernel can do --mode cpu "
			 "without --native");
		return -1;
	}
	if (!off_cpu)
		return 0;
	/* The compat build keeps its threads' switch times by tid (no task
	 * storage before 5.11) and has no task-work kfunc: the kprobe path. */
	if (out->build != BPF_BUILD_COMPAT && k->task_storage && k->task_work != TASK_WORK_NONE &&
	    !k->task_work_refused)
		out->wall = WALL_TASK_WORK;
	else if (k->switch_done && (out->build == BPF_BUILD_COMPAT || k->task_storage))
		out->wall = WALL_KPROBE;
	else if (out->build != BPF_BUILD_COMPAT && k->task_storage)
		out->wall = WALL_SYS_EXIT;
	else {
		snprintf(why, whylen,
			 "--mode wall/off-cpu needs the kernel function bpf_task_work_schedule_resume (Linux 6.18) "
			 "or a kprobe on finish_task_switch; this kernel can do --mode cpu");
		return -1;
	}
	out->task_work_refused = out->wall != WALL_TASK_WORK && k->task_work_refused;
	/* The flush is a sleepable task iterator (5.18+ helpers) over task storage. */
	out->flush = k->task_from_pid && out->build != BPF_BUILD_COMPAT;
	return 0;
}

int kernel_plan_notes(const struct kernel_plan *p, bool off_cpu, const char *out[3])
{
	int n = 0;

	if (p->build == BPF_BUILD_COMPAT)
		out[n++] = "this kernel has no bpf_loop (Linux 5.17): bounded loops instead, which reach 512 threads "
			   "of each interpreter (the others through userspace's thread index)";
	if (off_cpu && p->wall == WALL_KPROBE)
		out[n++] = p->task_work_refused
				   ? "off-CPU samples are sent from a kprobe on finish_task_switch (this kernel's "
				     "verifier refuses bpf_task_work_schedule_resume's callback from the switch "
				     "tracepoint)"
				   : "off-CPU samples are sent from a kprobe on finish_task_switch (no "
				     "bpf_task_work_schedule_resume before Linux 6.18)";
	if (off_cpu && p->wall == WALL_SYS_EXIT)
		out[n++] = p->task_work_refused
				   ? "off-CPU samples are sent as the thread's syscall returns (this kernel's verifier "
				     "refuses bpf_task_work_schedule_resume's callback from the switch tracepoint, and "
				     "it has no kprobes): a wait no syscall ends, a preemption's, is sent at the "
				     "thread's next switch with the stacks of then"
				   : "off-CPU samples are sent as the thread's syscall returns (no "
				     "bpf_task_work_schedule_resume before Linux 6.18, and no kprobes): a wait no "
				     "syscall ends, a preemption's, is sent at the thread's next switch with the "
				     "stacks of then";
	if (off_cpu && !p->flush)
		out[n++] = "threads still off the CPU when the recording stops are counted up to their last switch, "
			   "not to the stop (no bpf_task_from_pid before Linux 6.2)";
	return n;
}

const char *bpf_build_name(enum bpf_build b)
{
	switch (b) {
	case BPF_BUILD_COMPAT:
		return "bounded loops (no bpf_loop)";
	case BPF_BUILD_TW2:
		return "task work (Linux 7.x kfunc)";
	default:
		return "default";
	}
}
