/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * An interval as one OTLP ExportProfilesServiceRequest (otlp.proto: the
 * opentelemetry-proto release named there), gzip'd, and the answer's
 * partial success read back (one line on `out` when profiles were
 * dropped). No network here.
 */
#ifndef PYEBPF_PUSH_OTLP_REQ_H
#define PYEBPF_PUSH_OTLP_REQ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "push/series.h"

/* The gzip'd request's bytes (malloc'd) for the series of interval file
 * `name`; *nprofiles says how many profiles it holds. 0, or -1 with errno set. */
int otlp_request(const struct push_series *s, size_t n, const char *name, uint8_t **out, size_t *len,
		 size_t *nprofiles);

/* A 2xx answer's ExportProfilesServiceResponse: when it says some profiles
 * were rejected (partial success), one line naming the backend and file. */
void otlp_partial_success_note(FILE *out, const char *backend, const char *name, const uint8_t *body, size_t len);

#endif
