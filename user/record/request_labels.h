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

#endif
