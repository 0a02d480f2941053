/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Which build of the BPF programs a kernel takes and how --mode wall sends
 * its samples there, from what the kernel was probed to offer
 * (user/sampler.c probes; this decides, without libbpf, so the unit tests
 * drive it with every kernel of the matrix). A kernel that lacks a feature
 * costs the modes that need it, each with one line naming what is missing.
 */
#ifndef PYEBPF_KERNEL_PLAN_H
#define PYEBPF_KERNEL_PLAN_H

#include <stdbool.h>
#include <stddef.h>

enum task_work_kfunc {
	TASK_WORK_NONE = 0,
	TASK_WORK_IMPL, /* bpf_task_work_schedule_resume_impl(..., void *aux__prog): Linux 6.18 */
	TASK_WORK_V2,   /* bpf_task_work_schedule_resume(task, tw, map, cb): Linux 7.x */
};

struct kernel_features {
	bool btf;           /* /sys/kernel/btf/vmlinux */
	bool ringbuf;       /* 5.8 */
	bool bpf_loop;      /* 5.17 */
	bool task_btf;      /* bpf_get_current_task_btf, 5.11 */
	bool task_pt_regs;  /* bpf_task_pt_regs, 5.15: --native */
	bool task_storage;  /* BPF_MAP_TYPE_TASK_STORAGE, 5.11: --mode wall */
	bool task_from_pid; /* kfunc bpf_task_from_pid, 6.2: the stop flush of --mode wall */
	enum task_work_kfunc task_work;
	/* The verifier refused the task work's callback from the switch
	 * tracepoint: 6.18.44 refuses it ("sleepable callback in a program
	 * that is not sleepable") where 6.18's first releases took it. */
	bool task_work_refused;
	bool switch_done; /* finish_task_switch can take a kprobe */
};

enum bpf_build {
	BPF_BUILD_DEFAULT = 0,
	BPF_BUILD_COMPAT, /* no bpf_loop: bounded walks (kernel_compat.bpf.h) */
	BPF_BUILD_TW2,    /* 7.x's task-work kfunc */
};

enum wall_path {
	WALL_NONE = 0,
	WALL_TASK_WORK, /* sent from a task work as the thread returns to user mode */
	WALL_KPROBE,    /* sent from a kprobe on finish_task_switch */
	WALL_SYS_EXIT,  /* sent as the thread's syscall returns, else at its next switch out */
};

struct kernel_plan {
	enum bpf_build build;
	enum wall_path wall;
	bool flush;             /* the stop flush counts threads still off the CPU */
	bool task_work_refused; /* the kprobe, for the verifier refused the task work */
};

/* What this kernel takes for the modes asked; 0, or -1 with one line in why. */
int kernel_plan(const struct kernel_features *k, bool off_cpu, bool native, struct kernel_plan *out, char *why,
		size_t whylen);

/* What the plan costs the user, one line each (none on a kernel that has
 * everything); returns how many of at most 3. */
int kernel_plan_notes(const struct kernel_plan *p, bool off_cpu, const char *out[3]);

const char *bpf_build_name(enum bpf_build b);

#endif
