/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Python processes and their code objects. Each (process, code object) is
 * read once with process_vm_readv — qualified name, file, first line, line
 * table — as soon as a sample shows it, so short-lived processes keep their
 * names; a cached entry is re-checked (name, file and first line pointers)
 * once a second, so a freed and reused address is noticed. Frames of code
 * that dies young (a module's, a class body's, exec'd) carry BPF's check of
 * their code object, compared at every sample: such a frame is never named
 * by another code object that took its address before it was read.
 */
#ifndef PYEBPF_PY_SYMBOLIZE_H
#define PYEBPF_PY_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"
#include "profile/offcpu.h"
#include "python/detect.h"
#include "pyebpf.h"

struct pyprocs;
struct py_proc;

struct pyprocs *pyprocs__new(struct profile *prof);
void pyprocs__free(struct pyprocs *t); /* accepts NULL */

/*
 * The Python state of pid, looked for again whenever maps_gen (the number of
 * times its maps were read) changed since the last look. *slot is the
 * process's part here, kept in its record of the process table
 * (record/processes.h): made at the first look, NULL before. *changed tells
 * the caller to (re)register or unregister the process in BPF. An
 * unsupported interpreter is reported once with one line on stderr.
 */
struct py_proc *pyprocs__lookup(struct pyprocs *t, struct py_proc **slot, uint32_t pid, uint64_t maps_gen,
				bool *changed);
/* The process exec'd or exited: its part goes (NULL accepted). */
void py_proc__free(struct py_proc *p);
/* A supported Python, as the last look found (NULL: not looked at). */
bool py_proc__supported(const struct py_proc *p);
uint32_t py_proc__pid(const struct py_proc *p);
const struct py_interp *py_proc__interp(const struct py_proc *p);
/* Where its GIL lives (read from the process the first time), or NULL. */
const struct gil_range *py_proc__gil(struct py_proc *p);
/* The frame of (code object, the frame's globals, byte offset of the current instruction). */
uint32_t py_proc__frame(struct pyprocs *t, struct py_proc *p, uint64_t code, uint64_t globals, int32_t lasti,
			uint64_t now);
/*
 * A frame as BPF sent it: by its code object while the code object at its
 * address is the one sampled (its check, pyebpf_code_check, says so); a
 * module's frame whose code is gone by its globals' file; else a mark,
 * never by another code object.
 */
uint32_t py_proc__pyframe(struct pyprocs *t, struct py_proc *p, const struct pyebpf_pyframe *pf, uint64_t now);
/* Does a code object read (valid, with check have) stand for a frame whose
 * code had check sampled? */
static inline bool py_code_matches(bool valid, uint32_t have, uint32_t sampled)
{
	return valid && have == sampled;
}
/*
 * The Python frames of a sample, given leaf first as BPF sends them, into
 * out[0 .. n) root first; entry[i] (if not NULL) says frame i was the first
 * one an evaluation loop ran after being entered from C.
 */
void py_proc__frames(struct pyprocs *t, struct py_proc *p, const struct pyebpf_pyframe *leaf_first, uint32_t n,
		     uint64_t now, uint32_t *out, bool *entry);
/* Code objects read (for the summary). */
uint64_t pyprocs__codes_read(const struct pyprocs *t);

#endif
