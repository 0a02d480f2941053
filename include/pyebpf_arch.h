/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What differs per CPU, for both sides, in one place (as libbpf's
 * bpf_tracing.h keeps pt_regs): the user registers --native unwinds from
 * and their DWARF numbers, and the syscall numbers behind off-CPU reasons
 * and memory given back.
 * How BPF reads them from a task is bpf/arch.bpf.h. The BPF side is told its
 * target by -D__TARGET_ARCH_*, userspace by its compiler.
 */
#ifndef PYEBPF_ARCH_H
#define PYEBPF_ARCH_H

#if defined(__TARGET_ARCH_x86) || (!defined(__BPF__) && defined(__x86_64__))

/*
 * Besides the pc and sp, the registers a DWARF unwinder starts from: those
 * a callee saves (a caller's values live in them until then), as
 * X(pt_regs field, DWARF register number).
 */
#define PYEBPF_UREGS_MORE(X) X(bp, 6) X(bx, 3) X(r12, 12) X(r13, 13) X(r14, 14) X(r15, 15)
#define PYEBPF_DWARF_SP 7
/* rip is DWARF register 16 too: the CFI of PLT stubs computes the CFA from
 * it (DW_OP_breg16), and libdw reads it from the registers, not the pc. */
#define PYEBPF_DWARF_PC 16
/* glibc (TLS variant II): the thread pointer (fsbase) is pthread_self(). */
#define PYEBPF_TP_TO_SELF_SYMBOL ((const char *)0)
/* A code address as the stack holds it. */
#define PYEBPF_USER_PC_MASK (~0ULL)

/* Syscall numbers (asm/unistd_64.h): the ABI, fixed forever. */
enum pyebpf_syscall_nr {
	PYEBPF_NR_read = 0,
	PYEBPF_NR_write = 1,
	PYEBPF_NR_open = 2,
	PYEBPF_NR_poll = 7,
	PYEBPF_NR_munmap = 11,
	PYEBPF_NR_brk = 12,
	PYEBPF_NR_pread64 = 17,
	PYEBPF_NR_pwrite64 = 18,
	PYEBPF_NR_readv = 19,
	PYEBPF_NR_writev = 20,
	PYEBPF_NR_select = 23,
	PYEBPF_NR_mremap = 25,
	PYEBPF_NR_madvise = 28,
	PYEBPF_NR_nanosleep = 35,
	PYEBPF_NR_sendfile = 40,
	PYEBPF_NR_connect = 42,
	PYEBPF_NR_accept = 43,
	PYEBPF_NR_sendto = 44,
	PYEBPF_NR_recvfrom = 45,
	PYEBPF_NR_sendmsg = 46,
	PYEBPF_NR_recvmsg = 47,
	PYEBPF_NR_semop = 65,
	PYEBPF_NR_msgrcv = 69,
	PYEBPF_NR_fcntl = 72,
	PYEBPF_NR_flock = 73,
	PYEBPF_NR_fsync = 74,
	PYEBPF_NR_fdatasync = 75,
	PYEBPF_NR_futex = 202,
	PYEBPF_NR_io_getevents = 208,
	PYEBPF_NR_semtimedop = 220,
	PYEBPF_NR_clock_nanosleep = 230,
	PYEBPF_NR_epoll_wait = 232,
	PYEBPF_NR_mq_timedreceive = 243,
	PYEBPF_NR_openat = 257,
	PYEBPF_NR_pselect6 = 270,
	PYEBPF_NR_ppoll = 271,
	PYEBPF_NR_splice = 275,
	PYEBPF_NR_epoll_pwait = 281,
	PYEBPF_NR_accept4 = 288,
	PYEBPF_NR_preadv = 295,
	PYEBPF_NR_pwritev = 296,
	PYEBPF_NR_recvmmsg = 299,
	PYEBPF_NR_sendmmsg = 307,
	PYEBPF_NR_copy_file_range = 326,
	PYEBPF_NR_preadv2 = 327,
	PYEBPF_NR_pwritev2 = 328,
	PYEBPF_NR_io_uring_enter = 426,
	PYEBPF_NR_epoll_pwait2 = 441,
	PYEBPF_NR_futex_waitv = 449,
};

#elif defined(__TARGET_ARCH_arm64) || (!defined(__BPF__) && defined(__aarch64__))

/* AAPCS64: x19-x28 callee-saved, x29 the frame pointer, x30 the link
 * register (a leaf that has not saved it keeps its return address there
 * only); DWARF numbers x0-x30 = 0-30, sp = 31. */
/* clang-format off */
#define PYEBPF_UREGS_MORE(X) \
	X(regs[19], 19) X(regs[20], 20) X(regs[21], 21) X(regs[22], 22) X(regs[23], 23) X(regs[24], 24) \
	X(regs[25], 25) X(regs[26], 26) X(regs[27], 27) X(regs[28], 28) X(regs[29], 29) X(regs[30], 30)
/* clang-format on */
#define PYEBPF_DWARF_SP 31
#define PYEBPF_DWARF_PC (-1) /* none: libdw takes the pc on its own */
/*
 * glibc (TLS variant I): the thread pointer (TPIDR_EL0) points past struct
 * pthread, pthread_self() = tp - sizeof(struct pthread): 1856 in glibc
 * 2.36, 1824 in 2.41. libc says how much in this symbol (user/python/detect.c).
 */
#define PYEBPF_TP_TO_SELF_SYMBOL "_thread_db_const_thread_area"
/* Code built with -mbranch-protection (Debian's from trixie on) signs the
 * return addresses it saves: a pointer authentication code in the bits above
 * the 48-bit user address space, which an address must lose to be one. */
#define PYEBPF_USER_PC_MASK ((1ULL << 48) - 1)
/* libdw newer than 0.188 (trixie's 0.192) strips that code from the return
 * addresses the unwind tables mark signed, told the bits to clear as its
 * register -2; bookworm's 0.188 (the static binary's) refuses that register,
 * and user/native/unwind.c then clears the bits from every stack word read. */
#define PYEBPF_LIBDW_PAC_MASK_REG (-2)

/* The generic table (asm-generic/unistd.h). arm64 has no open, poll,
 * select or epoll_wait: numbers no syscall has stand for them. */
enum pyebpf_syscall_nr {
	PYEBPF_NR_open = -5,
	PYEBPF_NR_poll = -4,
	PYEBPF_NR_select = -3,
	PYEBPF_NR_epoll_wait = -2,
	PYEBPF_NR_io_getevents = 4,
	PYEBPF_NR_epoll_pwait = 22,
	PYEBPF_NR_fcntl = 25,
	PYEBPF_NR_flock = 32,
	PYEBPF_NR_openat = 56,
	PYEBPF_NR_read = 63,
	PYEBPF_NR_write = 64,
	PYEBPF_NR_readv = 65,
	PYEBPF_NR_writev = 66,
	PYEBPF_NR_pread64 = 67,
	PYEBPF_NR_pwrite64 = 68,
	PYEBPF_NR_preadv = 69,
	PYEBPF_NR_pwritev = 70,
	PYEBPF_NR_sendfile = 71,
	PYEBPF_NR_pselect6 = 72,
	PYEBPF_NR_ppoll = 73,
	PYEBPF_NR_splice = 76,
	PYEBPF_NR_fsync = 82,
	PYEBPF_NR_fdatasync = 83,
	PYEBPF_NR_futex = 98,
	PYEBPF_NR_nanosleep = 101,
	PYEBPF_NR_clock_nanosleep = 115,
	PYEBPF_NR_mq_timedreceive = 183,
	PYEBPF_NR_msgrcv = 188,
	PYEBPF_NR_semtimedop = 192,
	PYEBPF_NR_semop = 193,
	PYEBPF_NR_accept = 202,
	PYEBPF_NR_connect = 203,
	PYEBPF_NR_sendto = 206,
	PYEBPF_NR_recvfrom = 207,
	PYEBPF_NR_sendmsg = 211,
	PYEBPF_NR_recvmsg = 212,
	PYEBPF_NR_brk = 214,
	PYEBPF_NR_munmap = 215,
	PYEBPF_NR_mremap = 216,
	PYEBPF_NR_madvise = 233,
	PYEBPF_NR_accept4 = 242,
	PYEBPF_NR_recvmmsg = 243,
	PYEBPF_NR_sendmmsg = 269,
	PYEBPF_NR_copy_file_range = 285,
	PYEBPF_NR_preadv2 = 286,
	PYEBPF_NR_pwritev2 = 287,
	PYEBPF_NR_io_uring_enter = 426,
	PYEBPF_NR_epoll_pwait2 = 441,
	PYEBPF_NR_futex_waitv = 449,
};

#else
#error "pyebpf knows x86-64 and arm64: another CPU needs its registers and syscall numbers here"
#endif

/* How many callee-saved registers a sample carries: the most any CPU here needs. */
#define PYEBPF_UREGS_MORE_MAX 12

#endif /* PYEBPF_ARCH_H */
