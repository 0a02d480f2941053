// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `pyebpf push DIR`: backfill. The interval files of a continuous directory
 * that a backend lacks (a host that was offline, an archive copied from
 * elsewhere) sent to it, oldest first, through the same senders and
 * journals as `record --push`: running it twice sends nothing twice.
 */
#include "push/push_main.h"

#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "push/push_args.h"
#include "push/sender.h"
#include "archive/rotation.h"
#include "base/util.h"
#include "base/wallclock.h"

#define PUSH_DEFAULT_GIVE_UP 300.0 /* seconds of a backend not taking what it lacks */

static const char usage[] =
	"Usage: pyebpf push DIR (--push URL | --otlp URL)... [OPTIONS]\n"
	"Send the interval files of a continuous directory that a backend has not taken\n"
	"yet, oldest first (a host that was offline, an archive copied from elsewhere).\n"
	"What was sent is noted in DIR: running it again sends nothing twice.\n"
	"\n"
	"%s"
	"\n"
	"Which files:\n"
	"      --since TIME        intervals that start at or after TIME\n"
	"      --until TIME        intervals that start before TIME\n"
	"                          (2026-11-23T14:00[:SS], or 14:20 today; local time, or UTC with Z)\n"
	"      --give-up TIME      stop once a backend has taken nothing for this long (default 5m);\n"
	"                          what is left stays unsent, for the next run\n"
	"  -h, --help              this help\n"
	"\n"
	"Examples:\n"
	"  sudo pyebpf push /var/lib/pyebpf --push http://pyroscope:4040\n"
	"  pyebpf push ./copied --otlp http://otelcol:4318 --label host=web-7 --since 2026-11-23T14:00\n";

enum {
	OPT_SINCE = 1200,
	OPT_UNTIL,
	OPT_GIVE_UP
};

static const struct option long_opts[] = {
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "until", required_argument, NULL, OPT_UNTIL },
	{ "give-up", required_argument, NULL, OPT_GIVE_UP },
	{ "help", no_argument, NULL, 'h' },
	PUSH_LONG_OPTIONS,
	{ 0 },
};

struct push_verb {
	struct push_opts push;
	const char *dir;
	struct time_arg since, until;
	double give_up_s;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int parse(int argc, char **argv, struct push_verb *v)
{
	int c;

	push_args__init(&v->push);
	v->give_up_s = PUSH_DEFAULT_GIVE_UP;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			printf(usage, push_args_usage);
			return 1;
		case OPT_SINCE:
		case OPT_UNTIL: {
			struct time_arg *t = c == OPT_SINCE ? &v->since : &v->until;

			if (time_arg_parse(optarg, t) || !t->wall) {
				err_msg("invalid time '%s' for %s (a wall-clock time: 2026-11-23T14:00, 14:20, ...Z "
					"for UTC)",
					optarg, c == OPT_SINCE ? "--since" : "--until");
				return -1;
			}
			t->given = true;
			break;
		}
		case OPT_GIVE_UP:
			if (parse_interval(optarg, &v->give_up_s)) {
				err_msg("invalid time '%s' for --give-up (e.g. 30s, 5m, 1h)", optarg);
				return -1;
			}
			break;
		case ':':
			err_msg("option '%s' needs a value (see 'pyebpf push --help')", argv[optind - 1]);
			return -1;
		case '?':
			err_msg("unknown option '%s' (see 'pyebpf push --help')", argv[optind - 1]);
			return -1;
		default:
			if (push_args__option(&v->push, c, optarg) < 0)
				return -1;
		}
	}
	if (optind != argc - 1) {
		err_msg(optind < argc ? "one directory to push, not %d"
				      : "which directory? (pyebpf push DIR --push URL)",
			argc - optind);
		return -1;
	}
	v->dir = argv[optind];
	if (!v->push.nendpoints) {
		err_msg("where to? (--push URL for Pyroscope, --otlp URL for an OpenTelemetry collector)");
		return -1;
	}
	return push_args__check(&v->push);
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
	int r = parse(argc, argv, &v), ret = 0;

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
