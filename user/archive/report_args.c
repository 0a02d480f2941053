// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "archive/report_args.h"
#include "profile/mem_view.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/filter_args.h"
#include "base/util.h"
#include "base/wallclock.h"

static const char usage[] = "Usage: pyebpf report RECORDING... [-o OUTPUT] [OPTIONS]\n"
			    "Convert and filter recordings saved as pprof (record -o FILE.pb.gz): files, and\n"
			    "directories of record --continuous (their interval files), read as one recording.\n"
			    "Without -o, print the functions with the most samples.\n"
			    "\n"
			    "Before and after:\n"
			    "      --diff-base REC     compare with this recording (file or directory; repeatable):\n"
			    "                          the table shows what changed most, -o .svg colours frames\n"
			    "                          by the change of their share (red grew, blue shrank),\n"
			    "                          -o .folded writes \"stack BEFORE AFTER\" lines\n"
			    "      --base-since WHEN   the base's window instead of --since/--until\n"
			    "      --base-until WHEN   (a continuous directory before and after a deploy)\n"
			    "                          A diff compares Python frames by function, not by line,\n"
			    "                          and processes by command, as --processes does by default.\n"
			    "\n"
			    "  -p, --pid PID[,PID...]  only these processes\n"
			    "      --container ID      only processes of this container (its id or the id's start)\n"
			    "      --exclude-idle      leave out threads that did not run in the window (no\n"
			    "                          sample on a CPU, no wait that ended in it)\n"
			    "                          (wall recordings: idle pools and sleeping monitors)\n"
			    "      --tasks             asyncio task time (--mode wall, 3.11+) only: the table\n"
			    "                          ranks what pending tasks await; without it the table\n"
			    "                          leaves task time out (-o keeps both)\n"
			    "      --sample-type TYPE  a memory recording (--mode memory): inuse_space\n"
			    "                          (default), peak_space, alloc_space, inuse_objects,\n"
			    "                          peak_objects or alloc_objects (-o .pb.gz keeps all six)\n"
			    "%s"
			    "\n"
			    "Output:\n"
			    "  -o, --output FILE       write a profile instead of the table\n"
			    "%s"
			    "      --threads           a frame per thread: its Python name (else OS name) and tid\n"
			    "      --containers        a frame per container (its id) under the process frame\n"
			    "      --by KEY            a label's values (endpoint, trace_id, span_id,\n"
			    "                          span_name, or --context-label's name): without -o a\n"
			    "                          table of them with their top functions; with -o a\n"
			    "                          tree per value, under a frame \"[KEY=VALUE]\" (folded,\n"
			    "                          SVG, speedscope, Firefox Profiler, trace; pprof has\n"
			    "                          the labels)\n"
			    "      --processes MODE    the process frame: merged (default: one \"comm\" tree per\n"
			    "                          command, gunicorn's workers as one; -p PID for one of\n"
			    "                          them), each (\"comm [pid N]\": a tree per process)\n"
			    "      --top N             rows of the table (default 20)\n"
			    "  -h, --help              this help\n"
			    "\n"
			    "Examples:\n"
			    "  pyebpf report all.pb.gz                          top functions\n"
			    "  pyebpf report wall.pb.gz --exclude-idle          where the working threads wait\n"
			    "  pyebpf report shop.pb.gz --by endpoint           CPU per endpoint of a traced service\n"
			    "  pyebpf report all.pb.gz -o flame.svg --comm python3 --exclude-thread monitor\n"
			    "  pyebpf report all.pb.gz -o trace.json --since 10 --until 20   load in ui.perfetto.dev\n"
			    "  pyebpf report /var/lib/pyebpf --since 14:00 --until 14:20 -o window.svg\n"
			    "  pyebpf report DIR --since 14:05 --until 14:20 --diff-base DIR --base-since 13:50 \\\n"
			    "         --base-until 14:05 -o diff.svg                 what changed after 14:05\n";

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'f' },
	{ "threads", no_argument, NULL, 'T' },
	{ "containers", no_argument, NULL, 'C' },
	{ "by", required_argument, NULL, 'Z' },
	{ "processes", required_argument, NULL, 'P' },
	{ "top", required_argument, NULL, 'N' },
	{ "exclude-idle", no_argument, NULL, 'I' },
	{ "tasks", no_argument, NULL, 'K' },
	{ "sample-type", required_argument, NULL, 'Y' },
	{ "diff-base", required_argument, NULL, 'B' },
	{ "container", required_argument, NULL, OPT_FILTER_CONTAINER }, /* record's --container picks targets */
	{ "base-since", required_argument, NULL, 'S' },
	{ "base-until", required_argument, NULL, 'U' },
	{ "help", no_argument, NULL, 'h' },
	FILTER_LONG_OPTIONS,
	{ 0 },
};

static int base_window(struct report_opts *o, const struct time_arg *since, const struct time_arg *until);

static int parse(int argc, char **argv, struct report_opts *o)
{
	struct time_arg base_since = { 0 }, base_until = { 0 };
	size_t bases_cap = 0;
	const char *format = NULL;
	uint64_t top;
	bool top_given = false, tasks = false;
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
		case 'I':
			o->exclude_idle = true;
			break;
		case 'K':
			tasks = true;
			break;
		case 'Y':
			if (mem_value_option(optarg, &o->sample_type))
				return -1;
			o->sample_type_given = true;
			break;
		case 'T':
			o->threads = true;
			break;
		case 'C':
			o->containers = true;
			break;
		case 'Z':
			o->by = optarg;
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
		case 'B':
			if (!*optarg) {
				err_msg("empty path for --diff-base");
				return -1;
			}
			xgrow(&o->bases, &bases_cap, o->nbases + 1, sizeof(*o->bases));
			o->bases[o->nbases++] = optarg;
			break;
		case 'S':
		case 'U':
			if (filter_args__time(optarg, c == 'S' ? "--base-since" : "--base-until",
					      c == 'S' ? &base_since : &base_until))
				return -1;
			break;
		case 'h': {
			char *help = report_args__help();

			fputs(help, stdout);
			free(help);
		}
			return 1;
		default: /* ARGS_FAIL: the line was printed */
			return -1;
		}
	}
	if (optind >= argc) {
		err_msg("report needs a recording: pyebpf report RECORDING.pb.gz|DIR... [-o OUTPUT]");
		return -1;
	}
	o->inputs = (const char **)argv + optind;
	o->ninputs = (size_t)(argc - optind);
	o->input = argv[optind];
	if (filter_args__check(&o->filter))
		return -1;
	if ((base_since.given || base_until.given) && !o->nbases) {
		err_msg("--base-since and --base-until set the window of --diff-base: give --diff-base too");
		return -1;
	}
	/* A diff compares Python functions, not lines (a deploy moves line
	 * numbers); processes by command, the default (a restart changes pids). */
	if (o->nbases)
		o->filter.functions = true;
	/* Task time is not thread time: the table shows one or the other. */
	o->filter.time_kind = tasks ? FILTER_TIME_TASKS : FILTER_TIME_THREADS;
	if (base_window(o, &base_since, &base_until))
		return -1;

	if (format && !o->output) {
		err_msg("--format needs -o: without it report prints a table");
		return -1;
	}
	if (top_given && o->output) {
		err_msg("--top sets the rows of the table report prints without -o: it does not apply to -o");
		return -1;
	}
	if (!o->output && o->by && o->nbases) {
		err_msg("--by prints a table of one side: it does not apply to --diff-base");
		return -1;
	}
	if (!o->output)
		return 0;
	if (format ? output_format_from_name(format, &o->format) : output_format_from_path(o->output, &o->format))
		return -1;
	/* pprof keeps task time apart (a sample type of its own); any other
	 * output holds one kind, as record writes it. */
	if (o->format == FORMAT_PPROF && !tasks)
		o->filter.time_kind = FILTER_TIME_ALL;
	if (o->by && o->format != FORMAT_FOLDED) {
		err_msg("--by draws a frame per value in folded output (-o FILE.folded); without -o it prints a "
			"table of the values");
		return -1;
	}
	if (o->nbases && o->format != FORMAT_SVG && o->format != FORMAT_FOLDED) {
		err_msg("a diff is written as .svg or .folded (or printed as a table without -o); for pprof, "
			"write each side and run: go tool pprof -diff_base BASE.pb.gz NEW.pb.gz");
		return -1;
	}
	return 0;
}

/* The base side's filter: the same filters, its own window when given. */
static int base_window(struct report_opts *o, const struct time_arg *since, const struct time_arg *until)
{
	int64_t now = epoch_now_ns();

	o->base_filter = o->filter;
	if (!since->given && !until->given)
		return 0;
	struct filter *b = &o->base_filter;
	b->timed = true;
	b->since_ns = 0;
	b->until_ns = UINT64_MAX;
	b->since_epoch_ns = INT64_MIN;
	b->until_epoch_ns = INT64_MAX;
	if (since->given && since->wall)
		b->since_epoch_ns = time_arg_epoch(since, until, now);
	else if (since->given)
		b->since_ns = since->offset_ns;
	if (until->given && until->wall)
		b->until_epoch_ns = time_arg_epoch(until, since, now);
	else if (until->given)
		b->until_ns = until->offset_ns;
	if (b->until_epoch_ns <= b->since_epoch_ns || (b->until_ns != UINT64_MAX && b->until_ns <= b->since_ns)) {
		err_msg("--base-until is not after --base-since");
		return -1;
	}
	return 0;
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
	free(o->bases);
	o->bases = NULL;
	filter__free(&o->filter);
}

char *report_args__help(void)
{
	return xasprintf(usage, filter_args_usage, formats_usage);
}

const struct option *report_args__options(void)
{
	return long_opts;
}
