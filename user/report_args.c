// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "report_args.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "filter_args.h"
#include "util.h"

static const char usage[] = "Usage: pyebpf report RECORDING.pb.gz [-o OUTPUT] [OPTIONS]\n"
			    "Convert and filter a recording saved as pprof (record -o FILE.pb.gz). Without -o,\n"
			    "print the functions with the most samples.\n"
			    "\n"
			    "  -p, --pid PID[,PID...]  only these processes\n"
			    "%s"
			    "\n"
			    "Output:\n"
			    "  -o, --output FILE       write a profile instead of the table\n"
			    "%s"
			    "      --threads           a frame per thread: its Python name (else OS name) and tid\n"
			    "      --containers        a frame per container (its id) under the process frame\n"
			    "      --processes MODE    the process frame: auto (\"comm [pid N]\" when 2 to 16\n"
			    "                          processes share a command, else \"comm\"), each, merged\n"
			    "      --top N             rows of the table (default 20)\n"
			    "  -h, --help              this help\n"
			    "\n"
			    "Examples:\n"
			    "  pyebpf report all.pb.gz                          top functions\n"
			    "  pyebpf report all.pb.gz -o flame.svg --comm python3 --exclude-thread monitor\n"
			    "  pyebpf report all.pb.gz -o trace.json --since 10 --until 20   load in ui.perfetto.dev\n";

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "threads", no_argument, NULL, 'T' },
	{ "containers", no_argument, NULL, 'C' },
	{ "processes", required_argument, NULL, 'P' },
	{ "top", required_argument, NULL, 'N' },
	{ "help", no_argument, NULL, 'h' },
	FILTER_LONG_OPTIONS,
	{ 0 },
};

static int parse(int argc, char **argv, struct report_opts *o)
{
	const char *format = NULL;
	uint64_t top;
	bool top_given = false;
	int c;

	memset(o, 0, sizeof(*o));
	filter__init(&o->filter);
	o->top = REPORT_DEFAULT_TOP;
	args_begin();
	while ((c = args_next(argc, argv, ":p:o:h", long_opts, &o->filter, "report")) != ARGS_END) {
		switch (c) {
		case 'p':
			if (filter_args__pids(&o->filter, optarg, "--pid"))
				return -1;
			break;
		case 'o':
			if (args_output(optarg, &o->output))
				return -1;
			break;
		case 'f':
			format = optarg;
			break;
		case 'T':
			o->threads = true;
			break;
		case 'C':
			o->containers = true;
			break;
		case 'P':
			if (process_frames_parse(optarg, &o->processes))
				return -1;
			break;
		case 'N':
			if (parse_u64(optarg, 1, 1000000, &top)) {
				err_msg("invalid row count '%s' for --top (1 or more)", optarg);
				return -1;
			}
			o->top = top;
			top_given = true;
			break;
		case 'h':
			printf(usage, filter_args_usage, formats_usage);
			return 1;
		default: /* ARGS_FAIL: the line was printed */
			return -1;
		}
	}
	if (optind >= argc) {
		err_msg("report needs a recording: pyebpf report RECORDING.pb.gz [-o OUTPUT]");
		return -1;
	}
	if (optind + 1 < argc) {
		err_msg("report reads one recording, not '%s' too", argv[optind + 1]);
		return -1;
	}
	o->input = argv[optind];
	if (filter_args__check(&o->filter))
		return -1;
	if (format && !o->output) {
		err_msg("--format needs -o: without it report prints a table");
		return -1;
	}
	if (top_given && o->output) {
		err_msg("--top sets the rows of the table report prints without -o: it does not apply to -o");
		return -1;
	}
	if (!o->output)
		return 0;
	if (format)
		return output_format_from_name(format, &o->format);
	return output_format_from_path(o->output, &o->format);
}

int report_args__parse(int argc, char **argv, struct report_opts *o)
{
	int ret = parse(argc, argv, o);

	if (ret)
		report_args__free(o);
	return ret;
}

void report_args__free(struct report_opts *o)
{
	filter__free(&o->filter);
}
