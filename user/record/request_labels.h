/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Which request a sample belongs to (docs/requests.md): from what BPF read
 * of the thread's context variables (pyebpf_ctx_read), the labels trace_id,
 * span_id, span_name and endpoint of the current OpenTelemetry span, and
 * --context-label's variable. Per process: what BPF must be told to read
 * them (found by walking a thread's variables), the spans seen (read once
 * each, by id) and each trace's local root, whose route is the endpoint.
 */
#ifndef PYEBPF_RECORD_REQUEST_LABELS_H
#define PYEBPF_RECORD_REQUEST_LABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "pyebpf.h"
#include "python/detect.h"

struct request_proc;

void request_proc__free(struct request_proc *r); /* accepts NULL */

/*
 * Label l from sample s of process pid (Python, interpreter pi), whose
 * request state is *r (made at the first call). label: --context-label's
 * variable, or NULL. Returns true when *tell holds what BPF must now read
 * for pid (the py_ctx map).
 */
bool request_labels(struct request_proc **r, struct profile *prof, uint32_t pid, const struct py_interp *pi,
		    const struct pyebpf_sample *s, const char *label, uint64_t now, struct sample_labels *l,
		    struct pyebpf_py_ctx *tell);

/*
 * Label l, a sample of an asyncio task of process pid, from the task's own
 * context (task_context, a contextvars.Context): its request while it
 * waits. Nothing until a thread's sample found the variables (r NULL
 * accepted).
 */
void request_labels_of_task(struct request_proc *r, struct profile *prof, uint32_t pid, const struct py_interp *pi,
			    uint64_t task_context, const char *label, struct sample_labels *l);

/*
 * The spans named since the last call (at most max of them, into spans),
 * and the generation they were named under (*gen): what BPF is told it
 * need not read again (py_spans_known, pyebpf.h).
 */
size_t request_proc__named(struct request_proc *r, uint64_t *spans, size_t max, uint32_t *gen); /* r NULL: 0 */

/*
 * A look at pid's variables of its own, on a timer (every
 * REQUEST_LOOK_EVERY_MS while request_proc__wants_look): true when *tell
 * holds what BPF must now read. Looks are wanted after a sample with
 * variables and before all is found, a bounded number of times.
 */
#define REQUEST_LOOK_EVERY_MS 1
bool request_proc__wants_look(const struct request_proc *r, const char *label); /* accepts NULL */
bool request_proc__look(struct request_proc *r, uint32_t pid, const struct py_interp *pi, const char *label,
			uint64_t now, struct pyebpf_py_ctx *tell);

#endif
