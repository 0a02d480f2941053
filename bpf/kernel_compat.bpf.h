/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The same programs for kernels that lack what the default build uses. The
 * BPF object is built more than once from the same sources (Makefile:
 * BPF_VARIANTS), with the same maps, programs and settings, so one
 * skeleton drives any of them; userspace picks one by probing the kernel
 * (user/sampler.c). This header says what differs:
 *
 * PYEBPF_KERNEL_COMPAT (before Linux 5.17): no bpf_loop, so the walks are
 *   bounded loops over global functions (verified once each), the same
 *   frame bound, 512 threads per interpreter; no bpf_get_current_task_btf
 *   (5.11): the current task is read through CO-RE.
 * PYEBPF_TASK_WORK_V2 (Linux 7.x): bpf_task_work_schedule_resume without
 *   the _impl suffix, the program implicit; 6.18's _impl kfunc changed its
 *   prototype there, and libbpf 1.1 fails a whole object on an extern whose
 *   prototype differs, __weak or not.
 */
#ifndef PYEBPF_KERNEL_COMPAT_BPF_H
#define PYEBPF_KERNEL_COMPAT_BPF_H

#ifdef PYEBPF_KERNEL_COMPAT
/* The walks' bounds without bpf_loop; LOOP itself is python.bpf.h's
 * (a bounded loop over a global function). The verifier follows at most
 * 8192 jumps in a row: 512 threads in each of 4 interpreters and 1280
 * frames stay within it. */
#define COMPAT_MAX_THREADS 512
#define COMPAT_MAX_FRAMES (PYEBPF_MAX_PY_FRAMES + 256)
#define current_task() ((struct task_struct *)bpf_get_current_task())
#else
#define current_task() bpf_get_current_task_btf()
#endif

#endif
