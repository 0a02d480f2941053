// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/version.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A decimal number of 1-3 digits at s[*i ..] below limit, not followed by a digit. */
static bool number(const char *s, size_t end, size_t *i, unsigned limit, unsigned *v)
{
	size_t start = *i;

	*v = 0;
	while (*i < end && digit(s[*i]) && *i - start < 3)
		*v = *v * 10 + (unsigned)(s[(*i)++] - '0');
	return *i > start && !digit(s[*i]) && *v < limit;
}

/* The hex of the version that is all of s[i .. end) (s[end] is its NUL), 0 when it is none. */
static uint32_t parse(const char *s, size_t i, size_t end)
{
	unsigned v[3], level = 0xf, serial = 0;

	for (int k = 0; k < 3; k++)
		if ((k && s[i++] != '.') || !number(s, end, &i, 256, &v[k]))
			return 0;
	if (s[i] == 'r' && s[i + 1] == 'c') {
		level = 0xc;
		i += 2;
	} else if (s[i] == 'a' || s[i] == 'b') {
		level = s[i++] == 'a' ? 0xa : 0xb;
	}
	if (level != 0xf && !number(s, end, &i, 16, &serial))
		return 0;
	if (s[i] == '+') /* a build between releases */
		i++;
	return i == end ? (uint32_t)(v[0] << 24 | v[1] << 16 | v[2] << 8 | level << 4 | serial) : 0;
}

uint32_t py_version_in_strings(const char *buf, size_t len, int major, int minor)
{
	uint32_t found = 0;
	char want[16];
	int wl = snprintf(want, sizeof(want), "%d.%d.", major, minor);

	if (major < 0 || minor < 0 || wl <= 0 || (size_t)wl >= sizeof(want))
		return 0;
	for (const char *p = buf; (p = memmem(p, len - (size_t)(p - buf), want, (size_t)wl)); p++) {
		size_t at = (size_t)(p - buf);
		const char *nul = memchr(p, '\0', len - at);
		uint32_t hex;

		if (!nul || (at && (digit(p[-1]) || p[-1] == '.')))
			continue;
		hex = parse(buf, at, (size_t)(nul - buf));
		if (!hex)
			continue;
		if (found && found != hex)
			return 0; /* two versions: neither is trusted */
		found = hex;
	}
	return found;
}

void py_version_format(uint32_t hex, char *out, size_t size)
{
	unsigned level = (hex >> 4) & 0xf;
	const char *tag = level == 0xa ? "a" : level == 0xb ? "b" : level == 0xc ? "rc" : "";

	if (*tag)
		snprintf(out, size, "%u.%u.%u%s%u", hex >> 24, (hex >> 16) & 0xff, (hex >> 8) & 0xff, tag, hex & 0xf);
	else
		snprintf(out, size, "%u.%u.%u", hex >> 24, (hex >> 16) & 0xff, (hex >> 8) & 0xff);
}
