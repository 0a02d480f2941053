// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "native/stack.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "native/merge.h"
#include "native/unwind.h"
#include "base/util.h"

struct native_stacks {
	struct profile *prof;
	struct procs *procs;
	struct pyprocs *py;
	uint8_t *kinds; /* per frame id: enum native_kind + 1; 0: not yet classified */
	size_t nkinds;
	struct native_stats stats;
	uint64_t pcs[NATIVE_MAX_FRAMES];
	uint32_t ids[NATIVE_MAX_FRAMES], py_ids[PYEBPF_MAX_PY_FRAMES];
	uint8_t kind[NATIVE_MAX_FRAMES];
	bool entry[PYEBPF_MAX_PY_FRAMES];
};

struct native_stacks *native_stacks__new(struct profile *prof, struct procs *procs, struct pyprocs *py)
{
	struct native_stacks *n = xcalloc(1, sizeof(*n));

	n->prof = prof;
	n->procs = procs;
	n->py = py;
	return n;
}

void native_stacks__free(struct native_stacks *n)
{
	if (!n)
		return;
	free(n->kinds);
	free(n);
}

const struct native_stats *native_stacks__stats(const struct native_stacks *n)
{
	return &n->stats;
}

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* Which part of the stack a native frame belongs to, by its name and file. */
static enum native_kind classify(const struct profile *prof, const struct frame *f)
{
	const char *name = f->name ? profile__str_at(prof, f->name) : "";
	const char *path = f->module ? profile__str_at(prof, f->module) : "";
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	bool interp = has_prefix(base, "libpython") || has_prefix(base, "python");

	if (interp && (!strcmp(name, "_PyEval_EvalFrameDefault") || !strcmp(name, "_PyEval_EvalFrameDefault.cold")))
		return NATIVE_EVAL;
	/* 2.7's loop; on 3.x it is a wrapper around the one above. */
	if (interp && strstr(base, "python2") && !strcmp(name, "PyEval_EvalFrameEx"))
		return NATIVE_EVAL;
	if (interp)
		return NATIVE_INTERP;
	if (has_prefix(base, "libc.so") || has_prefix(base, "libc-") || has_prefix(base, "ld-linux") ||
	    has_prefix(base, "libpthread"))
		return NATIVE_LIBC;
	return NATIVE_OTHER;
}

static enum native_kind kind_of(struct native_stacks *n, uint32_t id)
{
	if (id >= n->nkinds) {
		size_t want = n->nkinds ? n->nkinds : 1024;

		while (want <= id)
			want *= 2;
		n->kinds = xrealloc(n->kinds, want);
		memset(n->kinds + n->nkinds, 0, want - n->nkinds);
		n->nkinds = want;
	}
	if (!n->kinds[id])
		n->kinds[id] = (uint8_t)(classify(n->prof, profile__frame_at(n->prof, id)) + 1);
	return (enum native_kind)(n->kinds[id] - 1);
}

static uint32_t mark(struct native_stacks *n, const char *text)
{
	struct frame f = { .kind = FRAME_MARK };

	f.name = profile__str(n->prof, text);
	return profile__frame(n->prof, &f);
}

size_t native_stacks__frames(struct native_stacks *n, const struct sample_view *v, struct proc *p,
			     struct unwind_session **session, struct py_proc *py, uint64_t now, uint32_t *out,
			     size_t max)
{
	const struct pyebpf_sample *s = v->s;
	const struct pyebpf_uregs *r = v->regs;
	enum unwind_end end = UNWIND_END_ERROR;
	size_t nn = 0, np = 0, len;
	struct merge_in in = { 0 };
	bool mismatch;

	n->stats.samples++;
	if (r->pc) {
		nn = unwinder__unwind(session, s->h.pid, s->h.tid, procs__maps_gen(p), r, v->stack_copy, n->pcs,
				      NATIVE_MAX_FRAMES, &end);
		/* Code in no known module: an extension loaded since (dlopen)? libdw
		 * says so as "no unwind info", or fails at the very first frame when
		 * the leaf itself is in no module it was told of. */
		if ((end == UNWIND_END_NO_CFI || (end == UNWIND_END_ERROR && nn <= 1)) &&
		    procs__rescan_unknown(n->procs, p, now))
			nn = unwinder__unwind(session, s->h.pid, s->h.tid, procs__maps_gen(p), r, v->stack_copy, n->pcs,
					      NATIVE_MAX_FRAMES, &end);
	}
	switch (end) {
	case UNWIND_END_ROOT:
		n->stats.whole++;
		break;
	case UNWIND_END_COPY:
		n->stats.copy_ends++;
		break;
	case UNWIND_END_NO_CFI:
		n->stats.no_cfi++;
		break;
	default:
		n->stats.failed++;
	}
	/* Root first, named while the process is alive. */
	for (size_t i = 0; i < nn; i++) {
		size_t leaf_i = nn - 1 - i;

		n->ids[i] = procs__user_frame(n->procs, p, n->pcs[leaf_i], leaf_i == 0, now);
		n->kind[i] = (uint8_t)kind_of(n, n->ids[i]);
	}
	if (py && v->npy) {
		np = v->npy;
		py_proc__frames(n->py, py, v->py, v->npy, now, n->py_ids, n->entry);
	}
	in.native = n->ids;
	in.kind = n->kind;
	in.nnative = nn;
	in.native_whole = end == UNWIND_END_ROOT;
	in.native_mark = end == UNWIND_END_ROOT ? 0 : mark(n, unwind_end_mark(end));
	in.py = n->py_ids;
	in.py_entry = n->entry;
	in.npy = np;
	in.py_cut = s->py_error == PYEBPF_PY_READ_FRAME ||
		    (s->flags & (PYEBPF_SAMPLE_PY_TRUNCATED | PYEBPF_SAMPLE_PY_LOOP));
	in.mismatch_mark = mark(n, "[native/Python mismatch]");
	len = merge_stacks(&in, out, max, &mismatch);
	if (np)
		n->stats.python++;
	if (mismatch)
		n->stats.mismatched++;
	return len;
}
