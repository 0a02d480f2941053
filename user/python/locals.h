/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `pyebpf dump --locals`: a Python frame's local variables, read from the
 * target with bounded reads (names from the code object, values from the
 * frame's fast locals). Nothing in the target runs: ints, floats, str,
 * bytes, None and bool are shown as Python would; anything else as
 * `<type at 0x...>`.
 */
#ifndef PYEBPF_PY_LOCALS_H
#define PYEBPF_PY_LOCALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "python/detect.h"
#include "python/frames.h"

/* Locals shown per frame at most. */
#define PY_LOCALS_MAX 64

struct py_local {
	char *name;  /* owned */
	char *value; /* owned: a repr, at most PY_REPR_MAX bytes */
};

/* A Python frame of a thread's chain as one walk saw it. */
struct py_seen_frame {
	uint64_t frame;
	struct py_frame_look look;
};

/* Frames a walk goes beyond the capture's depth: a thread may have called deeper since. */
#define PY_CHAIN_SLACK 32
/* No walked frame stands for this captured one. */
#define PY_NO_MATCH ((size_t)-1)

/*
 * The Python frames of tstate's chain now, leaf first (C-stack shims left
 * out), at most max, into out (malloc'd); how many. *more: the chain went on.
 */
size_t py_chain_read(pid_t pid, const struct py_interp *in, uint64_t tstate, size_t max, struct py_seen_frame **out,
		     bool *more);
/*
 * Pure: which walked frame stands for each captured one (both leaf first, by
 * code object): match[i] an index into walked, or PY_NO_MATCH. The whole
 * capture where it appears in a row (below frames called since); else, when
 * the walk saw the whole chain (!more), as far as both agree from the
 * outermost frame in. How many matched.
 */
size_t py_chain_match(const uint64_t *captured, size_t ncap, const uint64_t *walked, size_t nwalk, bool more,
		      size_t *match);
/*
 * The fast-local slots of the walked frames w[idx[i]] (nvals[i] of them into
 * vals[i]; idx[i] PY_NO_MATCH: none), read between two looks at each of
 * those frames and their callers, in one system call per 200 frames (the
 * kernel copies them in that order, within microseconds). held[i]: the
 * frame and its caller were the walk's before and after: same code and
 * caller link, and the same instruction in a frame below another (a
 * caller's stays at its call while its callee runs). Then the values are
 * of the call the walk saw, beside the caller it saw.
 */
void py_frames_values_held(pid_t pid, const struct py_interp *in, const struct py_seen_frame *w, size_t nw,
			   const size_t *idx, size_t n, const size_t *nvals, uint64_t *const *vals, bool *held);
/* How many fast-local slots a code object's frames hold whose names are read (0: none, or unreadable). */
size_t py_code_nlocals(pid_t pid, const struct py_interp *in, uint64_t code);
/* The locals of a frame running `code`, from its slots' values (nvalues of them, as py_code_nlocals
 * said), into out (room for PY_LOCALS_MAX); how many. */
size_t py_frame_locals(pid_t pid, const struct py_interp *in, const uint64_t *values, size_t nvalues, uint64_t code,
		       struct py_local *out);
void py_locals_free(struct py_local *l, size_t n);

#endif
