/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The one decoder of the sample wire format (include/pyebpf.h). A ring-buffer
 * record is variable-length: the header, then the kernel and user stacks
 * (only their used part when the sample carries no Python frames), the
 * Python frames, and with --native the user registers and a stack copy.
 * Every consumer reads a sample through the view this returns; the bounds
 * checks live here once. Userspace only: BPF writes the format, never reads it.
 */
#ifndef PYEBPF_SAMPLE_VIEW_H
#define PYEBPF_SAMPLE_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "pyebpf.h"

struct sample_view {
	const struct pyebpf_sample *s; /* header fields: h, cgroup_id, comm, flags, tstate, py_error */
	const __u64 *kstack;           /* leaf first */
	uint32_t nkstack;
	const __u64 *ustack; /* leaf first (frame-pointer walk; empty with --native) */
	uint32_t nustack;
	const struct pyebpf_pyframe *py; /* leaf first; only when PYEBPF_SAMPLE_PY is set */
	uint32_t npy;
	const struct pyebpf_uregs *regs; /* --native: NULL unless PYEBPF_SAMPLE_UREGS */
	const uint8_t *stack_copy;       /* regs->copied bytes of user stack from regs->sp */
	uint32_t copied;
};

enum sample_decode_err {
	SAMPLE_OK = 0,
	SAMPLE_SHORT,        /* shorter than the fixed header */
	SAMPLE_NOT_A_SAMPLE, /* the header's type is not PYEBPF_EVENT_SAMPLE */
	SAMPLE_STACK_LEN,    /* a stack length above PYEBPF_MAX_STACK or beyond the record */
	SAMPLE_PY_LEN,       /* a Python frame count above the maximum or beyond the record */
	SAMPLE_UREGS,        /* --native tail missing, cut or claiming more than the maximum copy */
};

/*
 * Check `size` bytes at `data` (8-byte aligned, as ring-buffer records are)
 * and fill *v. On error *v is zeroed and the reason returned.
 */
enum sample_decode_err sample_decode(const void *data, size_t size, struct sample_view *v);
const char *sample_decode_strerror(enum sample_decode_err e);

#endif
