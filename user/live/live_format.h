/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `pyebpf top`'s lines of text: the status header, the view line, the
 * column headers and one line per row, the same for the screen and for the
 * plain table of --once. Every name from a target is escaped here
 * (write/escape.h) before it can reach a terminal. Pure: no ncurses.
 */
#ifndef PYEBPF_LIVE_FORMAT_H
#define PYEBPF_LIVE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "live/live_table.h"

struct live_layout {
	bool now;                  /* the last interval's columns (the screen; --once has only since-start ones) */
	bool wall;                 /* the on-CPU / off-CPU split columns */
	uint32_t reasons;          /* off-CPU reasons with a column: bit (1 << enum offcpu_reason) */
	bool split_all;            /* the split of the since-start numbers, else of the last interval's */
	size_t func_width;         /* the FUNCTION column, in characters */
	size_t where_width;        /* FILE:LINE at most this wide (its end kept); 0: whole */
	double interval_s;         /* the last interval's length */
	uint64_t mem_sample_bytes; /* --mode memory: a sample stands for this many bytes of growth; 0: count samples */
};

/* What the status line says. */
struct live_status {
	const char *targets; /* "-p 1234", "--comm gunicorn", "all processes": escaped here */
	const char *mode;    /* cpu, wall, off-cpu */
	uint64_t freq;
	int ncpus;
	double elapsed_s;
	uint64_t samples, samples_now; /* since the start; in the last interval */
	double interval_s;
	uint64_t lost;
	double own_cpu_pct; /* pyebpf's CPU over the last interval, % of one core */
	double bpf_pct;     /* BPF's time over the last interval, % of the CPUs sampled; < 0: unknown */
	bool paused;
	const char *note;          /* a container gone or back, escaped by its maker; NULL or "": none */
	uint64_t mem_sample_bytes; /* --mode memory: samples are shown as the bytes that grew */
};

/* The widest FUNCTION of rows (as escaped), at least 8 and at most max. */
size_t live_func_width(const struct live_row *rows, size_t n, size_t max);
void live_format_status(const struct live_status *s, char *buf, size_t size);
/* Sort, rows, filters; and the keys. */
void live_format_view(const struct live_table *t, const struct live_view *v, char *buf, size_t size);
extern const char live_keys_help[];
/* The column groups ("last 1 s", "since start") and the column names. */
void live_format_groups(const struct live_layout *l, char *buf, size_t size);
void live_format_header(const struct live_layout *l, char *buf, size_t size);
void live_format_row(const struct live_layout *l, const struct live_row *r, const struct live_totals *t, char *buf,
		     size_t size);

/* Characters (UTF-8 code points) in s. */
size_t live_width(const char *s);
/* Cut s after at most cols characters, in place. */
void live_clip(char *s, size_t cols);
/* At most cols characters of s, its end kept: "...tail" (cols >= 4). */
void live_clip_left(char *s, size_t cols);

#endif
