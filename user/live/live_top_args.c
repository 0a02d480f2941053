// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "live/live_top_args.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/filter_args.h"
#include "base/util.h"

static const char usage[] = "Usage: pyebpf top [-p PID[,PID...] | --comm NAME | -a | --container NAME] [OPTIONS]\n"
			    "A live table of where the targets spend their time, refreshed every second:\n"
			    "each function's self and total share over the last second and since the start.\n"
			    "\n"
			    "Target (default: every process on the machine):\n"
			    "  -a, --all               every process on the machine\n"
			    "  -p, --pid PID[,PID...]  these processes and every process they start\n"
			    "      --comm NAME         every process of this name, now and later (repeatable)\n"
			    "      --no-children       -p alone, not the processes it starts\n"
			    "      --cgroup PATH       only tasks in this cgroup v2 or below it (repeatable)\n"
			    "      --container NAME    only this container, by its name (docker's, podman's,\n"
			    "                          nerdctl's), its id or the id's start (4+ hex digits;\n"
			    "                          any runtime's; repeatable), followed across restarts\n"
			    "      --pod NS/NAME       every container of this Kubernetes pod on this node\n"
			    "                          (kubelet's /var/log/pods and cgroups; repeatable)\n"
			    "\n"
			    "Sampling:\n"
			    "  -F, --freq HZ           samples per second on each CPU (default 99, at most 10000)\n"
			    "      --mode MODE         cpu (default): time on a CPU; wall: every thread's time,\n"
			    "                          on a CPU or off it, split by why it waited; off-cpu;\n"
			    "                          memory: where resident memory grows (shares of the growth)\n"
			    "  -d, --duration SECONDS  stop after this long (default: q, Ctrl-C or the targets' exit)\n"
			    "\n"
			    "%s"
			    "\n"
			    "Output:\n"
			    "      --once              no screen: one table after -d (or Ctrl-C), then exit;\n"
			    "                          also what happens when stdout is not a terminal\n"
			    "  -n, --rows N            rows of that table (default 20)\n"
			    "      --by KEY            a table of a label's values (endpoint, span_name,\n"
			    "                          trace_id, --context-label's name) by their samples, with\n"
			    "                          their top functions: on the screen the last second's,\n"
			    "                          with --once the whole run's\n"
			    "      --context-label NAME  the context variable NAME as a label (record's)\n"
			    "      --no-requests       no labels of the request (record's)\n"
			    "  -v, --verbose           libbpf debug output and the BPF verifier log\n"
			    "  -h, --help              this help\n"
			    "\n"
			    "Keys: s sort by self, t by total, a the last second / since the start,\n"
			    "      l per line / per function, p next process, h next thread, c every\n"
			    "      process and thread, space pause, q quit.\n"
			    "\n"
			    "Examples:\n"
			    "  sudo pyebpf top -p 1234                      one process and its children\n"
			    "  sudo pyebpf top --comm gunicorn --mode wall  every gunicorn: CPU and waits\n"
			    "  sudo pyebpf top -a -F 999                    the whole machine at 999 Hz\n"
			    "  sudo pyebpf top -p 1234 --once -d 5 > t.txt  one table of 5 s, for a script\n";

static const struct option long_opts[] = {
	{ "all", no_argument, NULL, 'a' },
	{ "pid", required_argument, NULL, 'p' },
	{ "freq", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, 'd' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "cgroup", required_argument, NULL, 'g' },
	{ "container", required_argument, NULL, 'c' },
	{ "pod", required_argument, NULL, OPT_RECORD_POD },
	{ "mode", required_argument, NULL, 'm' },
	{ "no-children", no_argument, NULL, 'K' },
	{ "once", no_argument, NULL, 'O' },
	{ "rows", required_argument, NULL, 'n' },
	{ "by", required_argument, NULL, 'Z' },
	{ "context-label", required_argument, NULL, OPT_RECORD_CONTEXT_LABEL },
	{ "no-requests", no_argument, NULL, OPT_RECORD_NO_REQUESTS },
	{ "help", no_argument, NULL, 'h' },
	FILTER_LONG_OPTIONS,
	{ 0 },
};

static int parse(int argc, char **argv, struct live_top_opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	record_args__defaults(&o->rec);
	o->rows = LIVE_TOP_DEFAULT_ROWS;
	args_begin();
	while ((c = args_next(argc, argv, ":ap:F:d:n:vh", long_opts, &o->rec.filter, "top")) != ARGS_END) {
		uint64_t rows;
		int r;

		if (c == ARGS_FAIL)
			return -1;
		if (c == 'h') {
			{
				char *help = live_top_args__help();

				fputs(help, stdout);
				free(help);
			}
			return 1;
		}
		if (c == 'O') {
			o->once = true;
			continue;
		}
		if (c == 'Z') {
			o->by = optarg;
			continue;
		}
		if (c == 'n') {
			if (parse_u64(optarg, 1, 100000, &rows)) {
				err_msg("invalid count '%s' for --rows (1 or more)", optarg);
				return -1;
			}
			o->rows = rows;
			continue;
		}
		r = record_args__shared_option(&o->rec, c, optarg);
		if (r < 0)
			return -1;
		if (r > 0) { /* in the table, not handled: a bug */
			err_msg("top: unhandled option '%c'", c);
			return -1;
		}
	}
	if (optind < argc) {
		err_msg("top takes no command (start it, then: pyebpf top -p PID)");
		return -1;
	}
	if (record_args__check_targets(&o->rec))
		return -1;
	if (o->by && o->rec.no_requests) {
		err_msg("--by %s reads the request's labels, which --no-requests turns off", o->by);
		return -1;
	}
	if (o->rec.filter.timed) {
		err_msg("top shows the last second and everything since its start: --since and --until are for "
			"record and report");
		return -1;
	}
	return 0;
}

int live_top_args__parse(int argc, char **argv, struct live_top_opts *o)
{
	int ret = parse(argc, argv, o);

	if (ret)
		live_top_args__free(o);
	return ret;
}

void live_top_args__free(struct live_top_opts *o)
{
	record_args__free(&o->rec);
}

char *live_top_args__help(void)
{
	return xasprintf(usage, filter_args_usage);
}

const struct option *live_top_args__options(void)
{
	return long_opts;
}
