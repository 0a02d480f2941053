// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "push/push_main_args.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/rotation.h"
#include "base/util.h"

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

int push_main_args__parse(int argc, char **argv, struct push_verb *v)
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

char *push_main_args__help(void)
{
	return xasprintf(usage, push_args_usage);
}

const struct option *push_main_args__options(void)
{
	return long_opts;
}
