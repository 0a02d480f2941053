// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `pyebpf record`: open → configure → load → attach → poll → stop → write.
 * The rooms it drives: preflight.c (checks before anything is loaded),
 * sampler.c (BPF, perf events, counters: the only libbpf user), ingest.c
 * (every sample named as it arrives: the process may be gone at the end),
 * child.c (-- CMD), intervals.c (--continuous), push/sender.c (--push,
 * --otlp: beside the loop, never in it), summary.c. The output file is
 * written once, after the ring buffer is drained.
 */
#include "record/record.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/child.h"
#include "write/formats.h"
#include "record/ingest.h"
#include "record/intervals.h"
#include "base/outfile.h"
#include "record/preflight.h"
#include "profile/filter.h"
#include "profile/mem_view.h"
#include "profile/profile.h"
#include "push/sender.h"
#include "record/record_push.h"
#include "record/record_args.h"
#include "record/record_targets.h"
#include "record/request_labels.h"
#include "record/sampler.h"
#include "record/summary.h"
#include "system/container_watch.h"
#include "base/util.h"

#define STATUS_INTERVAL_NS (500 * 1000000ULL)
#define POLL_MS 50 /* the longest a sample waits to be named */

struct recorder {
	struct record_opts opts;
	uint64_t *cgroup_ids; /* --cgroup / --container, resolved */
	size_t ncgroup_ids;
	struct container_watch *watch; /* --container: each followed across restarts */
	struct sampler *sampler;
	struct profile *prof;
	struct ingest *ingest;
	struct child child;
	struct outfile out;
	struct intervals iv;   /* --continuous; in one-shot mode only its start */
	struct pusher *pusher; /* --push, --otlp */
	uint64_t start_ns;
	int64_t start_epoch_ns;                 /* wall clock at start, for pprof's time_nanos */
	int64_t since_epoch_ns, until_epoch_ns; /* --since/--until as wall-clock times */
	uint64_t elapsed_ns;
	size_t running_at_start; /* -p's children and --comm's processes found at the start */
	double setup_cpu;        /* seconds of our CPU before sampling began */
	bool failed;             /* a step after the start failed: exit non-zero */
	FILE *raw;               /* PYEBPF_RAW_OUT: every record as it came, for bench/replay */
};

static volatile sig_atomic_t exiting;
static volatile sig_atomic_t flush_now; /* SIGHUP in continuous mode */
/* The temporary output file, for the second-Ctrl-C handler. */
static char abort_path[PATH_MAX];
static struct outfile *cleanup_out;

static void on_signal(int sig)
{
	(void)sig;
	if (exiting) { /* second Ctrl-C: leave at once, and leave nothing behind */
		if (abort_path[0])
			unlink(abort_path);
		_exit(130);
	}
	exiting = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	flush_now = 1;
}

static void die_cleanup(void)
{
	if (cleanup_out)
		outfile__abort(cleanup_out);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct recorder *r = ctx;

	if (r->raw) { /* bench/replay.c reads these back: a u32 size, the bytes */
		uint32_t n = (uint32_t)size;

		if (fwrite(&n, sizeof(n), 1, r->raw) != 1 || fwrite(data, 1, size, r->raw) != size) {
			err_msg("PYEBPF_RAW_OUT: %s", strerror(errno));
			fclose(r->raw);
			r->raw = NULL;
		}
	}
	return ingest__event(r->ingest, data, size);
}

/* ---- steps -------------------------------------------------------------- */

/* Everything that can be checked before sampling, is. */
static int preflight(struct recorder *r)
{
	const struct record_opts *o = &r->opts;

	if (!preflight_privileged()) {
		err_msg("needs root, or CAP_BPF and CAP_PERFMON (try: sudo pyebpf record ...)");
		return -1;
	}
	if (preflight_targets(o->pids, o->npids) || preflight_cgroups(o, &r->cgroup_ids, &r->ncgroup_ids, &r->watch) ||
	    preflight_rate(o->freq))
		return -1;
	if (o->continuous ? preflight_dir(o->continuous) : outfile__open(&r->out, o->output))
		return -1;
	if (o->push.nendpoints && !(r->pusher = record_push__start(o, &r->iv)))
		return -1;
	snprintf(abort_path, sizeof(abort_path), "%s", r->out.tmp);
	cleanup_out = &r->out;
	set_die_cleanup(die_cleanup);
	return 0;
}

/* Kernel stacks are taken unless no filter would keep them. A memory
 * sample's would be the page fault's path, the same every time: none. */
static bool record_kernel(const struct record_opts *o)
{
	return !o->filter.no_kernel && !o->filter.python_only && o->mode != MODE_MEMORY;
}

static bool off_cpu_mode(const struct record_opts *o)
{
	return o->mode == MODE_WALL || o->mode == MODE_OFFCPU;
}

/* An interval written: its samples and requests go, memory still held keeps its own. */
static void clear_interval(void *ingest)
{
	ingest__clear_samples(ingest);
}

static int open_and_load(struct recorder *r)
{
	const struct record_opts *o = &r->opts;
	struct sampler_config sc = {
		.all = o->all,
		.follow_forks = (o->cmd || o->npids) && !o->no_children,
		.comms = record_targets__by_comm(o) ? o->filter.comms : NULL,
		.ncomms = record_targets__by_comm(o) ? o->filter.ncomms : 0,
		.kernel_stacks = record_kernel(o),
		.ustack_copy = o->native ? o->stack_size : 0,
		.cgroup_ids = r->cgroup_ids,
		.ncgroup_ids = r->ncgroup_ids,
		.verbose = o->verbose,
		.freq = o->freq,
		.on_cpu = o->mode == MODE_CPU || o->mode == MODE_WALL,
		.off_cpu = off_cpu_mode(o),
		.mem_sample_bytes = o->mode == MODE_MEMORY ? o->mem_sample_bytes : 0,
	};
	struct ingest_config ic = {
		.filter = &o->filter,
		.native = o->native,
		.kallsyms = record_kernel(o) ? "/proc/kallsyms" : NULL,
		/* Read only if a kernel frame is to be named (a busy Python
		 * process may never show one), in a thread: a Python process
		 * starting then (its first sample in execve) is registered at once,
		 * not after the 60-250 ms the kernel takes to format the file. */
		.kernel_frames_later = true,
		.debug_dirs = (const char *const *)o->debug_dirs,
		.task_period_ns = o->mode == MODE_WALL && !o->no_tasks ? 1000000000ULL / o->freq : 0,
		.running_tasks = !o->no_tasks && o->mode != MODE_MEMORY,
		.memory = o->mode == MODE_MEMORY,
		.requests = !o->no_requests,
		.context_label = o->context_label,
	};
	/* For the replay benchmark (bench/replay.sh): a new file, never one that exists. */
	const char *raw_out = getenv("PYEBPF_RAW_OUT");
	struct ingest_hooks hooks;
	long running;

	/* BPF first: a refused load is the one error line, before any other work. */
	r->sampler = sampler__new(&sc, on_event, r);
	if (!r->sampler)
		return -1;
	r->prof = profile__new();
	profile__meta(r->prof)->wall = off_cpu_mode(o); /* every interval's too */
	profile__meta(r->prof)->mem_sample_bytes = o->mode == MODE_MEMORY ? o->mem_sample_bytes : 0;
	hooks = record_targets__hooks(r->sampler);
	r->ingest = ingest__new(r->prof, &ic, &hooks);
	r->iv.clear = clear_interval;
	r->iv.clear_ctx = r->ingest;
	if (raw_out && !(r->raw = fopen(raw_out, "wxe"))) {
		err_msg("PYEBPF_RAW_OUT %s: %s", raw_out, strerror(errno));
		return -1;
	}
	running = record_targets__add(r->sampler, r->ingest, o);
	if (running < 0)
		return -1;
	r->running_at_start = (size_t)running;
	if (o->cmd && (child__spawn(&r->child, o->cmd) || sampler__add_target(r->sampler, (uint32_t)r->child.pid)))
		return -1;
	return 0;
}

/* SIGHUP writes the interval so far in continuous mode; in a one-shot
 * recording (its terminal went away) it stops and writes, as SIGINT does. */
static void catch_signals(bool continuous)
{
	struct sigaction sa = { .sa_handler = on_signal }, hup = { .sa_handler = on_hup };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, continuous ? &hup : &sa, NULL);
}

static const char *const mode_note[] = {
	[MODE_CPU] = "",
	[MODE_WALL] = ", wall clock: on and off the CPU",
	[MODE_OFFCPU] = ", off the CPU only",
	[MODE_MEMORY] = "",
};

/* Containers are the only targets, so their exit is the recording's end (as -p's
 * is); a --continuous recording waits for them, and other targets go on. */
static bool containers_end(const struct record_opts *o)
{
	return !o->continuous && !o->npids && !o->cmd && !o->filter.ncomms && !o->ncgroups && !o->npods;
}

static int start(struct recorder *r)
{
	char size[32];

	if (sampler__start(r->sampler, r->opts.freq))
		return -1;
	r->start_ns = now_ns();
	if (r->watch)
		container_watch__begin(r->watch, r->start_ns, containers_end(&r->opts));
	r->start_epoch_ns = epoch_now_ns();
	r->setup_cpu = own_cpu_seconds();
	intervals__begin(&r->iv, r->start_ns);
	ingest__set_time_base(r->ingest, r->start_ns);
	/* Offsets and wall-clock bounds become one window, seen from each
	 * interval's start (continuous mode times samples from there). */
	filter__window(&r->opts.filter, r->start_epoch_ns, &r->since_epoch_ns, &r->until_epoch_ns);
	r->opts.filter = filter__for_window(&r->opts.filter, r->start_epoch_ns, r->since_epoch_ns, r->until_epoch_ns);
	if (r->opts.cmd && child__release(&r->child, r->opts.cmd[0]))
		return -1;
	if (r->opts.mode == MODE_MEMORY)
		fprintf(stderr, "pyebpf: sampling memory growth, a sample every %s on average%s\n",
			human_bytes(r->opts.mem_sample_bytes, size, sizeof(size)),
			r->opts.duration > 0 || r->opts.cmd ? "" : "; Ctrl-C to stop");
	else
		fprintf(stderr, "pyebpf: sampling %d CPUs at %llu Hz%s%s\n", sampler__ncpus(r->sampler),
			(unsigned long long)r->opts.freq, mode_note[r->opts.mode],
			r->opts.duration > 0 || r->opts.cmd ? "" : "; Ctrl-C to stop");
	record_targets__note(stderr, &r->opts, r->running_at_start);
	if (r->opts.mode == MODE_MEMORY && !strcmp(sampler__mem_hook(r->sampler), "mm_lru_insertion"))
		fprintf(stderr, "pyebpf: this kernel refuses fentry: memory growth is seen as pages join the LRU "
				"lists (tracepoint mm_lru_insertion), a few pages late at times\n");
	const char *notes[3];
	for (int i = 0, n = kernel_plan_notes(sampler__plan(r->sampler), off_cpu_mode(&r->opts), notes); i < n; i++)
		fprintf(stderr, "pyebpf: %s\n", notes[i]);
	return 0;
}

static void summary_of(struct recorder *r, uint64_t now, uint64_t *counters, struct record_summary *s)
{
	sampler__counters(r->sampler, counters);
	*s = (struct record_summary){
		.elapsed_ns = now - r->start_ns,
		.freq = r->opts.freq,
		.ncpus = sampler__ncpus(r->sampler),
		.cpu_seconds = own_cpu_seconds() - r->setup_cpu,
		.counters = counters,
		.ingest = r->ingest,
		.off_cpu = off_cpu_mode(&r->opts),
		.mem_sample_bytes = r->opts.mode == MODE_MEMORY ? r->opts.mem_sample_bytes : 0,
		.prof = r->prof,
	};
	sampler__switch_stats(r->sampler, &s->switches, &s->switch_bpf_ns);
	s->timer_stats = !sampler__sample_runs(r->sampler, &s->timer_runs, &s->timer_run_ns);
	s->mem_stats = s->mem_sample_bytes && !sampler__mem_runs(r->sampler, &s->mem_runs, &s->mem_run_ns);
}

/* --rate-limit: halve the frequency when our CPU over the interval was above the limit. */
static void rate_limit(struct recorder *r, uint64_t now)
{
	double share = intervals__cpu_share(&r->iv, now);
	uint64_t was = r->opts.freq;
	char note[256];

	if (!r->opts.rate_limit || share <= r->opts.rate_limit || was <= 1)
		return;
	r->opts.freq = was / 2;
	if (sampler__start(r->sampler, r->opts.freq)) {
		r->failed = true;
		exiting = 1;
		return;
	}
	snprintf(note, sizeof(note),
		 "pyebpf lowered sampling from %llu Hz to %llu Hz: it used %.2f%% of a core, above --rate-limit %g%%",
		 (unsigned long long)was, (unsigned long long)r->opts.freq, share, r->opts.rate_limit);
	fprintf(stderr, "pyebpf: %s\n", note + strlen("pyebpf "));
	profile__add_comment(r->prof, note); /* into the next interval's file */
}

static void next_interval(struct recorder *r, uint64_t now)
{
	ingest__name_waiting(r->ingest, true); /* the interval's own samples, in its file */
	ingest__mem_held(r->ingest);           /* memory mode: what is held at its end, in it too */
	intervals__write(&r->iv, r->prof, r->opts.freq, now);
	rate_limit(r, now);
	intervals__begin(&r->iv, now);
	ingest__set_time_base(r->ingest, now);
	r->opts.filter = filter__for_window(&r->opts.filter, r->iv.epoch_ns, r->since_epoch_ns, r->until_epoch_ns);
}

/* --container: a restarted or recreated container's new cgroup into the targets, and a line
 * for each going and coming (the status line cleared first: it has no newline). */
static void follow_containers(struct recorder *r, uint64_t now, bool tty)
{
	size_t n;
	const struct container_event *ev = record_targets__follow(r->sampler, r->watch, now, &n);

	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%spyebpf: %s\n", tty ? "\r\033[K" : "", ev[i].line);
}

/* Why to stop, other than a signal: -d elapsed, the command or every -p process ended, every
 * --container exited. */
static bool done(struct recorder *r, uint64_t now)
{
	const struct record_opts *o = &r->opts;

	if (o->duration > 0 && now - r->start_ns >= (uint64_t)(o->duration * 1e9))
		return true;
	if (r->opts.cmd && child__exited(&r->child))
		return true;
	if (r->watch && container_watch__ended(r->watch))
		return true;
	if (!o->npids || targets_alive(o->pids, o->npids))
		return false;
	/* The processes they started, followed, may outlive them (a daemon's fork). */
	return o->no_children || !sampler__targets_alive(r->sampler);
}

static int poll_loop(struct recorder *r)
{
	bool tty = isatty(STDERR_FILENO);
	uint64_t last_status = 0, counters[PYEBPF_CNT__COUNT];
	struct record_summary s;
	bool looking = false;

	while (!exiting) {
		uint64_t now;

		if (sampler__poll(r->sampler, looking ? REQUEST_LOOK_EVERY_MS : POLL_MS))
			return -1;
		looking = ingest__look_for_requests(r->ingest);
		now = now_ns();
		if (r->watch)
			follow_containers(r, now, tty);
		if (done(r, now))
			break;
		ingest__gc(r->ingest, now);
		ingest__tasks_tick(r->ingest, now);
		if (r->opts.continuous && (flush_now || intervals__due(&r->iv, now))) {
			flush_now = 0;
			next_interval(r, now);
		}
		if (tty && now - last_status >= STATUS_INTERVAL_NS) {
			summary_of(r, now, counters, &s);
			summary_status(stderr, &s, false);
			last_status = now;
		}
	}
	if (tty)
		fputs("\r\033[K", stderr);
	return 0;
}

/* How long a command that outlives the recording gets to exit after SIGTERM. */
#define CHILD_GRACE_MS 2000

/* No new samples, then everything still in the ring buffer, then the
 * summary; a command still running is stopped (never left behind).
 * Returns the exit status the command's end asks for. */
static int stop(struct recorder *r)
{
	uint64_t counters[PYEBPF_CNT__COUNT];
	struct record_summary s;
	char line[512];
	int status = 0;

	/* The stop flush sends every thread still off the CPU with its kernel
	 * stack at once (10,000 blocked threads: 10,000 samples). Still within
	 * the recording: what is sampled meanwhile is in its time. */
	if (off_cpu_mode(&r->opts) && record_kernel(&r->opts))
		ingest__kernel_symbols(r->ingest);
	r->elapsed_ns = now_ns() - r->start_ns;
	ingest__tasks_tick(r->ingest, r->start_ns + r->elapsed_ns); /* the ticks since the last poll */
	sampler__stop(r->sampler);
	sampler__drain(r->sampler);
	ingest__name_waiting(r->ingest, true);
	summary_of(r, r->start_ns + r->elapsed_ns, counters, &s);
	summary_print(stderr, &s);
	summary_tasks(stderr, ingest__task_stats(r->ingest), r->opts.freq);
	/* CPU time of a target that only waited is nothing: say where its time went. */
	if (r->opts.mode == MODE_CPU && !r->opts.all && !ingest__stats(r->ingest)->samples)
		fprintf(stderr, "pyebpf: the targets never ran on a CPU while sampled: to see where a waiting "
				"process spends its time, record with --mode wall\n");
	if (r->opts.cmd) {
		child__stop(&r->child, CHILD_GRACE_MS);
		status = child__outcome(&r->child, r->opts.cmd[0], line, sizeof(line));
		if (line[0])
			fprintf(stderr, "pyebpf: %s\n", line);
	}
	return status;
}

/*
 * Task time is not thread time (20 tasks pending for 1 s are 20 s of it):
 * pprof keeps the two apart by sample type; any other output holds one,
 * the threads' time or, with --tasks, the tasks' alone. A flame graph of
 * both read an asyncio program's busy function at a quarter of its wall
 * time. NULL: p holds no other kind of time, write it as it is.
 */
static struct profile *one_kind_of_time(const struct profile *p, enum output_format format, bool tasks)
{
	struct filter f;
	struct profile *out = NULL;
	uint64_t other, dropped;

	if (format == FORMAT_PPROF)
		return NULL;
	filter__init(&f);
	f.time_kind = tasks ? FILTER_TIME_TASKS : FILTER_TIME_THREADS;
	other = filter__other_time(&f, p);
	if (other) {
		out = filter__apply(&f, p, &dropped);
		fprintf(stderr, "pyebpf: %llu samples of %s left out of this output (%s)\n", (unsigned long long)other,
			tasks ? "the threads' time" : "asyncio task time",
			tasks ? "--tasks writes task time alone"
			      : "a .pb.gz keeps both apart; --tasks writes it alone");
	}
	filter__free(&f);
	return out;
}

/* A memory profile's outputs but pprof show one of its six values; NULL for pprof. */
static struct profile *one_kind_of_memory(const struct profile *p, enum output_format format, enum mem_value v)
{
	if (format == FORMAT_PPROF)
		return NULL;
	fprintf(stderr, "pyebpf: this output shows %s (--sample-type; a .pb.gz keeps all six)\n", mem_value_name(v));
	return mem_view(p, v);
}

static int write_output(struct recorder *r)
{
	char title[64];
	struct write_opts wo = { .threads = r->opts.threads,
				 .processes = r->opts.processes,
				 .containers = r->opts.containers,
				 .by = r->opts.by,
				 .title = "pyebpf record" };

	/* A memory recording's title says which of its values it shows. */
	if (r->opts.mode == MODE_MEMORY) {
		snprintf(title, sizeof(title), "pyebpf record: %s",
			 mem_value_name((enum mem_value)r->opts.sample_type));
		wo.title = title;
	}
	struct profile_meta *m = profile__meta(r->prof);

	ingest__mem_held(r->ingest); /* memory mode: what is held at the end */
	if (r->opts.continuous) {
		/* The last interval too: nothing recorded is lost on stop. */
		intervals__write(&r->iv, r->prof, r->opts.freq, now_ns());
		fprintf(stderr, "pyebpf: wrote %llu interval files to %s", (unsigned long long)r->iv.files_written,
			r->opts.continuous);
		if (r->iv.write_failures)
			fprintf(stderr, " (%llu could not be written)", (unsigned long long)r->iv.write_failures);
		fputc('\n', stderr);
		record_push__finish(r->pusher, &r->iv, r->opts.continuous);
		/* Some intervals lost is said above; none kept at all is a failure. */
		return r->iv.files_written || !r->iv.write_failures ? 0 : -1;
	}
	m->period_ns = 1000000000ULL / r->opts.freq;
	m->start_epoch_ns = r->start_epoch_ns;
	m->duration_ns = (int64_t)r->elapsed_ns;
	FILE *f = outfile__file(&r->out);
	struct profile *own = r->opts.mode == MODE_MEMORY
				      ? one_kind_of_memory(r->prof, r->opts.format, (enum mem_value)r->opts.sample_type)
				      : one_kind_of_time(r->prof, r->opts.format, r->opts.tasks);
	int failed;

	if (!f) {
		profile__free(own);
		return -1;
	}
	failed = write_profile(own ? own : r->prof, r->opts.format, &wo, f);
	size_t nstacks = profile__nstacks(own ? own : r->prof);
	profile__free(own);
	if (failed) {
		err_msg("cannot write '%s': %s", r->opts.output, strerror(errno));
		return -1;
	}
	if (outfile__commit(&r->out))
		return -1;
	fprintf(stderr, "pyebpf: wrote %s (%zu stacks)\n", r->opts.output, nstacks);
	return 0;
}

static void recorder_free(struct recorder *r)
{
	pusher__free(r->pusher);
	sampler__free(r->sampler);
	if (r->raw && fclose(r->raw))
		err_msg("PYEBPF_RAW_OUT: %s", strerror(errno));
	ingest__free(r->ingest);
	profile__free(r->prof);
	free(r->cgroup_ids);
	container_watch__free(r->watch);
	outfile__abort(&r->out);
	record_args__free(&r->opts);
	cleanup_out = NULL;
}

/*
 * glibc raises its mmap threshold to the largest block freed (up to 32 MiB),
 * and its trim threshold to twice that: once libbpf freed the kernel's BTF
 * (5.5 MB, read twice while loading), every later block below that size came
 * from the heap, and what was freed of it stayed resident (16 MB of heap in
 * a 5 s recording of a machine building software). At the default, fixed,
 * large blocks are mapped and unmapped whole.
 */
static void lean_malloc(void)
{
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
}

int record_main(int argc, char **argv)
{
	struct recorder r = { .child = { .go_w = -1, .err_r = -1 } };
	int ret = 1, perr, child_status;

	lean_malloc();
	perr = record_args__parse(argc, argv, &r.opts);
	if (perr)
		return perr > 0 ? 0 : 2;
	r.iv = (struct intervals){
		.dir = r.opts.continuous,
		.seconds = r.opts.interval,
		.keep = r.opts.keep,
		.max_disk = r.opts.max_disk,
		.log = !isatty(STDERR_FILENO),
	};
	if (preflight(&r))
		goto out;
	catch_signals(r.opts.continuous != NULL);
	if (open_and_load(&r) || start(&r) || poll_loop(&r))
		goto out;
	child_status = stop(&r);
	/* Written even when a step failed on the way: nothing recorded is lost.
	 * A command that failed makes pyebpf fail the same way, as time(1) does. */
	if (!write_output(&r) && !r.failed)
		ret = child_status;
out:
	if (ret)
		child__kill(&r.child);
	recorder_free(&r);
	return ret;
}
