/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * --native: the user part of a sample's stack, merged. The copied stack is
 * unwound (native/unwind.h), its addresses named (procs.h), classified
 * (evaluation loop, interpreter, C library, other) and merged with the
 * sample's Python frames (native/merge.h).
 */
#ifndef PYEBPF_NATIVE_STACK_H
#define PYEBPF_NATIVE_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "symbols/procs.h"
#include "profile/profile.h"
#include "pyebpf.h"
#include "python/symbolize.h"
#include "native/unwind.h"
#include "sample_view.h"

/* Native frames unwound per sample: deep mixed stacks run to hundreds. */
#define NATIVE_MAX_FRAMES 1024

struct native_stats {
	uint64_t samples;    /* samples with registers and a stack copy */
	uint64_t whole;      /* unwound to the outermost frame */
	uint64_t copy_ends;  /* stopped at the end of the stack copy */
	uint64_t no_cfi;     /* stopped at code without unwind information */
	uint64_t failed;     /* stopped for another reason */
	uint64_t python;     /* samples with Python frames */
	uint64_t mismatched; /* ... whose evaluation frames and Python entry frames did not pair up */
};

struct native_stacks;

struct native_stacks *native_stacks__new(struct profile *prof, struct procs *procs, struct pyprocs *py);
void native_stacks__free(struct native_stacks *n); /* accepts NULL */
const struct native_stats *native_stacks__stats(const struct native_stacks *n);

/*
 * The user frames of a decoded sample carrying registers and a stack copy
 * (v->regs not NULL), root first into out[0 .. max). *session is the
 * process's libdw session (native/unwind.h); py its interpreter, or NULL.
 */
size_t native_stacks__frames(struct native_stacks *n, const struct sample_view *v, struct proc *p,
			     struct unwind_session **session, struct py_proc *py, uint64_t now, uint32_t *out,
			     size_t max);

#endif
