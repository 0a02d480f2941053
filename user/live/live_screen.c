// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "live/live_screen.h"

#include <curses.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>

#include "live/live_format.h"
#include "base/util.h"

static bool open_now;     /* between open and close */
static bool have_termios; /* saved_termios holds the terminal's modes from before */
static struct termios saved_termios;
/* What puts the terminal back, written by the crash handler with write(2):
 * keypad off, normal attributes, cursor shown, the normal screen. */
static char restore_seq[256];
static size_t restore_len;

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGQUIT, SIGTRAP, SIGSYS };

static void append_cap(const char *name)
{
	char *s = tigetstr(name);
	size_t len;

	if (!s || s == (char *)-1)
		return;
	len = strlen(s);
	if (restore_len + len < sizeof(restore_seq)) {
		memcpy(restore_seq + restore_len, s, len);
		restore_len += len;
	}
}

void live_screen__restore_now(void)
{
	if (!open_now)
		return;
	if (restore_len) {
		ssize_t w = write(STDOUT_FILENO, restore_seq, restore_len);

		(void)w;
	}
	if (have_termios)
		tcsetattr(STDOUT_FILENO, TCSAFLUSH, &saved_termios);
}

static void on_crash(int sig)
{
	live_screen__restore_now();
	open_now = false;
	/* SA_RESETHAND put the default action back: the signal does what it would have. */
	raise(sig);
}

void live_screen__close(void)
{
	if (!open_now)
		return;
	endwin();
	if (have_termios)
		tcsetattr(STDOUT_FILENO, TCSAFLUSH, &saved_termios);
	open_now = false;
}

static void close_at_exit(void)
{
	live_screen__close();
}

int live_screen__open(void)
{
	static bool registered;
	struct sigaction sa = { .sa_handler = on_crash, .sa_flags = (int)SA_RESETHAND };

	if (!isatty(STDOUT_FILENO)) {
		err_msg("top: stdout is not a terminal");
		return -1;
	}
	have_termios = !tcgetattr(STDOUT_FILENO, &saved_termios);
	setlocale(LC_CTYPE, ""); /* UTF-8 names drawn as themselves */
	if (!newterm(NULL, stdout, stdin)) {
		err_msg("top: cannot use the terminal (TERM=%s)", getenv("TERM") ? getenv("TERM") : "");
		return -1;
	}
	restore_len = 0;
	append_cap("rmkx");
	append_cap("sgr0");
	append_cap("cnorm");
	append_cap("rmcup");
	open_now = true;
	if (!registered) {
		atexit(close_at_exit);
		registered = true;
	}
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(crash_signals); i++)
		sigaction(crash_signals[i], &sa, NULL);
	cbreak(); /* keys at once; Ctrl-C still a SIGINT */
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);
	return 0;
}

int live_screen__key(void)
{
	int c = getch();

	if (c == ERR)
		return LIVE_KEY_NONE;
	if (c == KEY_RESIZE)
		return LIVE_KEY_RESIZE;
	return c;
}

void live_screen__size(int *rows, int *cols)
{
	getmaxyx(stdscr, *rows, *cols);
}

void live_screen__begin(void)
{
	erase();
}

void live_screen__line(int y, const char *text, enum live_attr attr)
{
	static char clipped[4096];
	int rows, cols;

	getmaxyx(stdscr, rows, cols);
	if (y < 0 || y >= rows || cols <= 0)
		return;
	snprintf(clipped, sizeof(clipped), "%s", text);
	/* The last cell of the last line would scroll: one short there. */
	live_clip(clipped, (size_t)(y == rows - 1 ? cols - 1 : cols));
	if (attr == LIVE_BOLD)
		attron(A_BOLD);
	else if (attr == LIVE_REVERSE)
		attron(A_REVERSE);
	mvaddstr(y, 0, clipped);
	if (attr == LIVE_REVERSE) /* the bar across the whole width */
		for (int x = (int)live_width(clipped); x < cols - (y == rows - 1); x++)
			addch(' ');
	attrset(A_NORMAL);
}

void live_screen__end(void)
{
	refresh();
}
