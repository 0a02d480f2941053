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

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "python/detect.h"

/* Locals shown per frame at most. */
#define PY_LOCALS_MAX 64

struct py_local {
	char *name;  /* owned */
	char *value; /* owned: a repr, at most PY_REPR_MAX bytes */
};

/*
 * The frames of tstate's chain whose code objects are codes[0 .. n) in that
 * order (leaf first, as a BPF sample lists them): frames[i] is the frame of
 * codes[i], 0 where the chain did not show it (it changed since).
 */
void py_frames_of_codes(pid_t pid, const struct py_interp *in, uint64_t tstate, const uint64_t *codes, size_t n,
			uint64_t *frames);
/* The locals of `frame`, which runs `code`, into out (room for PY_LOCALS_MAX); how many. */
size_t py_frame_locals(pid_t pid, const struct py_interp *in, uint64_t frame, uint64_t code, struct py_local *out);
void py_locals_free(struct py_local *l, size_t n);

#endif
