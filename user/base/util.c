// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static void (*die_cleanup)(void);

void set_die_cleanup(void (*fn)(void))
{
	die_cleanup = fn;
}

/* One write per line: lines from the pushers' threads never interleave. */
static void vmsg(const char *fmt, va_list ap)
{
	char line[2048];
	int n = snprintf(line, sizeof(line), "pyebpf: ");
	size_t len;

	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	len = strlen(line);
	line[len] = '\n';
	line[len + 1] = '\0';
	fputs(line, stderr);
}

void err_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	if (die_cleanup)
		die_cleanup();
	exit(1);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory");
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory");
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory");
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("out of memory");
	return s;
}

void xgrow(void *pp, size_t *cap, size_t need, size_t size)
{
	void **p = pp;
	size_t ncap = *cap ? *cap : 16;

	if (need <= *cap)
		return;
	while (ncap < need)
		ncap *= 2;
	*p = xrealloc(*p, ncap * size);
	*cap = ncap;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int stream_finish(FILE *out)
{
	if (fflush(out) || ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

int64_t epoch_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

double own_cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int parse_id_list(const char *arg, uint32_t **v, size_t *n, char *bad, size_t badlen)
{
	size_t cap = *n;
	const char *p = arg;

	bad[0] = '\0';
	if (!*arg)
		return -1;
	for (;;) {
		size_t len = strcspn(p, ",");
		char item[32];
		uint64_t id;

		snprintf(bad, badlen, "%.*s", (int)len, p);
		snprintf(item, sizeof(item), "%.*s", (int)len, p);
		if (!len || len >= sizeof(item) || parse_u64(item, 1, 0x3fffffff, &id))
			return -1;
		xgrow(v, &cap, *n + 1, sizeof(**v));
		(*v)[(*n)++] = (uint32_t)id;
		if (!p[len])
			break;
		p += len + 1;
	}
	bad[0] = '\0';
	return 0;
}

const char *human_bytes(uint64_t bytes, char *out, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	/* Whole units as they are (512 KiB); others to 3 significant digits. */
	if (v == (double)(uint64_t)v || u == 0)
		snprintf(out, size, "%llu %s", (unsigned long long)v, units[u]);
	else
		snprintf(out, size, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, units[u]);
	return out;
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

bool str_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

size_t utf8_valid_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : (*p & 0xf8) == 0xf0 ? 4 : 0;

	for (size_t i = 1; len && i < len; i++) /* stops at a NUL: 0 is no continuation */
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* No overlong forms, surrogates or code points past U+10FFFF. */
	if (len == 2 && *p < 0xc2)
		return 0;
	if (len == 3 && ((*p == 0xe0 && p[1] < 0xa0) || (*p == 0xed && p[1] >= 0xa0)))
		return 0;
	if (len == 4 && ((*p == 0xf0 && p[1] < 0x90) || (*p == 0xf4 && p[1] >= 0x90) || *p > 0xf4))
		return 0;
	return len;
}

char *utf8_clean(const char *s, char *out, size_t size)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	while (*p && o + 1 < size) {
		size_t len = utf8_valid_len((const char *)p);
		bool ok = len > 0 && o + len < size;

		if (ok && len == 1 && (*p < 0x20 || *p == 0x7f))
			ok = false;
		if (!ok) {
			out[o++] = '?';
			p++;
			continue;
		}
		/* Valid, but not to be shown: C1 controls (8-bit CSI, OSC) and the
		 * bidirectional overrides and isolates (U+202A-202E, U+2066-2069). */
		if ((len == 2 && *p == 0xc2 && p[1] < 0xa0) || (len == 3 && *p == 0xe2 &&
								((p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae) ||
								 (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)))) {
			out[o++] = '?';
			p += len;
			continue;
		}
		memcpy(out + o, p, len);
		o += len;
		p += len;
	}
	out[o] = 0;
	return out;
}
