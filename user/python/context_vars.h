/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A process's context variables (contextvars, 3.7+), found for the BPF
 * reader of bpf/context.bpf.h: the HAMT's node types, OpenTelemetry's
 * `current_context` variable and the key and layout of the span it holds,
 * and the variable --context-label names. Found by walking one thread's
 * variables (a HAMT) once they hold them; each find is checked by doing
 * what BPF will do and comparing with what the objects say.
 */
#ifndef PYEBPF_PY_CONTEXT_VARS_H
#define PYEBPF_PY_CONTEXT_VARS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pyebpf.h"
#include "python/offsets.h"

/* The name of OpenTelemetry Python's variable (opentelemetry/context/contextvars_context.py). */
#define PY_OTEL_CONTEXT_VAR "current_context"
/* The prefix of the key of the current span in its Context (opentelemetry/trace/propagation). */
#define PY_OTEL_SPAN_KEY "current-span"

/* What py_ctx_discover found this time (or'ed). */
#define PY_CTX_FOUND_OTEL 0x1  /* otel_var, span_key, the span's layout, spanctx_type */
#define PY_CTX_FOUND_LABEL 0x2 /* label_var */
#define PY_CTX_FOUND_TYPES 0x4 /* a node type not known before */
#define PY_CTX_SEEN_OTEL 0x8   /* OpenTelemetry's variable, no span in its Context (yet) */

/*
 * Walk the variables at `vars` (a thread's ctx_vars) of process pid, adding
 * to *c what it does not hold yet; label: --context-label's name (NULL:
 * none). Returns PY_CTX_FOUND_* bits; 0: nothing new.
 */
unsigned py_ctx_discover(pid_t pid, const struct py_layout *l, uint64_t vars, const char *label,
			 struct pyebpf_py_ctx *c);

/* The HAMT hash of a Py_hash_t (CPython's hamt_hash). */
int32_t py_hamt_hash(int64_t h);

/* The variable's value in the HAMT at vars, as BPF finds it; 0: not set. */
uint64_t py_ctx_lookup(pid_t pid, const struct py_layout *l, const struct pyebpf_py_ctx *c, uint64_t vars, uint64_t var,
		       int32_t hash);

/*
 * What BPF's read_context() reads of a thread's variables, read here from
 * the contextvars.Context at `context` (0: none): an asyncio task's own
 * (task_context) while it waits, when no thread runs it.
 */
void py_ctx_read(pid_t pid, const struct py_layout *l, const struct pyebpf_py_ctx *c, uint64_t context,
		 struct pyebpf_ctx_read *out);

#endif
