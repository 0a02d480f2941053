/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Every read of a CPU's registers from a task, per architecture, in one
 * place (libbpf's bpf_tracing.h does the same for its PT_REGS_*): the thread
 * pointer, the user registers --native unwinds from, the frame pointer
 * chain's start, the syscall in progress. What the numbers mean is
 * include/pyebpf_arch.h.
 */
#ifndef PYEBPF_ARCH_BPF_H
#define PYEBPF_ARCH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

#include "pyebpf.h"

#if defined(__TARGET_ARCH_x86)

/* The user thread pointer: fsbase. */
#define ARCH_THREAD_POINTER(task) BPF_CORE_READ((task), thread.fsbase)
#define ARCH_PC(regs) BPF_CORE_READ((regs), ip)
#define ARCH_FP(regs) BPF_CORE_READ((regs), bp)
/* The syscall a task is in (-1: none), and its first argument. */
#define ARCH_SYSCALL_NR(regs) ((__s32)BPF_CORE_READ((regs), orig_ax))
/* The same from a BTF-typed pointer (tp_btf's arguments), loaded directly. */
#define ARCH_SYSCALL_NR_BTF(regs) ((__s32)(regs)->orig_ax)
#define ARCH_SYSCALL_ARG0(regs) BPF_CORE_READ((regs), di)
/* The next two, at syscall entry (the raw sys_enter tracepoint). */
#define ARCH_SYSCALL_ARG1(regs) BPF_CORE_READ((regs), si)
#define ARCH_SYSCALL_ARG2(regs) BPF_CORE_READ((regs), dx)
/* A 32-bit task's syscall (TS_COMPAT): its numbers are the ia32 table's. */
#define ARCH_COMPAT_SYSCALL(task) (BPF_CORE_READ((task), thread_info.status) & 0x0002)

#elif defined(__TARGET_ARCH_arm64)

/* TPIDR_EL0, as the kernel saves it at a switch (pthread_self() is below it). */
#define ARCH_THREAD_POINTER(task) BPF_CORE_READ((task), thread.uw.tp_value)
#define ARCH_PC(regs) BPF_CORE_READ((regs), pc)
/* An AAPCS64 frame record at x29 is { caller's x29, return address }: the
 * shape of x86-64's { rbp, return address }, so one walk serves both. */
#define ARCH_FP(regs) BPF_CORE_READ((regs), regs[29])
/* x0 is overwritten by the return value; the first argument stays in orig_x0. */
#define ARCH_SYSCALL_NR(regs) ((__s32)BPF_CORE_READ((regs), syscallno))
#define ARCH_SYSCALL_NR_BTF(regs) ((__s32)(regs)->syscallno)
#define ARCH_SYSCALL_ARG0(regs) BPF_CORE_READ((regs), orig_x0)
/* The next two, at syscall entry (the raw sys_enter tracepoint). */
#define ARCH_SYSCALL_ARG1(regs) BPF_CORE_READ((regs), regs[1])
#define ARCH_SYSCALL_ARG2(regs) BPF_CORE_READ((regs), regs[2])
/* An AArch32 task (TIF_32BIT): its numbers are the compat table's. */
#define ARCH_COMPAT_SYSCALL(task) (BPF_CORE_READ((task), thread_info.flags) & (1UL << 22))

#else
#error "pyebpf's BPF knows __TARGET_ARCH_x86 and __TARGET_ARCH_arm64"
#endif

/* The user registers of --native (struct pyebpf_uregs) from a task's saved ones. */
static __always_inline void arch_user_regs(struct pt_regs *regs, struct pyebpf_uregs *r)
{
	int i = 0;

	r->pc = ARCH_PC(regs);
	r->sp = BPF_CORE_READ(regs, sp);
#define READ_UREG(field, dwarf) r->more[i++] = BPF_CORE_READ(regs, field);
	PYEBPF_UREGS_MORE(READ_UREG)
#undef READ_UREG
}

#endif /* PYEBPF_ARCH_BPF_H */
