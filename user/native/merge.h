/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * --native: one stack per sample from the native frames (DWARF-unwound) and
 * the Python frames (read from the interpreter). Each interpreter evaluation
 * frame (_PyEval_EvalFrameDefault; PyEval_EvalFrameEx on 2.7) is replaced by
 * the Python frames it runs — on 3.11+ one evaluation loop runs several, up
 * to its entry frame — and the interpreter's plumbing between them
 * (PyObject_Call, _PyFunction_Vectorcall...) is dropped; extension modules,
 * the C library and interpreter code called at the leaf (list.sort's
 * list_sort) stay. Pure logic: frame ids in, frame ids out.
 */
#ifndef PYEBPF_NATIVE_MERGE_H
#define PYEBPF_NATIVE_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum native_kind {
	NATIVE_OTHER = 0, /* extension modules, the application: always kept */
	NATIVE_EVAL,      /* the evaluation function: replaced by Python frames */
	NATIVE_INTERP,    /* other code of the interpreter: kept only past the last evaluation frame */
	NATIVE_LIBC,      /* the C library and loader: dropped below the first evaluation frame */
};

struct merge_in {
	const uint32_t *native; /* native frame ids, root first */
	const uint8_t *kind;    /* enum native_kind of each */
	size_t nnative;
	bool native_whole;    /* unwinding reached the outermost frame */
	uint32_t native_mark; /* a frame standing for where unwinding stopped (0: none) */
	const uint32_t *py;   /* Python frame ids, root first */
	const bool *py_entry; /* the first frame an evaluation loop ran after entry from C */
	size_t npy;
	bool py_cut;            /* the Python stack lacks its root part (a frame unreadable, or too deep) */
	uint32_t mismatch_mark; /* the frame marking where the counts disagree */
};

/* Writes at most `max` frame ids, root first; *mismatch says whether the
 * evaluation frames and the Python entry frames did not pair up. */
size_t merge_stacks(const struct merge_in *in, uint32_t *out, size_t max, bool *mismatch);

#endif
