/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A thread's Python frame chain read from userspace (process_vm_readv), by
 * the layout the BPF walker uses: thread names (threadname.c) and `dump
 * --locals` (locals.c) walk it here.
 */
#ifndef PYEBPF_PY_FRAMES_H
#define PYEBPF_PY_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "python/offsets.h"

/* The innermost frame of a thread state (0: none, or unreadable). */
uint64_t py_frame_first(pid_t pid, const struct py_layout *l, uint64_t tstate);
/* The code object of a frame (0: a 3.12+ C-stack shim, or unreadable). */
uint64_t py_frame_code(pid_t pid, const struct py_layout *l, uint64_t frame);
/* The same and the frame's caller (*back), in one read where the fields are close. */
uint64_t py_frame_step(pid_t pid, const struct py_layout *l, uint64_t frame, uint64_t *back);

/* What identifies one call's frame at a moment: its code object, its caller
 * link and where it is (the instruction: f_lasti, prev_instr or
 * instr_ptr). A caller's instruction stays put while its callee runs. */
struct py_frame_look {
	uint64_t code, back, instr;
};

/* Bytes of a frame a look reads (0: beyond what one read takes), and a look from those bytes. */
size_t py_frame_look_size(const struct py_layout *l);
void py_frame_look_parse(const struct py_layout *l, const uint8_t *buf, struct py_frame_look *out);
/* A frame's look in one read; -1 when unreadable. code 0: a C-stack shim. */
int py_frame_look(pid_t pid, const struct py_layout *l, uint64_t frame, struct py_frame_look *out);

#endif
