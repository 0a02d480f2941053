// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "serve/serve_host.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* "NAME", "NAME:PORT", "[V6]" or "[V6]:PORT": the name part's length and the port. */
static bool split(const char *host, size_t *namelen, unsigned *port)
{
	const char *end, *colon;

	if (host[0] == '[') {
		end = strchr(host, ']');
		if (!end)
			return false;
		end++;
		colon = *end ? end : NULL;
		if (colon && *colon != ':')
			return false;
	} else {
		colon = strchr(host, ':');
		end = colon ? colon : host + strlen(host);
		if (colon && strchr(colon + 1, ':'))
			return false;
	}
	*namelen = (size_t)(end - host);
	*port = 80;
	if (colon) {
		const char *p = colon + 1;
		unsigned long v = 0;

		if (!*p || strlen(p) > 5)
			return false;
		for (; *p; p++) {
			if (*p < '0' || *p > '9')
				return false;
			v = v * 10 + (unsigned long)(*p - '0');
		}
		if (!v || v > 65535)
			return false;
		*port = (unsigned)v;
	}
	return *namelen > 0;
}

static bool is(const char *name, size_t len, const char *want)
{
	return want && strlen(want) == len && !strncasecmp(name, want, len);
}

static bool literal(const char *name, size_t len)
{
	char buf[64];
	unsigned char addr[16];

	if (len < 3 || len >= sizeof(buf))
		return false;
	if (name[0] == '[') {
		if (name[len - 1] != ']')
			return false;
		snprintf(buf, sizeof(buf), "%.*s", (int)len - 2, name + 1);
		return inet_pton(AF_INET6, buf, addr) == 1;
	}
	snprintf(buf, sizeof(buf), "%.*s", (int)len, name);
	return inet_pton(AF_INET, buf, addr) == 1;
}

bool serve_host__allowed(const struct serve_hosts *h, const char *host)
{
	size_t len;
	unsigned port;

	if (!host || !split(host, &len, &port) || port != h->port)
		return false;
	if (is(host, len, "localhost") || is(host, len, "127.0.0.1") || is(host, len, "[::1]") ||
	    is(host, len, h->listen))
		return true;
	if (h->any && literal(host, len))
		return true;
	for (size_t i = 0; i < h->nnames; i++)
		if (is(host, len, h->names[i]))
			return true;
	return false;
}
