// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* pyebpf: a sampling profiler for Python built on eBPF. */
#include <stdio.h>
#include <string.h>

#include "live/dump.h"
#include "live/live_top.h"
#include "push/push_main.h"
#include "record/record.h"
#include "archive/report.h"
#include "serve/serve.h"
#include "base/util.h"
#include "base/version.h"
/* The commit built (build/commit.h, made by the Makefile from git). */
#include "commit.h"

static const char usage[] =
	"Usage: pyebpf COMMAND [OPTIONS]\n"
	"A system-wide sampling profiler for Python, built on eBPF.\n"
	"\n"
	"Commands:\n"
	"  record    sample stacks and write a profile (pyebpf record --help)\n"
	"  top       a live table of the hottest functions (pyebpf top --help)\n"
	"  report    convert, filter, merge or compare recordings (pyebpf report --help)\n"
	"  serve     a local web viewer over a continuous directory (pyebpf serve --help)\n"
	"  dump      every thread of a process now: stacks, waits, locals (pyebpf dump --help)\n"
	"  push      send a continuous directory to Pyroscope or an OTLP collector (pyebpf push --help)\n"
	"\n"
	"  -h, --help       this help\n"
	"  -V, --version    print the version\n"
	"\n"
	"Examples:\n"
	"  sudo pyebpf record -a -d 10 -o machine.folded\n"
	"  sudo pyebpf record -- python3 script.py\n"
	"  sudo pyebpf top -p 1234\n"
	"  sudo pyebpf record -a -d 60 -o all.pb.gz && pyebpf report all.pb.gz -o flame.svg\n"
	"  sudo pyebpf dump -p 1234 --locals\n";

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("pyebpf %s (commit %s, %s)\n", PYEBPF_VERSION, PYEBPF_COMMIT, PYEBPF_MACHINE);
		return 0;
	}
	if (!strcmp(argv[1], "record"))
		return record_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "top"))
		return live_top_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return report_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "dump"))
		return dump_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "push"))
		return push_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "serve"))
		return serve_main(argc - 1, argv + 1);
	err_msg("unknown command '%s' (see 'pyebpf --help')", argv[1]);
	return 2;
}
