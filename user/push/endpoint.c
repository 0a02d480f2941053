// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "push/endpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"

/* Printable, no space: what a URL may hold here (no percent-decoding is done). */
static bool url_chars(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

/* "host", "host:port" or "[v6]:port"; 0, or -1 with why. */
static int check_authority(const char *a, size_t len, char *why, size_t whylen)
{
	const char *port = NULL, *end = a + len;

	if (!len) {
		snprintf(why, whylen, "no host");
		return -1;
	}
	if (memchr(a, '@', len)) {
		snprintf(why, whylen,
			 "credentials in the URL are refused (they would show in ps and logs): use "
			 "--basic-auth-file or --bearer-token-file");
		return -1;
	}
	if (a[0] == '[') {
		const char *close = memchr(a, ']', len);

		if (!close || close == a + 1) {
			snprintf(why, whylen, "an IPv6 host needs its closing ']'");
			return -1;
		}
		if (close + 1 < end) {
			if (close[1] != ':') {
				snprintf(why, whylen, "text after the IPv6 host");
				return -1;
			}
			port = close + 2;
		}
	} else {
		const char *colon = memchr(a, ':', len);

		if (colon == a) {
			snprintf(why, whylen, "no host");
			return -1;
		}
		if (colon)
			port = colon + 1;
	}
	if (port) {
		char buf[8];
		uint64_t v;

		if (end - port < 1 || end - port > 5) {
			snprintf(why, whylen, "invalid port");
			return -1;
		}
		snprintf(buf, sizeof(buf), "%.*s", (int)(end - port), port);
		if (parse_u64(buf, 1, 65535, &v)) {
			snprintf(why, whylen, "invalid port '%s' (1-65535)", buf);
			return -1;
		}
	}
	return 0;
}

int push_endpoint__parse(struct push_endpoint *e, enum push_kind kind, const char *arg, char *why, size_t whylen)
{
	const char *rest, *slash, *q;
	size_t blen;

	memset(e, 0, sizeof(*e));
	e->kind = kind;
	if (!url_chars(arg)) {
		snprintf(why, whylen, "a URL holds no spaces or control characters");
		return -1;
	}
	if (!strncmp(arg, "http://", 7)) {
		rest = arg + 7;
	} else if (!strncmp(arg, "https://", 8)) {
		rest = arg + 8;
		e->tls = true;
	} else {
		const char *colon = strstr(arg, "://");

		if (colon)
			snprintf(why, whylen, "unknown scheme '%.*s' (http or https)", (int)(colon - arg), arg);
		else
			snprintf(why, whylen, "not a URL (expected http://HOST[:PORT][/PATH] or https://...)");
		return -1;
	}
	slash = strchr(rest, '/');
	if (!slash)
		slash = rest + strlen(rest);
	if (check_authority(rest, (size_t)(slash - rest), why, whylen))
		return -1;
	if ((q = strpbrk(slash, "?#"))) {
		snprintf(why, whylen, "a query or fragment ('%c...') has no meaning here", *q);
		return -1;
	}
	/* The base without trailing slashes: the protocol's path follows it. */
	blen = strlen(arg);
	while (blen > (size_t)(slash - arg) && arg[blen - 1] == '/')
		blen--;
	e->base = xmalloc(blen + 1);
	memcpy(e->base, arg, blen);
	e->base[blen] = 0;
	if (kind == PUSH_OTLP && str_ends_with(e->base, OTLP_PROFILES_PATH))
		e->url = xstrdup(e->base);
	else
		e->url = xasprintf("%s%s", e->base, kind == PUSH_OTLP ? OTLP_PROFILES_PATH : PYROSCOPE_PUSH_PATH);
	return 0;
}

void push_endpoint__free(struct push_endpoint *e)
{
	free(e->url);
	free(e->base);
	e->url = e->base = NULL;
}

void push_endpoint__key(const struct push_endpoint *e, const char *tenant, char key[17])
{
	char *s = xasprintf("%d|%s|%s", (int)e->kind, e->url, tenant ? tenant : "");

	snprintf(key, 17, "%016llx", (unsigned long long)hash_bytes(s, strlen(s)));
	free(s);
}
