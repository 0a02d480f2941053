// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "push/otlp_req.h"

#include <errno.h>

int otlp_request(const struct push_series *s, size_t n, const char *name, uint8_t **out, size_t *len, size_t *nprofiles)
{
	(void)s, (void)n, (void)name, (void)out, (void)len, (void)nprofiles;
	errno = ENOTSUP;
	return -1;
}

void otlp_partial_success_note(const char *backend, const char *name, const uint8_t *body, size_t len)
{
	(void)backend, (void)name, (void)body, (void)len;
}
