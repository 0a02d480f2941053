// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "native/merge.h"

struct out {
	uint32_t *v;
	size_t n, max;
};

static void put(struct out *o, uint32_t id)
{
	if (o->n < o->max)
		o->v[o->n++] = id;
}

/* Python frames [from, to) of the root-first array. */
static void put_py(struct out *o, const struct merge_in *in, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		put(o, in->py[i]);
}

/* Where group g of the Python frames starts (groups root first; an entry
 * frame opens a group; the root frame opens one even when it is not marked,
 * as when the Python stack was cut short). */
static size_t count_groups(const struct merge_in *in, size_t *starts, size_t max)
{
	size_t g = 0;

	for (size_t i = 0; i < in->npy; i++)
		if ((i == 0 || in->py_entry[i]) && g < max)
			starts[g++] = i;
	return g;
}

#define MAX_GROUPS 1100

size_t merge_stacks(const struct merge_in *in, uint32_t *out_ids, size_t max, bool *mismatch)
{
	struct out o = { out_ids, 0, max };
	size_t starts[MAX_GROUPS + 1], evals = 0, groups, matched, first_group, first_eval, last_eval = 0;
	size_t last_other = 0; /* past the leaf-most frame of an extension or the application */
	size_t e = 0;
	/* A stack whose root part is missing, native or Python, pairs from the leaf. */
	bool from_leaf = !in->native_whole || in->py_cut;

	groups = count_groups(in, starts, MAX_GROUPS);
	starts[groups] = in->npy;
	for (size_t i = 0; i < in->nnative; i++) {
		if (in->kind[i] == NATIVE_EVAL) {
			evals++;
			last_eval = i;
		}
		if (in->kind[i] == NATIVE_OTHER)
			last_other = i + 1;
	}
	/* A native stack cut short (the copy ended: OpenBLAS keeps half a
	 * megabyte of locals) lacks the evaluation frames of its root part:
	 * its shortfall is no mismatch. */
	*mismatch = groups && evals != groups && (in->native_whole || evals > groups);
	if (!groups) { /* not a Python thread: the native stack as it is */
		if (in->native_mark)
			put(&o, in->native_mark);
		for (size_t i = 0; i < in->nnative; i++)
			put(&o, in->native[i]);
		return o.n;
	}
	if (!evals) {
		/* No evaluation frame found: the Python frames as the callers of
		 * what runs natively, the interpreter's own frames left out; the
		 * mark says why they are not paired (the native stack was cut
		 * before reaching the interpreter, or they disagree). */
		put_py(&o, in, 0, in->npy);
		put(&o, !in->native_whole && in->native_mark ? in->native_mark : in->mismatch_mark);
		for (size_t i = 0; i < in->nnative; i++)
			if (in->kind[i] == NATIVE_OTHER)
				put(&o, in->native[i]);
		return o.n;
	}
	matched = evals < groups ? evals : groups;
	/*
	 * Whole stacks pair from the root: a race at the leaf (an evaluation
	 * loop entered, its frame not yet linked) leaves the extra at the
	 * leaf. A native stack that could not be unwound to its root, or a
	 * Python stack read only from its leaf, pairs from the leaf: what is
	 * missing is at the root.
	 */
	first_group = from_leaf ? groups - matched : 0;
	first_eval = from_leaf ? evals - matched : 0;
	bool marked = false;
	if (first_group) { /* Python callers whose native frames were not unwound */
		put_py(&o, in, 0, starts[first_group]);
		marked = !in->native_whole && in->native_mark;
		put(&o, marked ? in->native_mark : in->mismatch_mark);
	}
	if (in->native_mark && !marked)
		put(&o, in->native_mark);
	for (size_t i = 0, g = first_group; i < in->nnative; i++) {
		enum native_kind k = in->kind[i];

		if (k == NATIVE_EVAL) {
			size_t this_eval = e++;

			if (this_eval < first_eval || this_eval >= first_eval + matched) {
				/* The first unpaired one: at the root when pairing from the
				 * leaf, past the paired ones otherwise. */
				if (this_eval == (first_eval ? 0 : matched))
					put(&o, in->mismatch_mark);
				put(&o, in->native[i]); /* no Python frames for it */
				continue;
			}
			put_py(&o, in, starts[g], starts[g + 1]);
			g++;
			if (!from_leaf && this_eval + 1 == matched && groups > matched) {
				/* More Python frames than evaluation frames: on the last one. */
				put(&o, in->mismatch_mark);
				put_py(&o, in, starts[g], in->npy);
			}
			continue;
		}
		/* Kept: extensions and the application; the C library once
		 * Python runs (qsort calling back into Python, say); interpreter
		 * code at the leaf (list.sort's list_sort). Dropped: the
		 * interpreter's plumbing between Python and an extension
		 * (PyObject_Call...) and the start-up frames below Python. */
		if (k == NATIVE_OTHER || (k == NATIVE_LIBC && e > 0) || (i > last_eval && i >= last_other))
			put(&o, in->native[i]);
	}
	return o.n;
}
