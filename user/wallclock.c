// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "wallclock.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Exactly `n` digits at *s, as a number; advances *s. */
static int digits(const char **s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*s)[i]))
			return -1;
		v = v * 10 + ((*s)[i] - '0');
	}
	*s += n;
	*out = v;
	return 0;
}

/* "HH:MM[:SS[.fffffffff]][Z]" to the end of the string. */
static int parse_clock(const char *s, struct time_arg *t)
{
	int h, m, sec = 0;
	uint64_t frac = 0, scale = 100000000;

	if (digits(&s, 2, &h) || *s++ != ':' || digits(&s, 2, &m) || h > 23 || m > 59)
		return -1;
	if (*s == ':') {
		s++;
		if (digits(&s, 2, &sec) || sec > 60)
			return -1;
		if (*s == '.') {
			s++;
			if (!isdigit((unsigned char)*s))
				return -1;
			for (; isdigit((unsigned char)*s); s++, scale /= 10)
				if (scale)
					frac += (uint64_t)(*s - '0') * scale;
		}
	}
	if (*s == 'Z' || *s == 'z') {
		t->utc = true;
		s++;
	}
	if (*s)
		return -1;
	t->ns_of_day = ((uint64_t)h * 3600 + (uint64_t)m * 60 + (uint64_t)sec) * 1000000000ULL + frac;
	return 0;
}

int time_arg_parse(const char *s, struct time_arg *t)
{
	memset(t, 0, sizeof(*t));
	t->given = true;
	/* Seconds into the recording: a plain number. */
	if (isdigit((unsigned char)*s) && !strpbrk(s, ":-")) {
		char *end;
		double v;

		errno = 0;
		v = strtod(s, &end);
		if (errno || end == s || *end || !(v >= 0) || v > 1e9)
			return -1;
		t->offset_ns = (uint64_t)(v * 1e9);
		return 0;
	}
	t->wall = true;
	if (strlen(s) >= 10 && s[4] == '-') {
		const char *p = s;

		if (digits(&p, 4, &t->year) || *p++ != '-' || digits(&p, 2, &t->month) || *p++ != '-' ||
		    digits(&p, 2, &t->day) || t->year < 1970 || t->year > 2200 || t->month < 1 || t->month > 12 ||
		    t->day < 1 || t->day > 31)
			return -1;
		t->has_date = true;
		if (!*p) /* a date alone: its midnight */
			return 0;
		if (*p != 'T' && *p != 't' && *p != ' ')
			return -1;
		return parse_clock(p + 1, t);
	}
	return parse_clock(s, t);
}

int64_t time_arg_epoch(const struct time_arg *t, const struct time_arg *other, int64_t now_ns)
{
	struct tm tm = { 0 };
	time_t secs;

	if (t->has_date) {
		tm.tm_year = t->year - 1900;
		tm.tm_mon = t->month - 1;
		tm.tm_mday = t->day;
	} else if (other && other->given && other->wall && other->has_date) {
		tm.tm_year = other->year - 1900;
		tm.tm_mon = other->month - 1;
		tm.tm_mday = other->day;
	} else {
		time_t now = (time_t)(now_ns / 1000000000);

		if (t->utc)
			gmtime_r(&now, &tm);
		else
			localtime_r(&now, &tm);
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	}
	tm.tm_isdst = -1;
	secs = t->utc ? timegm(&tm) : mktime(&tm);
	return (int64_t)secs * 1000000000LL + (int64_t)t->ns_of_day;
}

void epoch_format(int64_t epoch_ns, char *buf, unsigned size)
{
	time_t secs = (time_t)(epoch_ns / 1000000000);
	struct tm tm;
	char day[32];

	localtime_r(&secs, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%03d", day, (int)(epoch_ns / 1000000 % 1000));
}
