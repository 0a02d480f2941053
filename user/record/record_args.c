// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/record_args.h"
#include "profile/mem_view.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile/filter_args.h"
#include "pyebpf.h"
#include "archive/rotation.h"
#include "base/escape.h"
#include "base/util.h"

static const char usage[] =
	"Usage: pyebpf record [OPTIONS] [-- CMD [ARGS...]]\n"
	"Sample the stacks of running processes with a perf_event timer on every CPU.\n"
	"\n"
	"Target (default: every process on the machine):\n"
	"  -a, --all               every process on the machine\n"
	"  -p, --pid PID[,PID...]  these processes and every process they start (children\n"
	"                          running now and later; stops when all have exited)\n"
	"      --comm NAME         every process of this name, now and later, and only those\n"
	"                          (as in ps -o comm: at most 15 bytes; repeatable)\n"
	"      --no-children       -p or CMD alone, not the processes they start\n"
	"  -- CMD [ARGS...]        run CMD, profile it and its children, stop when it exits\n"
	"      --cgroup PATH       only tasks in this cgroup v2 or below it (absolute, or\n"
	"                          relative to the cgroup2 mount; repeatable)\n"
	"      --container NAME    only this container, by its name (docker's, podman's,\n"
	"                          nerdctl's), its id or the id's start (4+ hex digits;\n"
	"                          any runtime's; repeatable), followed across restarts;\n"
	"                          stops when all have exited (--continuous waits)\n"
	"      --pod NS/NAME       every container of this Kubernetes pod on this node\n"
	"                          (kubelet's /var/log/pods and cgroups; repeatable)\n"
	"\n"
	"Sampling:\n"
	"  -F, --freq HZ           samples per second on each CPU (default 99, at most 10000)\n"
	"  -d, --duration SECONDS  stop after this long (default: Ctrl-C, SIGTERM or CMD exit)\n"
	"      --mode MODE         cpu (default): time on a CPU; wall: every thread's time,\n"
	"                          on a CPU or off it, off-CPU time ending in a frame\n"
	"                          [off-cpu: REASON] (runqueue, sleep, io, lock, gil, other);\n"
	"                          off-cpu: only the time off the CPU; memory: where resident\n"
	"                          memory grows, and what of it is still held at the end\n"
	"      --sample-bytes SIZE memory mode: a sample every SIZE bytes of growth on\n"
	"                          average (default 512K, as Go's heap profiler)\n"
	"      --sample-type TYPE  memory mode, outputs other than pprof (which has all\n"
	"                          six): inuse_space (default: held at the end, an ended\n"
	"                          process's at its end, by the stack it grew under),\n"
	"                          peak_space (held at each process's high-water mark),\n"
	"                          alloc_space (all growth); inuse_objects, peak_objects,\n"
	"                          alloc_objects (in sample points)\n"
	"      --no-tasks          wall mode, CPython 3.11+: no task time of asyncio tasks\n"
	"                          (by default each pending task is sampled at -F Hz, its\n"
	"                          stack its await chain, labelled task time: pprof keeps\n"
	"                          it apart, other outputs hold the threads' time only)\n"
	"      --tasks             wall mode: the output (not pprof) holds task time alone\n"
	"      --no-requests       no labels of the request: by default a sample of a\n"
	"                          service traced by OpenTelemetry carries trace_id,\n"
	"                          span_id, span_name and endpoint (docs/requests.md)\n"
	"      --context-label NAME  the context variable NAME (a str, int or bytes, e.g.\n"
	"                          asgi-correlation-id's correlation_id) as a label NAME\n"
	"      --native            native C/C++ frames (extension modules, pybind11) merged\n"
	"                          with the Python frames; unwinds without frame pointers\n"
	"      --stack-size BYTES  user stack copied per sample for --native (default 32K,\n"
	"                          at most 64K; deeper stacks end in a marked frame)\n"
	"      --debug-dir DIR     where detached debug files of stripped binaries are, by\n"
	"                          build id (default /usr/lib/debug; repeatable)\n"
	"\n"
	"%s"
	"\n"
	"Output:\n"
	"  -o, --output FILE       where to write the profile (default pyebpf.folded)\n"
	"%s"
	"      --threads           a frame per thread: its Python name (else OS name) and tid\n"
	"      --containers        a frame per container (its id) under the process frame\n"
	"      --by KEY            a tree per value of a label, under a frame\n"
	"                          \"[KEY=VALUE]\" (folded, SVG, speedscope, Firefox\n"
	"                          Profiler, trace; pprof has the labels): --by endpoint\n"
	"      --processes MODE    the process frame: merged (default: one \"comm\" tree per\n"
	"                          command, gunicorn's workers as one; pids stay in pprof's\n"
	"                          pid label and the trace's tracks), each (\"comm [pid N]\")\n"
	"\n"
	"Continuous (production) mode:\n"
	"      --continuous DIR    run until stopped, one pprof file per interval in DIR\n"
	"                          (SIGHUP: write the current interval now; SIGTERM: write and exit)\n"
	"      --interval TIME     interval length: 60s (default), 5m, 1h...\n"
	"      --keep N            keep the newest N interval files\n"
	"      --max-disk SIZE     keep interval files within SIZE bytes (K, M, G)\n"
	"      --rate-limit PCT    if pyebpf's own CPU goes above PCT%% of one core over an\n"
	"                          interval, halve the frequency (noted in the files)\n"
	"\n"
	"%s"
	"\n"
	"  -v, --verbose           libbpf debug output and the BPF verifier log\n"
	"  -h, --help              this help\n"
	"\n"
	"Examples:\n"
	"  sudo pyebpf record -a -d 30                  whole machine for 30 s\n"
	"  sudo pyebpf record -p 1234,1240 -F 999       two processes (and children) at 999 Hz\n"
	"  sudo pyebpf record --comm gunicorn -d 60     every gunicorn process, workers\n"
	"                                               restarted while recording included\n"
	"  sudo pyebpf record -o app.folded -- python3 app.py\n"
	"  sudo pyebpf record -p 1234 --threads --exclude-thread monitor\n"
	"  sudo pyebpf record -a -d 60 -o all.pb.gz     an archive: 'pyebpf report' converts it\n"
	"  sudo pyebpf record --container web -d 30     the container docker ps calls web\n"
	"  sudo pyebpf record -a -o flame.svg           open flame.svg in a browser\n"
	"  sudo pyebpf record --mode wall -p 1234 -o wall.svg   where the wall time goes\n"
	"  sudo pyebpf record -a --continuous /var/lib/pyebpf --interval 15s --max-disk 1G \\\n"
	"       --push http://pyroscope:4040 --label env=prod   a fleet's host\n";

static const struct option long_opts[] = {
	{ "all", no_argument, NULL, 'a' },
	{ "pid", required_argument, NULL, 'p' },
	{ "freq", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "threads", no_argument, NULL, 'T' },
	{ "containers", no_argument, NULL, 'C' },
	{ "by", required_argument, NULL, OPT_RECORD_BY },
	{ "processes", required_argument, NULL, 'P' },
	{ "cgroup", required_argument, NULL, 'g' },
	{ "container", required_argument, NULL, 'c' },
	{ "pod", required_argument, NULL, OPT_RECORD_POD },
	{ "continuous", required_argument, NULL, 'R' },
	{ "interval", required_argument, NULL, 'I' },
	{ "keep", required_argument, NULL, 'k' },
	{ "max-disk", required_argument, NULL, 'M' },
	{ "rate-limit", required_argument, NULL, 'L' },
	{ "format", required_argument, NULL, 'f' },
	{ "native", no_argument, NULL, 'N' },
	{ "mode", required_argument, NULL, 'm' },
	{ "stack-size", required_argument, NULL, 'S' },
	{ "debug-dir", required_argument, NULL, 'D' },
	{ "no-children", no_argument, NULL, 'K' },
	{ "no-tasks", no_argument, NULL, 'A' },
	{ "tasks", no_argument, NULL, 'W' },
	{ "sample-bytes", required_argument, NULL, OPT_RECORD_SAMPLE_BYTES },
	{ "sample-type", required_argument, NULL, OPT_RECORD_SAMPLE_TYPE },
	{ "no-requests", no_argument, NULL, OPT_RECORD_NO_REQUESTS },
	{ "context-label", required_argument, NULL, OPT_RECORD_CONTEXT_LABEL },
	{ "help", no_argument, NULL, 'h' },
	PUSH_LONG_OPTIONS,
	FILTER_LONG_OPTIONS,
	{ 0 },
};

static int parse_pids(const char *arg, struct record_opts *o)
{
	char bad[64];

	if (!parse_id_list(arg, &o->pids, &o->npids, bad, sizeof(bad)))
		return 0;
	if (*arg && !*bad)
		err_msg("invalid pid list '%s' (expected PID[,PID...])", arg);
	else
		err_msg("invalid pid '%s' (expected PID[,PID...])", bad);
	return -1;
}

static int parse_duration(const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0) || v > 1e7) {
		err_msg("invalid duration '%s' for -d (seconds, greater than 0)", arg);
		return -1;
	}
	*out = v;
	return 0;
}

/* What the options said that only matters once they are all read. */
struct parse_state {
	const char *format;
	bool output_given, rotation_given, stack_size_given, sample_bytes_given;
};

/* A context variable's name makes a label's: an identifier, not one of the
 * labels pyebpf writes itself. */
static int context_label_name(const char *arg)
{
	static const char *const taken[] = {
		"pid",          "tid",         "comm",      "thread",         "gil",    "python",
		"cgroup",       "cgroup_path", "container", "container_name", "ns_pid", "off_cpu_reason",
		"process_name", "time_kind",   "k8s_pod",   "thread_name"
	};
	size_t n = strlen(arg);
	bool ok = n > 0 && n <= 64 && !(arg[0] >= '0' && arg[0] <= '9');

	for (size_t i = 0; ok && i < n; i++)
		ok = (arg[i] >= 'a' && arg[i] <= 'z') || (arg[i] >= 'A' && arg[i] <= 'Z') ||
		     (arg[i] >= '0' && arg[i] <= '9') || arg[i] == '_';
	if (!ok) {
		char shown[80];

		err_msg("--context-label wants a context variable's name (letters, digits and _, at most 64), not "
			"'%s'",
			text_escape(arg, shown, sizeof(shown)));
		return -1;
	}
	struct sample_request scratch;
	bool taken_name = sample_request__field(&scratch, arg) != NULL; /* a request label's */

	for (size_t i = 0; !taken_name && i < sizeof(taken) / sizeof(taken[0]); i++)
		taken_name = !strcmp(arg, taken[i]);
	if (taken_name) {
		err_msg("--context-label %s: pyebpf writes a label of that name itself", arg);
		return -1;
	}
	return 0;
}

int record_args__shared_option(struct record_opts *o, int c, const char *arg)
{
	switch (c) {
	case OPT_RECORD_NO_REQUESTS:
		o->no_requests = true;
		break;
	case OPT_RECORD_CONTEXT_LABEL:
		if (context_label_name(arg))
			return -1;
		o->context_label = arg;
		break;
	case 'a':
		o->all = true;
		break;
	case 'p':
		if (parse_pids(arg, o))
			return -1;
		break;
	case 'F':
		/* Each sample costs the sampled CPU 3-30 us in BPF (deeper Python
		 * stacks cost more): at 10 kHz up to 30% of every CPU. */
		if (parse_u64(arg, 1, RECORD_MAX_FREQ, &o->freq)) {
			err_msg("invalid frequency '%s' for -F (1 to %d Hz: each sample costs the profiled CPU "
				"3-30 us)",
				arg, RECORD_MAX_FREQ);
			return -1;
		}
		o->freq_given = true;
		break;
	case 'd':
		if (parse_duration(arg, &o->duration))
			return -1;
		break;
	case 'm':
		if (!strcmp(arg, "cpu")) {
			o->mode = MODE_CPU;
		} else if (!strcmp(arg, "wall")) {
			o->mode = MODE_WALL;
		} else if (!strcmp(arg, "off-cpu")) {
			o->mode = MODE_OFFCPU;
		} else if (!strcmp(arg, "memory")) {
			o->mode = MODE_MEMORY;
		} else {
			err_msg("invalid mode '%s' for --mode (cpu, wall, off-cpu or memory)", arg);
			return -1;
		}
		break;
	case 'v':
		o->verbose = true;
		break;
	case 'K':
		o->no_children = true;
		break;
	case 'g':
	case 'c':
	case OPT_RECORD_POD: {
		const char ***v = c == 'g' ? &o->cgroups : c == 'c' ? &o->container_ids : &o->pods;
		size_t *n = c == 'g' ? &o->ncgroups : c == 'c' ? &o->ncontainers : &o->npods, cap = *n;

		if (!*arg) {
			err_msg("empty value for %s", c == 'g' ? "--cgroup" : c == 'c' ? "--container" : "--pod");
			return -1;
		}
		xgrow(v, &cap, *n + 1, sizeof(**v));
		(*v)[(*n)++] = arg;
		break;
	}
	default:
		return 1;
	}
	return 0;
}

/* One option of record's own (not a filter); 0, or -1 after one error line. */
static int record_option(struct record_opts *o, int c, const char *arg, struct parse_state *st)
{
	int shared = record_args__shared_option(o, c, arg), push;
	uint64_t keep;
	char *end;

	if (shared <= 0)
		return shared;
	if ((push = push_args__option(&o->push, c, arg)))
		return push < 0 ? -1 : 0;
	switch (c) {
	case 'o':
		if (args_output(arg, &o->output))
			return -1;
		st->output_given = true;
		break;
	case 'R':
		if (!*arg) {
			err_msg("empty directory for --continuous");
			return -1;
		}
		o->continuous = arg;
		break;
	case 'I':
		st->rotation_given = true;
		if (parse_interval(arg, &o->interval)) {
			err_msg("invalid interval '%s' for --interval (e.g. 60s, 5m, 1h; at least 1 s)", arg);
			return -1;
		}
		break;
	case 'k':
		st->rotation_given = true;
		if (parse_u64(arg, 1, 1000000000, &keep)) {
			err_msg("invalid count '%s' for --keep (1 or more files)", arg);
			return -1;
		}
		o->keep = keep;
		break;
	case 'M':
		st->rotation_given = true;
		if (parse_size(arg, &o->max_disk)) {
			err_msg("invalid size '%s' for --max-disk (e.g. 500M, 2G)", arg);
			return -1;
		}
		break;
	case 'L':
		st->rotation_given = true;
		errno = 0;
		o->rate_limit = strtod(arg, &end);
		if (errno || end == arg || *end || !(o->rate_limit > 0) || o->rate_limit > 100) {
			err_msg("invalid share '%s' for --rate-limit (percent of one core, above 0)", arg);
			return -1;
		}
		break;
	case 'N':
		o->native = true;
		break;
	case OPT_RECORD_SAMPLE_BYTES:
		/* A page is the least growth there is; a point per 1 GiB is none. */
		if (parse_size(arg, &o->mem_sample_bytes) || o->mem_sample_bytes < 4096 ||
		    o->mem_sample_bytes > (1ULL << 30)) {
			err_msg("invalid size '%s' for --sample-bytes (4K to 1G)", arg);
			return -1;
		}
		st->sample_bytes_given = true;
		break;
	case OPT_RECORD_SAMPLE_TYPE:
		if (mem_value_option(arg, &o->sample_type))
			return -1;
		o->sample_type_given = true;
		break;
	case 'S': {
		uint64_t bytes;

		st->stack_size_given = true;
		if (parse_size(arg, &bytes) || bytes < 1024 || bytes > PYEBPF_MAX_USTACK_COPY) {
			err_msg("invalid size '%s' for --stack-size (1K to 64K)", arg);
			return -1;
		}
		o->stack_size = (uint32_t)bytes;
		break;
	}
	case 'D': {
		struct stat st;
		size_t cap = o->ndebug_dirs ? o->ndebug_dirs + 1 : 0;

		if (stat(arg, &st) || !S_ISDIR(st.st_mode)) {
			err_msg("no directory '%s' for --debug-dir", arg);
			return -1;
		}
		/* Kept NULL-terminated: procs takes the list as it is. */
		xgrow(&o->debug_dirs, &cap, o->ndebug_dirs + 2, sizeof(*o->debug_dirs));
		o->debug_dirs[o->ndebug_dirs++] = arg;
		o->debug_dirs[o->ndebug_dirs] = NULL;
		break;
	}
	case 'A':
		o->no_tasks = true;
		break;
	case 'W':
		o->tasks = true;
		break;
	case 'T':
		o->threads = true;
		break;
	case 'C':
		o->containers = true;
		break;
	case OPT_RECORD_BY:
		o->by = arg;
		break;
	case 'P':
		if (process_frames_parse(arg, &o->processes))
			return -1;
		break;
	case 'f':
		st->format = arg;
		break;
	}
	return 0;
}

int record_args__check_targets(struct record_opts *o)
{
	if (o->npids && o->all) {
		err_msg("-a and -p cannot be combined");
		return -1;
	}
	if (o->npids && o->cmd) {
		err_msg("-p and a command cannot be combined");
		return -1;
	}
	if (o->no_children && !o->npids && !o->cmd) {
		err_msg("--no-children applies to -p or a command");
		return -1;
	}
	/* --comm alone names the targets: only they are sampled, not the machine. */
	if (!o->npids && !o->cmd)
		o->all = o->filter.ncomms == 0;
	return filter_args__check(&o->filter);
}

/* --mode memory's options, and the others' that do not apply to it. */
static int check_memory(struct record_opts *o, const struct parse_state *st)
{
	if (o->mode != MODE_MEMORY) {
		if (st->sample_bytes_given || o->sample_type_given) {
			err_msg("--sample-bytes and --sample-type need --mode memory");
			return -1;
		}
		return 0;
	}
	if (o->freq_given || o->rate_limit) {
		err_msg("--mode memory samples by bytes of growth, not by time: -F and --rate-limit do not apply "
			"(--sample-bytes sets its rate)");
		return -1;
	}
	return 0;
}

/* Options that need or exclude each other, and the output format. */
static int check_combinations(struct record_opts *o, const struct parse_state *st)
{
	if (record_args__check_targets(o))
		return -1;
	if (st->rotation_given && !o->continuous) {
		err_msg("--interval, --keep, --max-disk and --rate-limit need --continuous DIR");
		return -1;
	}
	if (st->stack_size_given && !o->native) {
		err_msg("--stack-size needs --native");
		return -1;
	}
	if (o->push.nendpoints && !o->continuous) {
		err_msg("--push and --otlp need --continuous DIR: its interval files are the spool that keeps what a "
			"backend has not taken yet");
		return -1;
	}
	if (push_args__check(&o->push))
		return -1;
	/* Unsent intervals outlive --keep: with no disk bound an outage would fill the disk. */
	if (o->push.nendpoints && !o->max_disk) {
		o->max_disk = RECORD_DEFAULT_SPOOL;
		o->spool_default = true;
	}
	if (check_memory(o, st))
		return -1;
	if (o->tasks && o->mode != MODE_WALL) {
		err_msg("--tasks needs --mode wall: asyncio task time is sampled in wall mode");
		return -1;
	}
	if (o->tasks && o->no_tasks) {
		err_msg("--tasks and --no-tasks exclude each other");
		return -1;
	}
	if (o->tasks && o->continuous) {
		err_msg("--continuous writes pprof files, which keep asyncio task time apart already: --tasks does "
			"not apply");
		return -1;
	}
	if (o->continuous) {
		if (st->output_given || st->format) {
			err_msg("--continuous writes pprof files into its directory: -o and --format do not apply");
			return -1;
		}
		o->format = FORMAT_PPROF;
		return 0;
	}
	if (st->format ? output_format_from_name(st->format, &o->format)
		       : output_format_from_path(o->output, &o->format))
		return -1;
	if (o->mode == MODE_MEMORY && !output_format_without_time(o->format)) {
		err_msg("--mode memory writes pprof, folded, SVG or speedscope: timelines and heat maps are of time");
		return -1;
	}
	if (o->tasks && o->format == FORMAT_PPROF) {
		err_msg("pprof keeps asyncio task time apart already (sample type task_wall): --tasks is for the other "
			"outputs");
		return -1;
	}
	return 0;
}

void record_args__defaults(struct record_opts *o)
{
	memset(o, 0, sizeof(*o));
	filter__init(&o->filter);
	push_args__init(&o->push);
	o->freq = RECORD_DEFAULT_FREQ;
	o->output = RECORD_DEFAULT_OUTPUT;
	o->interval = RECORD_DEFAULT_INTERVAL;
	o->stack_size = RECORD_DEFAULT_STACK_SIZE;
	o->mem_sample_bytes = RECORD_DEFAULT_SAMPLE_BYTES;
}

static int parse(int argc, char **argv, struct record_opts *o)
{
	struct parse_state st = { 0 };
	int c;

	record_args__defaults(o);

	args_begin();
	/* '+': stop at the first non-option, the command; ':': report missing values. */
	while ((c = args_next(argc, argv, "+:ap:F:d:o:vh", long_opts, &o->filter, "record")) != ARGS_END) {
		if (c == ARGS_FAIL)
			return -1;
		if (c == 'h') {
			{
				char *help = record_args__help();

				fputs(help, stdout);
				free(help);
			}
			return 1;
		}
		if (record_option(o, c, optarg, &st))
			return -1;
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	return check_combinations(o, &st);
}

int record_args__parse(int argc, char **argv, struct record_opts *o)
{
	int ret = parse(argc, argv, o);

	if (ret)
		record_args__free(o); /* help or error: nothing to keep */
	return ret;
}

void record_args__free(struct record_opts *o)
{
	free(o->pids);
	o->pids = NULL;
	o->npids = 0;
	filter__free(&o->filter);
	free(o->cgroups);
	o->cgroups = NULL;
	o->ncgroups = 0;
	free(o->container_ids);
	o->container_ids = NULL;
	o->ncontainers = 0;
	free(o->pods);
	o->pods = NULL;
	o->npods = 0;
	free(o->debug_dirs);
	o->debug_dirs = NULL;
	o->ndebug_dirs = 0;
	push_args__free(&o->push);
}

char *record_args__help(void)
{
	return xasprintf(usage, filter_args_usage, formats_usage, push_args_usage);
}

const struct option *record_args__options(void)
{
	return long_opts;
}
