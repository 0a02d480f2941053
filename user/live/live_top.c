// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `pyebpf top`: record's open → configure → load → attach → poll → stop,
 * with the poll loop turning every second's samples into the live table
 * (live_table.c) and drawing it (live_screen.c), or, without a terminal or
 * with --once, printing one table at the end. One thread: the screen is
 * redrawn from the loop that polls the ring buffer.
 */
#include "live/live_top.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/ingest.h"
#include "live/live_format.h"
#include "live/live_screen.h"
#include "live/live_table.h"
#include "live/live_top_args.h"
#include "profile/filter.h"
#include "record/preflight.h"
#include "record/record_targets.h"
#include "record/request_labels.h"
#include "profile/profile.h"
#include "record/sampler.h"
#include "record/summary.h"
#include "base/util.h"
#include "write/by_table.h"

#define POLL_MS 50            /* keys and the clock are looked at this often */
#define TICK_NS 1000000000ULL /* the table's interval */
#define LINE_MAX_BYTES (64 * 1024)

struct top {
	struct live_top_opts o;
	uint64_t *cgroup_ids;
	size_t ncgroup_ids;
	struct container_watch *watch; /* --container: each followed across restarts, waited for when gone */
	struct sampler *sampler;
	struct profile *prof; /* the current interval's samples, cleared at each tick */
	/* --by: the table of the label's values, the last second's on the
	 * screen (by_text, made at each tick); with --once the whole run's
	 * samples (by_all), bounded by the run as record's are. */
	char *by_text;
	struct profile *by_all;
	struct filter keep_all;
	struct ingest *ingest;
	struct live_table *table;
	struct live_view view;
	bool screen, paused;
	bool targets_gone;          /* stopped because every -p process exited */
	uint64_t start_ns, tick_ns; /* the start; the last tick */
	double tick_cpu;            /* own CPU at the last tick */
	double setup_cpu;           /* own CPU before sampling began */
	uint64_t tick_bpf_ns;       /* BPF time at the last tick */
	struct live_status st;
	char targets[512];
	char note[sizeof(((struct container_event *)0)->line)]; /* on the screen: a container's last going or coming */
	uint64_t note_until_ns;                                 /* 0: shown until the next one */
};

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	if (exiting) { /* a second Ctrl-C: leave at once, the terminal put back */
		live_screen__restore_now();
		_exit(130);
	}
	exiting = 1;
}

static int on_event(void *ctx, void *data, size_t size)
{
	return ingest__event(((struct top *)ctx)->ingest, data, size);
}

static void describe_targets(struct top *t)
{
	const struct record_opts *o = &t->o.rec;
	size_t len = 0;

	t->targets[0] = '\0';
#define ADD(...) \
	len += (size_t)snprintf(t->targets + len, len < sizeof(t->targets) ? sizeof(t->targets) - len : 0, __VA_ARGS__)
	for (size_t i = 0; i < o->npids && len < sizeof(t->targets); i++)
		ADD("%s%u", i ? "," : "-p ", o->pids[i]);
	for (size_t i = 0; i < o->filter.ncomms && len < sizeof(t->targets); i++)
		ADD("%s--comm %s", len ? " " : "", o->filter.comms[i]);
	for (size_t i = 0; i < o->ncontainers && len < sizeof(t->targets); i++)
		ADD("%s--container %s", len ? " " : "", o->container_ids[i]);
	for (size_t i = 0; i < o->ncgroups && len < sizeof(t->targets); i++)
		ADD("%s--cgroup %s", len ? " " : "", o->cgroups[i]);
	if (!len)
		ADD("all processes");
#undef ADD
}

static int preflight(struct top *t)
{
	const struct record_opts *o = &t->o.rec;

	if (!preflight_privileged()) {
		err_msg("needs root, or CAP_BPF and CAP_PERFMON (try: sudo pyebpf top ...)");
		return -1;
	}
	if (preflight_targets(o->pids, o->npids) || preflight_cgroups(o, &t->cgroup_ids, &t->ncgroup_ids, &t->watch))
		return -1;
	return preflight_rate(o->freq);
}

/* --mode memory: the bytes of growth a sample stands for, shown in their
 * place; 0 in the other modes. */
static uint64_t mem_sample_bytes(const struct top *t)
{
	return t->o.rec.mode == MODE_MEMORY ? t->o.rec.mem_sample_bytes : 0;
}

static int open_and_load(struct top *t)
{
	const struct record_opts *o = &t->o.rec;
	bool kernel = !o->filter.no_kernel && !o->filter.python_only && o->mode != MODE_MEMORY;
	struct sampler_config sc = {
		.all = o->all,
		.follow_forks = o->npids && !o->no_children,
		.comms = record_targets__by_comm(o) ? o->filter.comms : NULL,
		.ncomms = record_targets__by_comm(o) ? o->filter.ncomms : 0,
		.kernel_stacks = kernel,
		.cgroup_ids = t->cgroup_ids,
		.ncgroup_ids = t->ncgroup_ids,
		.verbose = o->verbose,
		.freq = o->freq, /* the ring buffer sized to the rate, as record's */
		.on_cpu = o->mode == MODE_CPU || o->mode == MODE_WALL,
		.off_cpu = o->mode == MODE_WALL || o->mode == MODE_OFFCPU,
		/* --mode memory: the table's shares are of the memory that grew */
		.mem_sample_bytes = mem_sample_bytes(t),
	};
	struct ingest_config ic = {
		.filter = &o->filter,
		.kallsyms = kernel ? "/proc/kallsyms" : NULL,
		.memory = o->mode == MODE_MEMORY, /* the summary of --once says what grew and is held */
		/* Only when asked for: each request's ids stay in the profile's
		 * tables until it is freed (docs/requests.md), and top runs for
		 * as long as it is looked at. */
		.requests = !o->no_requests && (t->o.by || o->filter.nlabels || o->filter.trace_id),
		.context_label = o->context_label,
	};
	struct ingest_hooks hooks;

	t->sampler = sampler__new(&sc, on_event, t);
	if (!t->sampler)
		return -1;
	t->prof = profile__new();
	profile__meta(t->prof)->wall = o->mode == MODE_WALL || o->mode == MODE_OFFCPU;
	profile__meta(t->prof)->period_ns = 1000000000ULL / o->freq;
	if (t->o.by && !t->screen) {
		t->by_all = profile__new();
		*profile__meta(t->by_all) = *profile__meta_of(t->prof);
		filter__init(&t->keep_all);
	}
	hooks = record_targets__hooks(t->sampler);
	t->ingest = ingest__new(t->prof, &ic, &hooks);
	t->table = live_table__new();
	return record_targets__add(t->sampler, t->ingest, o) < 0 ? -1 : 0;
}

static const char *const mode_name[] = {
	[MODE_CPU] = "cpu", [MODE_WALL] = "wall", [MODE_OFFCPU] = "off-cpu", [MODE_MEMORY] = "memory"
};

/* BPF's time so far: the timer program's samples, and the switch hooks' in
 * wall mode; memory mode's samples (its hook's other runs only with
 * PYEBPF_BPF_STATS=1, then all of them). */
static uint64_t bpf_ns(struct top *t, const uint64_t *counters)
{
	uint64_t runs = 0, ns = 0;

	if (t->o.rec.mode == MODE_WALL || t->o.rec.mode == MODE_OFFCPU)
		sampler__switch_stats(t->sampler, &runs, &ns);
	if (t->o.rec.mode == MODE_MEMORY)
		return sampler__mem_runs(t->sampler, &runs, &ns) ? counters[PYEBPF_CNT_MEM_TAKEN_NS] : ns;
	return counters[PYEBPF_CNT_TAKEN_NS] + ns;
}

/* --by on the screen: the last second's table of the label's values. */
static void by_text(struct top *t)
{
	size_t len = 0;
	FILE *f;

	free(t->by_text);
	t->by_text = NULL;
	f = open_memstream(&t->by_text, &len);
	if (!f)
		return;
	if (by_table__print(t->prof, t->o.by, 200, f))
		fprintf(f, "(the table could not be made: %s)\n", strerror(errno));
	fclose(f);
}

/* A second is over: its samples into the table, the status's numbers. */
static void tick(struct top *t, uint64_t now)
{
	uint64_t counters[PYEBPF_CNT__COUNT], bpf;
	double cpu = own_cpu_seconds(), secs = (double)(now - t->tick_ns) / 1e9;
	struct live_view all = { 0 };
	struct live_totals tot;
	size_t n;

	live_table__add(t->table, t->prof);
	if (t->by_all)
		filter__copy(&t->keep_all, t->prof, t->by_all, 0, 1, 0);
	else if (t->o.by)
		by_text(t);
	ingest__clear_samples(t->ingest);
	/* The ledger's sites (a stack and its labels each, tids among them)
	 * would grow with every thread that ever grew memory: top shows no
	 * held memory, so the empty ones go at each tick. */
	ingest__mem_tidy(t->ingest);
	free(live_table__view(t->table, &all, &n, &tot));
	sampler__counters(t->sampler, counters);
	bpf = bpf_ns(t, counters);
	t->st = (struct live_status){
		.targets = t->targets,
		.mode = mode_name[t->o.rec.mode],
		.freq = t->o.rec.freq,
		.ncpus = sampler__ncpus(t->sampler),
		.elapsed_s = (double)(now - t->start_ns) / 1e9,
		.samples = tot.all,
		.samples_now = tot.now,
		.interval_s = secs,
		.lost = summary_lost(counters),
		.own_cpu_pct = secs > 0 ? 100.0 * (cpu - t->tick_cpu) / secs : 0.0,
		.bpf_pct = secs > 0 && sampler__ncpus(t->sampler) > 0
				   ? 100.0 * (double)(bpf - t->tick_bpf_ns) / 1e9 / secs / sampler__ncpus(t->sampler)
				   : -1,
		.paused = t->paused,
		.mem_sample_bytes = mem_sample_bytes(t),
	};
	t->tick_ns = now;
	t->tick_cpu = cpu;
	t->tick_bpf_ns = bpf;
}

/* A screen begun, its size in *rows and *cols, the status on its first line. */
static void begin_screen(struct top *t, char *line, size_t size, int *rows, int *cols)
{
	live_screen__size(rows, cols);
	t->st.paused = t->paused;
	t->st.note = t->note;
	live_screen__begin();
	live_format_status(&t->st, line, size);
	live_screen__line(0, line, LIVE_BOLD);
}

/* --by on the screen: the status, then the last second's table of values. */
static void draw_by(struct top *t)
{
	static char line[LINE_MAX_BYTES];
	int rows, cols, y = 0;
	const char *at = t->by_text;

	begin_screen(t, line, sizeof(line), &rows, &cols);
	y++;
	snprintf(line, sizeof(line), "by %s, the last second (space pause, q quit)", t->o.by);
	live_screen__line(y++, line, LIVE_NORMAL);
	y++;
	if (!at || !*at)
		live_screen__line(y++, "(sampling: the first numbers come in a second)", LIVE_NORMAL);
	for (bool header = true; at && *at && y < rows; header = false) {
		size_t n = strcspn(at, "\n");

		snprintf(line, sizeof(line), "%.*s", (int)n, at);
		live_screen__line(y++, line, header ? LIVE_REVERSE : LIVE_NORMAL);
		at += n + (at[n] == '\n');
	}
	live_screen__end();
}

static void draw(struct top *t)
{
	static char line[LINE_MAX_BYTES];
	int rows, cols, y = 0;
	struct live_totals tot;
	size_t n, func_max;
	struct live_row *r = live_table__view(t->table, &t->view, &n, &tot);
	struct live_layout l = { .now = true,
				 .wall = live_table__wall(t->table),
				 .reasons = tot.reasons,
				 .split_all = t->view.since_start,
				 .interval_s = t->st.interval_s,
				 .mem_sample_bytes = mem_sample_bytes(t) };

	begin_screen(t, line, sizeof(line), &rows, &cols);
	y++;
	live_format_view(t->table, &t->view, line, sizeof(line));
	live_screen__line(y++, line, LIVE_NORMAL);
	live_screen__line(y++, live_keys_help, LIVE_NORMAL);
	y++;
	/* FUNCTION and FILE:LINE share what the numbers leave: the function up
	 * to half of it (and at most 60), the file the rest, its end kept. */
	live_format_header(&(struct live_layout){ .now = true,
						  .wall = l.wall,
						  .reasons = l.reasons,
						  .mem_sample_bytes = l.mem_sample_bytes },
			   line, sizeof(line));
	size_t prefix = strlen(line) - strlen("FUNCTION  FILE:LINE"),
	       room = (size_t)cols > prefix + 24 ? (size_t)cols - prefix - 2 : 22;

	func_max = room / 2 < 60 ? room / 2 : 60;
	l.func_width = live_func_width(r, n < (size_t)rows ? n : (size_t)rows, func_max);
	l.where_width = room - l.func_width;
	live_format_groups(&l, line, sizeof(line));
	live_screen__line(y++, line, LIVE_NORMAL);
	live_format_header(&l, line, sizeof(line));
	live_screen__line(y++, line, LIVE_REVERSE);
	if (!n)
		live_screen__line(y++,
				  live_table__intervals(t->table) ? "(no samples of these targets yet)"
								  : "(sampling: the first numbers come in a second)",
				  LIVE_NORMAL);
	for (size_t i = 0; i < n && y < rows; i++) {
		live_format_row(&l, &r[i], &tot, line, sizeof(line));
		live_screen__line(y++, line, LIVE_NORMAL);
	}
	live_screen__end();
	free(r);
}

/* A key: true when the screen needs drawing again. */
static bool key(struct top *t, int c)
{
	struct live_view *v = &t->view;

	switch (c) {
	case 'q':
	case 'Q':
		exiting = 1;
		return false;
	case 's':
		v->sort = LIVE_SORT_SELF;
		break;
	case 't':
		v->sort = LIVE_SORT_TOTAL;
		break;
	case 'a':
		v->since_start = !v->since_start;
		break;
	case 'l':
		v->by_line = !v->by_line;
		break;
	case 'p':
		v->pid = live_table__next_pid(t->table, v->pid);
		v->tid = 0;
		break;
	case 'h':
		v->tid = live_table__next_tid(t->table, v->pid, v->tid);
		break;
	case 'c':
		v->pid = v->tid = 0;
		break;
	case ' ':
		t->paused = !t->paused;
		break;
	case LIVE_KEY_RESIZE:
		break;
	default:
		return false;
	}
	return true;
}

static bool done(struct top *t, uint64_t now)
{
	const struct record_opts *o = &t->o.rec;

	if (o->duration > 0 && now - t->start_ns >= (uint64_t)(o->duration * 1e9))
		return true;
	if (!o->npids || targets_alive(o->pids, o->npids))
		return false;
	return o->no_children || !sampler__targets_alive(t->sampler);
}

/* How long the screen shows that a container came back. */
#define NOTE_NS (10 * 1000000000ULL)

/* --container: a restarted or recreated container's new cgroup into the targets. Its lines go to
 * stderr, or onto the screen's status line (a line on stderr would tear the screen); true: redraw. */
static bool follow_containers(struct top *t, uint64_t now)
{
	size_t n;
	const struct container_event *ev = record_targets__follow(t->sampler, t->watch, now, &n);

	for (size_t i = 0; i < n; i++) {
		if (!t->screen) {
			fprintf(stderr, "pyebpf: %s\n", ev[i].line);
			continue;
		}
		snprintf(t->note, sizeof(t->note), "%s", ev[i].line);
		t->note_until_ns = ev[i].kind == CONTAINER_STOPPED ? 0 : now + NOTE_NS;
	}
	if (t->note_until_ns && now >= t->note_until_ns) {
		t->note[0] = '\0';
		t->note_until_ns = 0;
		return true;
	}
	return n > 0;
}

static int poll_loop(struct top *t)
{
	bool looking = false;

	while (!exiting) {
		uint64_t now;
		bool redraw = false;
		int c;

		if (sampler__poll(t->sampler, looking ? REQUEST_LOOK_EVERY_MS : POLL_MS))
			return -1;
		looking = ingest__look_for_requests(t->ingest);
		now = now_ns();
		if (done(t, now)) {
			t->targets_gone = t->o.rec.duration <= 0 ||
					  now - t->start_ns < (uint64_t)(t->o.rec.duration * 1e9);
			break;
		}
		ingest__gc(t->ingest, now);
		if (t->watch)
			redraw |= follow_containers(t, now);
		if (now - t->tick_ns >= TICK_NS) {
			tick(t, now);
			redraw = !t->paused;
		}
		while (t->screen && (c = live_screen__key()) != LIVE_KEY_NONE)
			redraw |= key(t, c);
		if (t->screen && redraw && !exiting)
			t->o.by ? draw_by(t) : draw(t);
	}
	return 0;
}

/* --once, or no terminal: the since-start table, plain. */
static int print_table(struct top *t)
{
	if (t->by_all) {
		static char line[LINE_MAX_BYTES];

		live_format_status(&t->st, line, sizeof(line));
		printf("%s\n\n", line);
		if (by_table__print(t->by_all, t->o.by, t->o.rows, stdout) < 0 || stream_finish(stdout)) {
			err_msg("cannot write the table: %s", strerror(errno));
			return -1;
		}
		return 0;
	}
	static char line[LINE_MAX_BYTES];
	struct live_view v = { .since_start = true };
	struct live_totals tot;
	size_t n;
	struct live_row *r = live_table__view(t->table, &v, &n, &tot);
	struct live_layout l = {
		.wall = live_table__wall(t->table),
		.reasons = tot.reasons,
		.split_all = true,
		.mem_sample_bytes = mem_sample_bytes(t),
	};

	l.func_width = live_func_width(r, n < t->o.rows ? n : t->o.rows, 200);
	live_format_status(&t->st, line, sizeof(line));
	printf("%s\n\n", line);
	live_format_header(&l, line, sizeof(line));
	printf("%s\n", line);
	for (size_t i = 0; i < n && i < t->o.rows; i++) {
		live_format_row(&l, &r[i], &tot, line, sizeof(line));
		printf("%s\n", line);
	}
	if (n > t->o.rows)
		printf("(%zu more; --rows N shows more)\n", n - t->o.rows);
	free(r);
	if (stream_finish(stdout)) {
		err_msg("cannot write the table: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void stop(struct top *t)
{
	uint64_t counters[PYEBPF_CNT__COUNT], now;
	struct record_summary s;

	sampler__stop(t->sampler);
	sampler__drain(t->sampler);
	now = now_ns();
	/* The last part of a second counts too; a whole run's numbers for --once. */
	tick(t, now);
	sampler__counters(t->sampler, counters);
	/* The table of --once is the whole run: so are its rate and cost. */
	t->st.interval_s = t->st.elapsed_s;
	t->st.samples_now = t->st.samples;
	if (t->st.elapsed_s > 0) {
		t->st.own_cpu_pct = 100.0 * (own_cpu_seconds() - t->setup_cpu) / t->st.elapsed_s;
		if (t->st.ncpus > 0)
			t->st.bpf_pct = 100.0 * (double)bpf_ns(t, counters) / 1e9 / t->st.elapsed_s / t->st.ncpus;
	}
	s = (struct record_summary){
		.elapsed_ns = now - t->start_ns,
		.freq = t->o.rec.freq,
		.ncpus = sampler__ncpus(t->sampler),
		.cpu_seconds = own_cpu_seconds() - t->setup_cpu,
		.counters = counters,
		.ingest = t->ingest,
		.off_cpu = t->o.rec.mode == MODE_WALL || t->o.rec.mode == MODE_OFFCPU,
		.mem_sample_bytes = mem_sample_bytes(t),
		.prof = t->prof,
	};
	if (!t->screen)
		summary_print(stderr, &s);
}

static void top_free(struct top *t)
{
	live_screen__close();
	sampler__free(t->sampler);
	ingest__free(t->ingest);
	profile__free(t->prof);
	profile__free(t->by_all);
	free(t->by_text);
	live_table__free(t->table);
	free(t->cgroup_ids);
	container_watch__free(t->watch);
	live_top_args__free(&t->o);
}

int live_top_main(int argc, char **argv)
{
	struct top t = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	int perr = live_top_args__parse(argc, argv, &t.o), ret = 1;

	if (perr)
		return perr > 0 ? 0 : 2;
	t.screen = !t.o.once && isatty(STDOUT_FILENO);
	describe_targets(&t);
	if (preflight(&t))
		goto out;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (open_and_load(&t) || sampler__start(t.sampler, t.o.rec.freq))
		goto out;
	t.start_ns = t.tick_ns = now_ns();
	t.tick_cpu = t.setup_cpu = own_cpu_seconds();
	/* top waits for a container that is gone: a live view of one that comes back later. */
	if (t.watch)
		container_watch__begin(t.watch, t.start_ns, false);
	ingest__set_time_base(t.ingest, t.start_ns);
	if (!t.screen && t.o.rec.mode == MODE_MEMORY)
		fprintf(stderr, "pyebpf: sampling memory growth, a sample every %llu KiB on average; one table %s\n",
			(unsigned long long)(t.o.rec.mem_sample_bytes >> 10),
			t.o.rec.duration > 0 ? "at the end of -d" : "at Ctrl-C or the targets' exit");
	else if (!t.screen)
		fprintf(stderr, "pyebpf: sampling %d CPUs at %llu Hz; one table %s\n", sampler__ncpus(t.sampler),
			(unsigned long long)t.o.rec.freq,
			t.o.rec.duration > 0 ? "at the end of -d" : "at Ctrl-C or the targets' exit");
	else if (live_screen__open())
		goto out;
	else {
		t.st = (struct live_status){ .targets = t.targets,
					     .mode = mode_name[t.o.rec.mode],
					     .freq = t.o.rec.freq,
					     .ncpus = sampler__ncpus(t.sampler),
					     .bpf_pct = -1,
					     .mem_sample_bytes = mem_sample_bytes(&t) };
		t.o.by ? draw_by(&t) : draw(&t);
	}
	if (poll_loop(&t))
		goto out;
	live_screen__close();
	if (t.targets_gone)
		fprintf(stderr, "pyebpf: every target process exited\n");
	stop(&t);
	ret = t.screen ? 0 : print_table(&t) ? 1 : 0;
out:
	top_free(&t);
	return ret;
}
