// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `pyebpf push DIR`: backfill. The interval files of a continuous directory
 * that a backend lacks (a host that was offline, an archive copied from
 * elsewhere) sent to it, oldest first, through the same senders and
 * journals as `record --push`: running it twice sends nothing twice.
 */
#include "push/push_main.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "push/push_args.h"
#include "push/push_main_args.h"
#include "push/sender.h"
#include "base/util.h"
#include "base/wallclock.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* The directory: one we can read, holding interval files. 0, or -1 after one line. */
static int check_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		err_msg("'%s' is not a directory (a --continuous directory of interval files)", dir);
		return -1;
	}
	return 0;
}

int push_main(int argc, char **argv)
{
	struct push_verb v = { 0 };
	struct push_config pc;
	struct push_stats st;
	struct pusher *p;
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t sent_before = 0;
	double idle_since;
	int r = push_main_args__parse(argc, argv, &v), ret = 0;

	if (r) {
		push_args__free(&v.push);
		return r > 0 ? 0 : 2;
	}
	if (check_dir(v.dir)) {
		push_args__free(&v.push);
		return 2;
	}
	pc = (struct push_config){
		.dir = v.dir,
		.endpoints = v.push.endpoints,
		.nendpoints = v.push.nendpoints,
		.series = { .service_name = v.push.service_name, .extra = v.push.labels, .nextra = v.push.nlabels },
		.auth = v.push.auth,
		.connect_timeout_s = PUSH_DEFAULT_CONNECT_TIMEOUT,
		.timeout_s = v.push.timeout_s,
		.since_ns = v.since.given ? time_arg_epoch(&v.since, &v.until, epoch_now_ns()) : INT64_MIN,
		.until_ns = v.until.given ? time_arg_epoch(&v.until, &v.since, epoch_now_ns()) : INT64_MAX,
		.log = true,
	};
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	p = pusher__start(&pc);
	if (!p) {
		push_args__free(&v.push);
		return 1;
	}
	/* Drain: done when nothing is left; given up when nothing moved for --give-up. */
	idle_since = (double)now_ns() / 1e9;
	for (;;) {
		double now = (double)now_ns() / 1e9;

		pusher__stats(p, &st);
		if (!st.unsent || interrupted)
			break;
		if (st.sent + st.rejected != sent_before) {
			sent_before = st.sent + st.rejected;
			idle_since = now;
		} else if (now - idle_since >= v.give_up_s) {
			break;
		}
		usleep(100 * 1000);
	}
	pusher__finish(p, interrupted ? 0 : 1);
	pusher__stats(p, &st);
	fprintf(stderr, "pyebpf: pushed %llu intervals (%llu profiles, %.1f KB)", (unsigned long long)st.sent,
		(unsigned long long)st.profiles, (double)st.bytes / 1024);
	if (st.rejected)
		fprintf(stderr, "; %llu refused for good (kept)", (unsigned long long)st.rejected);
	if (st.unsent)
		fprintf(stderr, "; %zu not sent (kept: run again to send them)", st.unsent);
	fputc('\n', stderr);
	if (st.unsent || st.rejected)
		ret = 1;
	pusher__free(p);
	push_args__free(&v.push);
	return ret;
}
