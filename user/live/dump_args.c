// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "live/dump_args.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/filter_args.h"
#include "base/util.h"

static const char usage[] = "Usage: pyebpf dump -p PID|--container ID|NAME [--native] [--locals] [--json]\n"
			    "                  [FILTERS]\n"
			    "Every thread of a process at one instant: its name and tid, whether it holds\n"
			    "the GIL, what it is doing (running, sleeping, waiting: lock, io, GIL) and, for a\n"
			    "thread that waits, the kernel stack where it waits; then its Python stack,\n"
			    "innermost frame first, as a traceback reads. The target is neither stopped nor\n"
			    "signalled (one BPF task iterator reads every thread); a process that is not\n"
			    "Python gets its native and kernel stacks.\n"
			    "\n"
			    "  -p, --pid PID           the process\n"
			    "      --container ID|NAME every process of a running container (an id, its\n"
			    "                          start, or a docker, podman or nerdctl name)\n"
			    "      --native            native frames between the Python ones\n"
			    "      --locals            each Python frame's local variables (int, float, str,\n"
			    "                          bytes, None and bool by value, anything else as\n"
			    "                          <type at 0x...>; nothing in the target is run; a\n"
			    "                          frame that kept changing while read says so)\n"
			    "      --json              one JSON document instead of text\n"
			    "  -v, --verbose           libbpf's messages and the verifier log\n"
			    "%s"
			    "  -h, --help              this help\n"
			    "\n"
			    "Examples:\n"
			    "  sudo pyebpf dump -p 1234\n"
			    "  sudo pyebpf dump -p 1234 --locals --thread worker-1\n"
			    "  sudo pyebpf dump -p 1234 --native --reason lock,gil\n"
			    "  sudo pyebpf dump --container web --locals\n"
			    "  sudo pyebpf dump -p 1234 --json | jq '.threads[] | {name, reason}'\n";

enum {
	OPT_NATIVE = 'N',
	OPT_LOCALS = 'L',
	OPT_JSON = 'J',
	OPT_CONTAINER = 'C'
};

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "container", required_argument, NULL, OPT_CONTAINER },
	{ "native", no_argument, NULL, OPT_NATIVE },
	{ "locals", no_argument, NULL, OPT_LOCALS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	FILTER_LONG_OPTIONS,
	{ 0 },
};

int dump_args__parse(int argc, char **argv, struct dump_opts *o)
{
	uint64_t pid;
	int c;

	memset(o, 0, sizeof(*o));
	filter__init(&o->filter);
	o->stack_size = 16384;
	args_begin();
	while ((c = args_next(argc, argv, ":p:vh", long_opts, &o->filter, "dump")) != ARGS_END) {
		switch (c) {
		case 'p':
			if (parse_u64(optarg, 1, (1U << 30) - 1, &pid)) {
				err_msg("invalid pid '%s' for --pid", optarg);
				return -1;
			}
			o->pid = (uint32_t)pid;
			break;
		case OPT_CONTAINER:
			if (!optarg[0]) {
				err_msg("--container needs an id or a name");
				return -1;
			}
			o->container = optarg;
			break;
		case OPT_NATIVE:
			o->native = true;
			break;
		case OPT_LOCALS:
			o->locals = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h': {
			char *help = dump_args__help();

			fputs(help, stdout);
			free(help);
		}
			return 1;
		default: /* ARGS_FAIL: the line is printed */
			return -1;
		}
	}
	if (optind < argc) {
		err_msg("unexpected argument '%s' (see 'pyebpf dump --help')", argv[optind]);
		return -1;
	}
	if (o->pid && o->container) {
		err_msg("dump takes -p PID or --container, not both");
		return -1;
	}
	if (!o->pid && !o->container) {
		err_msg("dump needs -p PID or --container ID|NAME (see 'pyebpf dump --help')");
		return -1;
	}
	return filter_args__check(&o->filter);
}

void dump_args__free(struct dump_opts *o)
{
	filter__free(&o->filter);
}

char *dump_args__help(void)
{
	return xasprintf(usage, filter_args_usage);
}

bool dump_cgroup_within(const char *mount, const char *dir, const char *cgroup)
{
	size_t nm = strlen(mount), nd = strlen(dir), nc;

	while (nm && mount[nm - 1] == '/') /* "/sys/fs/cgroup/" and "/" alike */
		nm--;
	if (nd < nm || strncmp(dir, mount, nm) != 0 || (dir[nm] && dir[nm] != '/'))
		return false;
	dir += nm;
	nd -= nm;
	while (nd && dir[nd - 1] == '/')
		nd--;
	nc = strlen(cgroup);
	/* The container's own group, or one below it: "/docker/ID/sub", never "/docker/IDx". */
	return nc >= nd && strncmp(cgroup, dir, nd) == 0 && (cgroup[nd] == '\0' || cgroup[nd] == '/' || nd == 0);
}

const struct option *dump_args__options(void)
{
	return long_opts;
}
