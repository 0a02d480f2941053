/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A thread's Python frame chain read from userspace (process_vm_readv), by
 * the layout the BPF walker uses: thread names (threadname.c) and `dump
 * --locals` (locals.c) walk it here.
 */
#ifndef PYEBPF_PY_FRAMES_H
#define PYEBPF_PY_FRAMES_H

#include <stdint.h>
#include <sys/types.h>

#include "python/offsets.h"

/* The innermost frame of a thread state (0: none, or unreadable). */
uint64_t py_frame_first(pid_t pid, const struct py_layout *l, uint64_t tstate);
/* The code object of a frame (0: a 3.12+ C-stack shim, or unreadable). */
uint64_t py_frame_code(pid_t pid, const struct py_layout *l, uint64_t frame);
/* The same and the frame's caller (*back), in one read where the fields are close. */
uint64_t py_frame_step(pid_t pid, const struct py_layout *l, uint64_t frame, uint64_t *back);

#endif
