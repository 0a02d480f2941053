/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Small helpers every part uses: allocation that cannot fail, errors, time. */
#ifndef PYEBPF_UTIL_H
#define PYEBPF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Allocation failures end the program with one line (see die()). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* A printf into a new string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Grow *p (of *cap elements of size `size`) to hold at least `need` elements. */
void xgrow(void *p, size_t *cap, size_t need, size_t size);

/* Print "pyebpf: <message>" on stderr. */
void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* err_msg, run the registered cleanup, exit(1). */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Run before die() exits: removes half-written output. */
void set_die_cleanup(void (*fn)(void));

uint64_t now_ns(void);        /* CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns() */
uint64_t thread_cpu_ns(void); /* CLOCK_THREAD_CPUTIME_ID: this thread's CPU time */
/* The end of every writer: flush `out` and say whether anything written to it
 * failed. 0, or -1 with errno set (EIO when the stream kept no reason). */
int stream_finish(FILE *out);
int64_t epoch_now_ns(void);   /* CLOCK_REALTIME */
double own_cpu_seconds(void); /* user + system CPU of this process so far */

/* Parse a whole decimal number in [min, max]; -1 when it is not one. */
/*
 * "ID[,ID...]" (each 1 .. 2^30-1) appended to *v (*n of them). 0; or -1 with
 * the first bad item in bad[] (empty when the list has no item at all);
 * an empty item ("1,,2") is bad.
 */
int parse_id_list(const char *arg, uint32_t **v, size_t *n, char *bad, size_t badlen);
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* A size for people: "512 KiB", "8.0 MiB", "1.25 GiB", "300 B"; returns out. */
const char *human_bytes(uint64_t bytes, char *out, size_t size);

/* Does s end with suffix? */
bool str_ends_with(const char *s, const char *suffix);

/* The length (1-4) of the well-formed UTF-8 character at s, or 0: a stray
 * continuation byte, an overlong form, a surrogate, past U+10FFFF, cut. */
size_t utf8_valid_len(const char *s);
/* s as valid UTF-8 with no control characters, C0 or C1, and no
 * bidirectional overrides (each bad byte or character becomes '?'),
 * at most size-1 bytes, never half a character: text a target or a server
 * gave, made safe for a label value or a terminal line. Returns out. */
char *utf8_clean(const char *s, char *out, size_t size);

/* The value of one hexadecimal digit (either case), or -1. */
static inline int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
