// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "base/wallclock.h"

#include <ctype.h>
#include <stdbool.h>
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
	t->hour = h;
	t->minute = m;
	t->second = sec;
	t->ns = frac;
	return 0;
}

/* Plain decimal: digits, optionally a point and digits. strtod alone took
 * "0x10" (16), "1e3" and "inf". */
static bool decimal(const char *s)
{
	size_t int_digits = strspn(s, "0123456789");

	if (!int_digits)
		return false;
	s += int_digits;
	if (*s == '.')
		s += 1 + strspn(s + 1, "0123456789");
	return !*s;
}

static int days_in_month(int year, int month)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return month == 2 && leap ? 29 : days[month - 1];
}

int time_arg_parse(const char *s, struct time_arg *t)
{
	memset(t, 0, sizeof(*t));
	t->given = true;
	/* Seconds into the recording: a plain number. */
	if (isdigit((unsigned char)*s) && !strpbrk(s, ":-")) {
		char *end;
		double v;

		if (!decimal(s)) {
			t->why = "seconds are written in decimal, as 90 or 2.5";
			return -1;
		}
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
		if (t->day > days_in_month(t->year, t->month)) { /* mktime would make 02-30 March 2nd */
			t->why = "there is no such day";
			return -1;
		}
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
	}
	/* The clock time itself goes to mktime, not midnight plus seconds: on
	 * the day of a daylight-saving change those differ by an hour. */
	tm.tm_hour = t->hour;
	tm.tm_min = t->minute;
	tm.tm_sec = t->second;
	tm.tm_isdst = -1;
	secs = t->utc ? timegm(&tm) : mktime(&tm);
	return (int64_t)secs * 1000000000LL + (int64_t)t->ns;
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
