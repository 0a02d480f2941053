/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * An OpenTelemetry span's ids as BPF copies them (bpf/context.bpf.h): the
 * SpanContext's ints, 30-bit digits each, made into the 128-bit trace id
 * and 64-bit span id and their hex, as OpenTelemetry writes them. Pure.
 */
#ifndef PYEBPF_PY_OTEL_IDS_H
#define PYEBPF_PY_OTEL_IDS_H

#include <stdbool.h>
#include <stdint.h>

#include "pyebpf.h"

struct otel_ids {
	uint64_t trace_hi, trace_lo, span;
};

/* An id from n 30-bit digits (least significant first); false when they
 * cannot make one (more than 128 bits, a digit over 30 bits). */
bool otel_ids_from_digits(const uint32_t *digits, unsigned n, uint64_t *hi, uint64_t *lo);
/* "0123…" of an id: 32 hex digits of a trace id, 16 of a span id. */
void otel_trace_hex(uint64_t hi, uint64_t lo, char out[33]);
void otel_span_hex(uint64_t id, char out[17]);

#endif
