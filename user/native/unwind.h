/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * --native: unwind a user stack offline from the registers and the stack
 * bytes copied at the sample, with each mapped file's DWARF call frame
 * information (.eh_frame, .debug_frame) through libdw, as perf does for
 * --call-graph dwarf. Works for code with and without frame pointers.
 * One libdw session per process, rebuilt when its mappings change: the
 * process's record (record/processes.h) holds it.
 */
#ifndef PYEBPF_NATIVE_UNWIND_H
#define PYEBPF_NATIVE_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "pyebpf.h"

struct unwind_session;

/* Why unwinding stopped. */
enum unwind_end {
	UNWIND_END_ROOT = 0, /* the outermost frame: the stack is whole */
	UNWIND_END_COPY,     /* the stack copy ended (raise --stack-size) */
	UNWIND_END_NO_CFI,   /* an address without unwind information (JIT, no module) */
	UNWIND_END_MAX,      /* more frames than the caller's array */
	UNWIND_END_ERROR,    /* anything else libdw reported */
};

/*
 * Unwind one sample of thread `tid` of process `pid` (alive: its mappings are
 * read from /proc): regs, then regs->copied bytes of stack from regs->sp.
 * Fills pcs[0 ..) leaf first; the first is the sampled instruction, the
 * others return addresses. `maps_gen` changes whenever the caller saw the
 * process's mappings change, and makes the session be rebuilt. *session is
 * the process's libdw session, made at its first unwind (NULL before). Returns the
 * number of frames (at least 1 when regs->ip is set).
 */
size_t unwinder__unwind(struct unwind_session **session, uint32_t pid, uint32_t tid, uint64_t maps_gen,
			const struct pyebpf_uregs *regs, const uint8_t *stack, uint64_t *pcs, size_t max,
			enum unwind_end *end);

/* The process exited or exec'd: its session goes (NULL accepted). */
void unwind_session__free(struct unwind_session *s);

/* One line on why unwinding stopped, for marking a stack. */
const char *unwind_end_mark(enum unwind_end e);

#endif
