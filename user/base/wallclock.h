/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * --since / --until values: seconds into a recording ("90", "2.5"), or a
 * wall-clock time: "2026-11-23T14:00[:SS[.fff]]" (a space may replace the
 * T), "14:20[:SS[.fff]]" (a bare time), either in local time or in UTC with
 * a trailing "Z". A bare time is on the date of the other bound when that
 * one names a date, else today.
 */
#ifndef PYEBPF_WALLCLOCK_H
#define PYEBPF_WALLCLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct time_arg {
	bool given;
	bool wall;     /* a wall-clock time; else offset_ns into the recording */
	bool has_date; /* wall: a date was written */
	bool utc;      /* wall: "Z" */
	int year, month, day;
	int hour, minute, second; /* wall: the clock time as written */
	uint64_t ns;              /* wall: its fraction of a second */
	uint64_t offset_ns;       /* !wall */
	const char *why;          /* after -1: what is wrong, when more can be said than "not a time" */
};

/* 0, or -1 when `s` is neither form (no message: the caller names the option). */
int time_arg_parse(const char *s, struct time_arg *t);

/* The epoch time of a wall-clock t: its date, else other's (when other is a
 * wall-clock time with a date), else the date of now_ns (local, or UTC). */
int64_t time_arg_epoch(const struct time_arg *t, const struct time_arg *other, int64_t now_ns);

/* "2026-11-23 14:00:05.123 UTC"-like text of an epoch time, local time, for messages. */
void epoch_format(int64_t epoch_ns, char *buf, unsigned size);

#endif
