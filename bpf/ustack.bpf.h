/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * --native: copy the user registers and the top of the user stack into the
 * sample, for userspace to unwind with each file's DWARF call frame
 * information (the design of perf --call-graph dwarf). Code built without
 * frame pointers, as most interpreters are, unwinds only this way.
 */
#ifndef PYEBPF_USTACK_BPF_H
#define PYEBPF_USTACK_BPF_H

#include "shared.bpf.h"

#define PAGE 4096

/*
 * Copy the user registers of `task` (the current task unless the stop flush
 * reads a blocked one) and up to `ustack_copy` stack bytes from sp to the
 * sample at byte offset `off` (where the Python frames end). Page by page:
 * bpf_probe_read_user fails whole if any byte faults, and the stack ends at
 * an unmapped page (thread stacks, the top of the main stack). Returns the
 * bytes appended to the sample.
 */
static __always_inline __u32 copy_user_stack(struct task_struct *task, struct pyebpf_sample *s, __u32 off)
{
	struct pt_regs *regs;
	struct pyebpf_uregs *r;
	__u32 copied = 0, want = ustack_copy;
	__u64 sp;

	if (off > PYEBPF_PY_SAMPLE_SIZE(PYEBPF_MAX_PY_FRAMES))
		return 0;
	r = (void *)s + off;
	__builtin_memset(r, 0, sizeof(*r));
	if (!BPF_CORE_READ(task, mm)) /* a kernel thread: no user stack */
		return 0;
#ifdef PYEBPF_KERNEL_COMPAT
	/* No bpf_task_pt_regs (5.15): userspace refuses --native there. */
	return 0;
#endif
	s->flags |= PYEBPF_SAMPLE_UREGS;
	/* The registers saved at entry to the kernel (or at the interrupt, when
	 * the sample hit user mode): user mode's either way. */
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs) {
		count(PYEBPF_CNT_USTACK_COPY_ERR);
		return sizeof(*r);
	}
	arch_user_regs(regs, r);
	sp = r->sp;
	if (want > PYEBPF_MAX_USTACK_COPY)
		want = PYEBPF_MAX_USTACK_COPY;
	for (int i = 0; i < PYEBPF_MAX_USTACK_COPY / PAGE + 1; i++) {
		/* Up to the end of sp's page first, then whole pages. */
		__u64 chunk = PAGE - ((sp + copied) & (PAGE - 1));
		__u64 pos = copied;

		if (copied >= want)
			break;
		if (chunk > want - copied)
			chunk = want - copied;
		/* Fresh bounds the verifier can follow (it loses them above). */
		barrier_var(chunk);
		barrier_var(pos);
		if (chunk == 0 || chunk > PAGE || pos > PYEBPF_MAX_USTACK_COPY)
			break;
		if (user_read((void *)(r + 1) + pos, chunk, (const void *)(sp + copied)))
			break;
		copied = (__u32)(pos + chunk);
	}
	if (!copied)
		count(PYEBPF_CNT_USTACK_COPY_ERR);
	r->copied = copied;
	return sizeof(*r) + copied;
}

#endif /* PYEBPF_USTACK_BPF_H */
