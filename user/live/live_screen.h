/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `pyebpf top`'s full screen: the one file that links ncurses. The terminal
 * is restored on every way out: live_screen__close(), exit() (atexit), and
 * a crash signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGQUIT,
 * SIGTRAP, SIGSYS: restored, then the signal raised again). SIGWINCH is
 * ncurses' own: it shows as LIVE_KEY_RESIZE. Lines drawn are text that
 * live_format.h already escaped.
 */
#ifndef PYEBPF_LIVE_SCREEN_H
#define PYEBPF_LIVE_SCREEN_H

#include <stdbool.h>

enum live_attr {
	LIVE_NORMAL = 0,
	LIVE_BOLD,
	LIVE_REVERSE, /* the column headers */
};

#define LIVE_KEY_NONE (-1)
#define LIVE_KEY_RESIZE (-2)

/* Full screen on stdout's terminal; 0, or -1 after one error line. */
int live_screen__open(void);
/* Back to the terminal as it was (idempotent). */
void live_screen__close(void);
/* Async-signal-safe: the terminal's modes and the normal screen back, now
 * (for a second Ctrl-C that leaves at once). */
void live_screen__restore_now(void);
/* A key pressed (its character or ncurses code), LIVE_KEY_RESIZE, or LIVE_KEY_NONE; never waits. */
int live_screen__key(void);
void live_screen__size(int *rows, int *cols);
/* One frame: begin, lines (clipped to the width), end. */
void live_screen__begin(void);
void live_screen__line(int y, const char *text, enum live_attr attr);
void live_screen__end(void);

#endif
