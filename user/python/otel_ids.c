// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/otel_ids.h"

#include <stdio.h>
#include <string.h>

bool otel_ids_from_digits(const uint32_t *digits, unsigned n, uint64_t *hi, uint64_t *lo)
{
	unsigned __int128 v = 0;

	if (n > PYEBPF_TRACE_DIGITS)
		return false;
	for (unsigned i = n; i-- > 0;) {
		if (digits[i] >> 30 || (i == 4 && digits[i] >> 8)) /* 30-bit digits; 5 x 30 > 128 */
			return false;
		v = v << 30 | digits[i];
	}
	*hi = (uint64_t)(v >> 64);
	*lo = (uint64_t)v;
	return true;
}

void otel_trace_hex(uint64_t hi, uint64_t lo, char out[33])
{
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)hi, (unsigned long long)lo);
}

void otel_span_hex(uint64_t id, char out[17])
{
	snprintf(out, 17, "%016llx", (unsigned long long)id);
}
