/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Types shared by the BPF sampler (bpf/sample.bpf.c) and the loader (user/).
 * Fixed-width types and arrays only: no pointers, bool or long, so both sides
 * agree on the layout; _Static_asserts catch drift.
 */
#ifndef PYEBPF_H
#define PYEBPF_H

#ifdef __BPF__
/* vmlinux.h provides __u32/__u64 */
#else
#include <linux/types.h>
#endif

#define PYEBPF_COMM_LEN 16
/* Frames per kernel or user stack: the kernel's own cap for bpf_get_stack. */
#define PYEBPF_MAX_STACK 127

enum pyebpf_event_type {
	PYEBPF_EVENT_SAMPLE = 1,
	PYEBPF_EVENT_EXEC = 2, /* a process replaced its image: drop its caches */
	PYEBPF_EVENT_EXIT = 3, /* the last thread of a process exited */
};

struct pyebpf_event_header {
	__u32 type; /* enum pyebpf_event_type */
	__u32 pid;  /* process id (tgid) in the initial pid namespace */
	__u32 tid;
	__u32 cpu;
	__u64 ts_ns; /* bpf_ktime_get_ns() */
};

/* Flags of a sample. */
#define PYEBPF_SAMPLE_KSTACK_ERR 0x1 /* kernel stack could not be read */
#define PYEBPF_SAMPLE_USTACK_ERR 0x2 /* user stack could not be read */

struct pyebpf_sample {
	struct pyebpf_event_header h;
	__u64 cgroup_id;
	char comm[PYEBPF_COMM_LEN];
	__u32 kstack_len; /* frames in stack[0 .. kstack_len) , leaf first */
	__u32 ustack_len; /* frames in stack[kstack_len .. +ustack_len), leaf first */
	__u32 flags;
	__u32 reserved;
	/* Only the used part travels through the ring buffer. */
	__u64 stack[2 * PYEBPF_MAX_STACK];
};

struct pyebpf_proc_event {
	struct pyebpf_event_header h;
	char comm[PYEBPF_COMM_LEN];
};

/* Bytes of a sample that carries n stack frames. */
#define PYEBPF_SAMPLE_SIZE(n) (sizeof(struct pyebpf_sample) - sizeof(((struct pyebpf_sample *)0)->stack) + (n) * 8)

/*
 * Every path where the sampler gives up on a sample, or part of one, has a
 * counter (a per-CPU array indexed by this enum); userspace prints the
 * non-zero ones. PYEBPF_CNT_SAMPLES counts samples sent.
 */
enum pyebpf_counter {
	PYEBPF_CNT_SAMPLES,     /* samples handed to the ring buffer */
	PYEBPF_CNT_RB_FULL,     /* sample dropped: ring buffer full */
	PYEBPF_CNT_KSTACK_ERR,  /* kernel stack unreadable (sample kept) */
	PYEBPF_CNT_USTACK_ERR,  /* user stack unreadable (sample kept) */
	PYEBPF_CNT_SCRATCH_ERR, /* per-CPU scratch lookup failed (sample dropped) */
	PYEBPF_CNT_TARGETS_FULL,/* a forked child could not be added to the targets */
	PYEBPF_CNT_PROC_RB_FULL,/* exec/exit event dropped: ring buffer full */
	PYEBPF_CNT__COUNT,
};

#ifndef __BPF__
_Static_assert(sizeof(struct pyebpf_event_header) == 24, "header layout");
_Static_assert(sizeof(struct pyebpf_sample) == 24 + 8 + 16 + 16 + 2 * 127 * 8, "sample layout");
_Static_assert(sizeof(struct pyebpf_proc_event) == 40, "proc event layout");
#endif

#endif /* PYEBPF_H */
