/*
 * Python stacks against every installed interpreter (pyenv builds, Debian's
 * /usr/bin/python3.*): exact functions, lines, shares, depths and thread
 * names, from the real BPF walker.
 */
#include "integ.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../pythons.h"

#define WORKLOAD "../tests/fixtures/pywork.py"

static char script[PATH_MAX];
static struct python pys[32];
static int npys;

static void setup(void)
{
	npys = setup_pythons(WORKLOAD, script, pys, 32);
}

/* "func (script:LINE)" for a marker of the workload. */
static const char *pyframe(const char *func, const char *mark)
{
	return script_frame(script, func, mark);
}

/* What the workload of the last record_py() printed on stdout. */
static char *workload_out;

/* record [extra...] -- python pywork.py mode seconds, into f. */
static void record_py(const struct python *py, const char *mode, const char *seconds, const char *const extra[],
		      struct folded *f)
{
	const char *args[] = { mode, seconds, NULL };
	struct run_result r;

	record_script(extra, py->path, script, args, 60, f, &r);
	free(workload_out);
	workload_out = r.out;
	r.out = NULL;
	run_result_free(&r);
}

/* record_py for every interpreter, at_once of them at a time (integ.h):
 * each[i] and outs[i] (the workload's stdout; freed by the next call). */
static struct folded each[32];
static char *outs[32];

static void record_each(const char *mode, const char *seconds, const char *const extra[], int at_once)
{
	const char *args[] = { mode, seconds, NULL };

	for (int i = 0; i < 32; i++) {
		free(outs[i]);
		outs[i] = NULL;
	}
	record_pythons(extra, pys, npys, at_once, script, args, 60, each, outs);
}

TestSuite(python, .init = setup, .timeout = 600);

Test(python, cpu_split_between_functions)
{
	record_each("split", "3", NULL, AT_ONCE_SHARE);
	for (int i = 0; i < npys; i++) {
		struct folded f = each[i];

		uint64_t a = count_all(&f, pyframe("alpha", "alpha-call"), "work (");
		uint64_t b = count_all(&f, "beta (", "work (");
		double share = 100.0 * a / (a + b), truth;
		const char *m = outs[i] ? strstr(outs[i], "alpha-cpu-share ") : NULL;

		cr_assert(m && sscanf(m, "alpha-cpu-share %lf", &truth) == 1, "%s: workload printed no share: %s",
			  pys[i].path, outs[i] ? outs[i] : "");
		cr_log_info("%s: alpha %.1f%% of %llu samples, measured %.1f%%\n", pys[i].path, share,
			    (unsigned long long)(a + b), truth);
		cr_assert_geq(a + b, f.total * 8 / 10, "%s: only %llu of %llu samples in alpha/beta", pys[i].path,
			      (unsigned long long)(a + b), (unsigned long long)f.total);
		/*
		 * ~3000 samples at 999 Hz: one standard deviation of the sampled
		 * share is ~0.9 points, so 4 points is over 4 sigma.
		 */
		cr_assert(share > truth - 4 && share < truth + 4,
			  "%s: alpha has %.1f%% of %llu samples, measured %.1f%% CPU", pys[i].path, share,
			  (unsigned long long)(a + b), truth);
		folded_free(&f);
	}
}

/*
 * A program whose cycle is in step with the timer (3 ms then 7 ms of work,
 * every 10 ms, at 100 Hz): a fixed period caught it at one point every time
 * (tick_first 0% or 100% for 30%); the timers' jittered periods read it as
 * it is. Three interpreters (the oldest, one between, the newest): the
 * timer is the same for all.
 */
Test(python, a_cycle_in_step_with_the_timer_is_sampled_as_it_runs)
{
	const char *const extra[] = { "-F", "100", NULL };
	int picks[] = { 0, npys / 2, npys - 1 };

	for (int k = 0; k < 3; k++) {
		const struct python *py = &pys[picks[k]];
		struct folded f;
		double truth;

		record_py(py, "tick", "6", extra, &f);
		uint64_t a = count_all(&f, "tick_first (", NULL), b = count_all(&f, "tick_second (", NULL);
		const char *m = workload_out ? strstr(workload_out, "first-share ") : NULL;

		cr_assert(m && sscanf(m, "first-share %lf", &truth) == 1, "%s: workload printed no share", py->path);
		cr_assert_geq(a + b, 400, "%s: %llu samples in 6 s at 100 Hz", py->path, (unsigned long long)(a + b));
		double share = 100.0 * (double)a / (double)(a + b);

		cr_log_info("%s: tick_first %.1f%% of %llu samples, measured %.1f%%\n", py->path, share,
			    (unsigned long long)(a + b), truth);
		/* ~600 samples: one standard deviation is ~1.9 points; 8 is over 4. */
		cr_assert(share > truth - 8 && share < truth + 8,
			  "%s: tick_first has %.1f%% of %llu samples, measured %.1f%%", py->path, share,
			  (unsigned long long)(a + b), truth);
		folded_free(&f);
	}
}

Test(python, hot_line_and_call_sites)
{
	record_each("lines", "2", NULL, AT_ONCE_CPU);
	for (int i = 0; i < npys; i++) {
		struct folded f = each[i];

		char call[PATH_MAX + 64], at_hot[PATH_MAX + 64], at_for[PATH_MAX + 64];
		snprintf(call, sizeof(call), "%s", pyframe("lines", "hot-call"));
		snprintf(at_hot, sizeof(at_hot), "%s", pyframe("hot", "hot"));
		/* The loop's own line (FOR_ITER, STORE_FAST): 0.1-1.6% of hot() here. */
		snprintf(at_for, sizeof(at_for), "hot (%s:%d)", script, script_marker(script, "hot") - 1);
		uint64_t in_hot = count_all(&f, "hot (", NULL);
		uint64_t at_line = count_all(&f, at_hot, call);
		uint64_t at_loop = count_all(&f, at_for, call);
		cr_assert_geq(in_hot, f.total * 8 / 10, "%s: hot() in %llu of %llu", pys[i].path,
			      (unsigned long long)in_hot, (unsigned long long)f.total);
		if (at_line + at_loop < in_hot) {
			/* Name what read otherwise, so a failure says where it went. */
			for (size_t k = 0; k < f.n; k++)
				if (strstr(f.lines[k].stack, "hot (") &&
				    !(strstr(f.lines[k].stack, call) &&
				      (strstr(f.lines[k].stack, at_hot) || strstr(f.lines[k].stack, at_for))))
					cr_log_info("%s: hot() elsewhere: %.300s %llu\n", pys[i].path, f.lines[k].stack,
						    (unsigned long long)f.lines[k].count);
		}
		cr_assert_geq(at_line * 100, in_hot * 90,
			      "%s: %s under %s in %llu of %llu samples of hot() (%llu on its loop line)", pys[i].path,
			      at_hot, call, (unsigned long long)at_line, (unsigned long long)in_hot,
			      (unsigned long long)at_loop);
		folded_free(&f);
	}
}

Test(python, class_qualified_names)
{
	/* 3.11+ from co_qualname; before, derived from the source. */
	record_each("method", "1.5", NULL, AT_ONCE_CPU);
	for (int i = 0; i < npys; i++) {
		struct folded f = each[i];

		uint64_t hit = count_all(&f, pyframe("Worker.run_job", "step-call"), "Worker.step (");
		cr_assert_geq(hit, f.total * 8 / 10, "%s: Worker.run_job;Worker.step in %llu of %llu samples",
			      pys[i].path, (unsigned long long)hit, (unsigned long long)f.total);
		folded_free(&f);
	}
}

Test(python, recursion_1000_deep_is_recorded_whole)
{
	record_each("deep", "2", NULL, AT_ONCE_CPU);
	for (int i = 0; i < npys; i++) {
		struct folded f = each[i];
		uint64_t whole = 0;

		for (size_t k = 0; k < f.n; k++) {
			/* Python stacks are never cut (native fallbacks of samples without a
			 * Python frame may be: frame-pointer walks through the interpreter). */
			if (strstr(f.lines[k].stack, ".py:"))
				cr_assert_null(strstr(f.lines[k].stack, "[truncated]"), "%s: truncated", pys[i].path);
			if (occurrences(f.lines[k].stack, "recurse (") == 1000 &&
			    occurrences(f.lines[k].stack, pyframe("recurse", "recurse")) == 999)
				whole += f.lines[k].count;
		}
		cr_assert_geq(whole, f.total * 8 / 10, "%s: 1000 recurse frames in %llu of %llu samples", pys[i].path,
			      (unsigned long long)whole, (unsigned long long)f.total);
		folded_free(&f);
	}
}

Test(python, thread_names_and_exclusion)
{
	const char *threads[] = { "--threads", NULL };
	const char *exclude[] = { "--threads", "--exclude-thread", "monitor", NULL };
	const char *names[] = { "MainThread [tid ", "worker-0 [tid ", "worker-1 [tid ", "monitor [tid " };

	const char *args[] = { "threads", "2", NULL };
	struct folded f[32];

	record_pythons(threads, pys, npys, AT_ONCE_CPU, script, args, 60, f, NULL);
	for (int i = 0; i < npys; i++) {
		for (int k = 0; k < 4; k++)
			cr_assert_gt(count_all(&f[i], names[k], "spin ("), 10, "%s: no samples of %s", pys[i].path,
				     names[k]);
		folded_free(&f[i]);
	}
	record_pythons(exclude, pys, npys, AT_ONCE_CPU, script, args, 60, f, NULL);
	for (int i = 0; i < npys; i++) {
		cr_assert_eq(count_all(&f[i], "monitor [tid ", NULL), 0, "%s: monitor not excluded", pys[i].path);
		cr_assert_gt(count_all(&f[i], "worker-0 [tid ", "spin ("), 10, "%s: worker-0 gone too", pys[i].path);
		folded_free(&f[i]);
	}
}

Test(python, two_hundred_threads)
{
	const char *threads[] = { "--threads", NULL };

	/* Each with a core, as alone: the GIL hands itself to ~400 threads' turns a second. */
	record_each("many", "2", threads, AT_ONCE_SHARE);
	for (int i = 0; i < npys; i++) {
		struct folded f = each[i];
		char seen[256][32];
		int nseen = 0;

		for (size_t k = 0; k < f.n; k++) {
			const char *t = strstr(f.lines[k].stack, "[tid "), *end;
			if (!t || !strstr(f.lines[k].stack, "work (") || !(end = strchr(t, ']')))
				continue;
			char tid[32];
			snprintf(tid, sizeof(tid), "%.*s", (int)(end - t), t);
			int dup = 0;
			for (int j = 0; j < nseen && !dup; j++)
				dup = !strcmp(seen[j], tid);
			if (!dup && nseen < 256)
				strcpy(seen[nseen++], tid);
		}
		uint64_t py = count_all(&f, ".py:", NULL);
		cr_log_info("%s: %d threads with Python frames, %llu of %llu samples\n", pys[i].path, nseen,
			    (unsigned long long)py, (unsigned long long)f.total);
		cr_assert_geq(nseen, 100, "%s: Python frames from only %d threads", pys[i].path, nseen);
		cr_assert_geq(py * 100, f.total * 90, "%s: Python frames in %llu of %llu samples", pys[i].path,
			      (unsigned long long)py, (unsigned long long)f.total);
		folded_free(&f);
	}
}

/* report FILE [opts...] -o DIR/NAME, loaded into f. */
static void report_folded(const char *pb, const char *opt, const char *name, struct folded *f)
{
	char *out = temp_path(temp_dir(), name);
	struct run_result r;

	run((const char *const[]){ PYEBPF, "report", pb, "--threads", opt ? opt : "--threads", "-o", out, NULL }, 60,
	    &r);
	cr_assert_eq(r.status, 0, "report %s: %s", opt ? opt : "", r.err);
	folded_load(out, f);
	run_result_free(&r);
	free(out);
}

Test(python, gil_keeps_only_threads_holding_it)
{
	const char *gil[] = { "--threads", "--gil", NULL };

	for (int i = 0; i < npys; i++) {
		struct folded a, b;
		struct run_result r;
		char *pb = temp_path(temp_dir(), "gil.pb.gz");

		if (pys[i].free_threaded) { /* no GIL: --gil keeps nothing of it (README) */
			fprintf(stderr, "[SKIP] %s: a free-threaded build has no GIL\n", pys[i].path);
			free(pb);
			continue;
		}
		/* One recording read twice: the same samples with and without --gil,
		 * so what --gil keeps is the GIL's doing, not the machine's load. */
		run((const char *const[]){ PYEBPF, "record", "-F", "999", "-o", pb, "--", pys[i].path, script, "gil",
					   "2", NULL },
		    60, &r);
		cr_assert_eq(r.status, 0, "%s: %s", pys[i].path, r.err);
		run_result_free(&r);
		report_folded(pb, NULL, "plain.folded", &a);
		report_folded(pb, "--gil", "gil.folded", &b);
		uint64_t a_nogil = count_all(&a, "nogil [tid ", NULL), b_nogil = count_all(&b, "nogil [tid ", NULL);
		uint64_t a_spin = count_all(&a, "spinner [tid ", "spin (");
		uint64_t b_spin = count_all(&b, "spinner [tid ", "spin (");
		/* 2.7's GIL thrashes: a spinner waiting for it is on the CPU without it. */
		uint64_t want_spin = pys[i].major == 2 ? 50 : 80;
		cr_log_info("%s: nogil %llu/%llu without --gil, %llu/%llu with; spinner %llu, %llu\n", pys[i].path,
			    (unsigned long long)a_nogil, (unsigned long long)a.total, (unsigned long long)b_nogil,
			    (unsigned long long)b.total, (unsigned long long)a_spin, (unsigned long long)b_spin);
		cr_assert_geq(a_nogil * 100, a.total * 15, "%s: the thread reading /dev/zero barely ran", pys[i].path);
		cr_assert_leq(b_nogil * 100, b.total * 10,
			      "%s: --gil kept %llu of %llu samples of the thread without the GIL", pys[i].path,
			      (unsigned long long)b_nogil, (unsigned long long)b.total);
		/* The thread running Python holds the GIL: --gil keeps (nearly) all of it. */
		cr_assert_geq(b_spin * 100, a_spin * want_spin,
			      "%s: --gil kept %llu samples of the spinner, %llu without", pys[i].path,
			      (unsigned long long)b_spin, (unsigned long long)a_spin);
		folded_free(&a);
		folded_free(&b);
		free(pb);
	}
	/* record --gil applies the same rule as samples arrive. */
	struct python held[32];
	int n = 0;

	for (int i = 0; i < npys; i++)
		if (!pys[i].free_threaded)
			held[n++] = pys[i];
	record_pythons(gil, held, n, AT_ONCE_SHARE, script, (const char *const[]){ "gil", "2", NULL }, 60, each, NULL);
	for (int i = 0; i < n; i++) {
		struct folded live = each[i];
		uint64_t live_nogil = count_all(&live, "nogil [tid ", NULL);

		cr_assert_leq(live_nogil * 100, live.total * 10,
			      "%s: record --gil kept %llu of %llu samples without the GIL", held[i].path,
			      (unsigned long long)live_nogil, (unsigned long long)live.total);
		cr_assert_gt(count_all(&live, "spinner [tid ", "spin ("), 0, "%s: record --gil kept no spinner",
			     held[i].path);
		folded_free(&live);
	}
}

/*
 * Python thread names past the OS's 15 bytes, and one process frame for
 * every thread: 3.14+ copy each Python thread's name into its OS thread
 * name, which must not make each thread a process of its own.
 */
Test(python, long_thread_names_under_one_process_frame)
{
	const char *threads[] = { "--threads", NULL };

	record_each("longnames", "2", threads, AT_ONCE_CPU);
	for (int i = 0; i < npys; i++) {
		struct folded f = each[i];
		char comm[16];
		const char *b = strrchr(pys[i].path, '/') + 1;
		uint64_t other = 0;

		snprintf(comm, sizeof(comm), "%s", b); /* the kernel keeps 15 bytes */
		for (int t = 1; t <= 2; t++) {
			char who[64];

			snprintf(who, sizeof(who), "request-handler-number-%d [tid ", t);
			uint64_t n = count_all(&f, who, NULL);
			cr_assert_geq(n * 100, f.total * 20, "%s: %s in %llu of %llu samples", pys[i].path, who,
				      (unsigned long long)n, (unsigned long long)f.total);
		}
		for (size_t k = 0; k < f.n; k++) {
			size_t len = strlen(comm);
			const char *s = f.lines[k].stack;

			/* Before exec the child is still sh's: a few samples. */
			if (strncmp(s, comm, len) != 0 || s[len] != ';')
				other += f.lines[k].count;
		}
		cr_assert_leq(other * 100, f.total, "%s: %llu of %llu samples under another process frame than %s",
			      pys[i].path, (unsigned long long)other, (unsigned long long)f.total, comm);
		folded_free(&f);
	}
}

Test(python, non_ascii_names)
{
	struct python threes[32];
	int n = 0;

	for (int i = 0; i < npys; i++)
		if (pys[i].major == 2)
			fprintf(stderr, "[SKIP] %s: Python 2 identifiers are ASCII\n", pys[i].path);
		else
			threes[n++] = pys[i];
	cr_assert_gt(n, 0, "no Python 3");
	record_pythons(NULL, threes, n, AT_ONCE_CPU, script, (const char *const[]){ "unicode", "2", NULL }, 60, each,
		       NULL);
	for (int i = 0; i < n; i++) {
		struct folded f = each[i];

		/* Latin-1, Cyrillic (UCS-2), CJK (UCS-2) and a supplementary-plane ideograph (UCS-4). */
		uint64_t hit = count_all(&f, "função_函数_\xf0\xa0\x80\x80 (", "/tëst_файл.py:");
		cr_assert_geq(hit, f.total * 7 / 10, "%s: non-ASCII frame in %llu of %llu samples", threes[i].path,
			      (unsigned long long)hit, (unsigned long long)f.total);
		folded_free(&f);
	}
}

/* What a failure needs to be told apart: the first stacks under the
 * interpreter's process frame that name neither workload (a process found
 * late reads as native frames only; one never found, as nothing). */
static void print_unnamed(const struct folded *f, const char *path)
{
	const char *b = strrchr(path, '/') + 1;
	char comm[16];
	uint64_t shown = 0;

	snprintf(comm, sizeof(comm), "%s", b);
	for (size_t k = 0; k < f->n && shown < 8; k++) {
		const char *s = f->lines[k].stack;

		if (strncmp(s, comm, strlen(comm)) != 0 || strstr(s, "work (") || strstr(s, "hot ("))
			continue;
		fprintf(stderr, "unnamed: %llu %.300s\n", (unsigned long long)f->lines[k].count, s);
		shown++;
	}
	fprintf(stderr, "unnamed: %zu stacks, %llu samples in all\n", f->n, (unsigned long long)f->total);
}

Test(python, started_after_recording_and_short_lived_processes_keep_names)
{
	for (int i = 0; i < npys; i++) {
		const char *dir = temp_dir();
		char *out = temp_path(dir, "a.folded"), *err = temp_path(dir, "err");
		const char *argv[] = { PYEBPF, "record", "-a", "-F", "999", "-d", "3", "-o", out, NULL };
		const char *longer[] = { pys[i].path, script, "split", "1.2", NULL };
		const char *brief[] = { pys[i].path, script, "lines", "0.2", NULL };
		struct folded f;

		pid_t rec = spawn_capture(argv, err);
		wait_for_text(err, SAMPLING, 10);
		pid_t a = spawn(longer);
		cr_assert_eq(wait_exit(spawn(brief), 20), 0);
		cr_assert_eq(wait_exit(a, 20), 0);
		cr_assert_eq(wait_exit(rec, 20), 0);
		folded_load(out, &f);
		/* Both started after recording began and were gone before the end. */
		uint64_t alpha = count_all(&f, pyframe("alpha", "alpha-call"), "work (");
		uint64_t hot = count_all(&f, pyframe("hot", "hot"), NULL);
		cr_assert_geq(alpha, 300, "%s: the later process has %llu named samples", pys[i].path,
			      (unsigned long long)alpha);
		if (hot < 20)
			print_unnamed(&f, pys[i].path);
		cr_assert_geq(hot, 20, "%s: the 200 ms process has %llu named samples", pys[i].path,
			      (unsigned long long)hot);
		folded_free(&f);
	}
}

Test(python, program_embedding_libpython)
{
	char *cmd = NULL, *cfg = NULL, *bin = NULL;

	/* Any pyenv 3.x with python3.X-config and a shared libpython. */
	for (int i = 0; i < npys && !cfg; i++) {
		char *c = NULL;

		if (pys[i].major != 3 || !pys[i].lib[0] || asprintf(&c, "%s-config", pys[i].path) < 0)
			continue;
		if (access(c, X_OK) == 0)
			cfg = c;
		else
			free(c);
	}
	if (!cfg) {
		fprintf(stderr, "[SKIP] no python3.X-config with a shared libpython to embed\n");
		cr_skip_test("nothing to embed");
	}
	const char *dir = temp_dir();
	cr_assert(asprintf(&bin, "%s/embed", dir) > 0);
	cr_assert(asprintf(&cmd,
			   "cc $(%s --cflags) ../tests/fixtures/embed.c -o %s "
			   "$(%s --ldflags --embed 2>/dev/null || %s --ldflags) -Wl,-rpath,$(%s --prefix)/lib 2>&1",
			   cfg, bin, cfg, cfg, cfg) > 0);
	cr_assert_eq(system(cmd), 0, "could not build the embedding program: %s", cmd);

	char *out = temp_path(dir, "e.folded");
	const char *argv[] = { PYEBPF, "record", "-F", "999", "-o", out, "--", bin, "2", NULL };
	struct run_result r;
	struct folded f;

	run(argv, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	folded_load(out, &f);
	uint64_t hit = count_all(&f, "<module> (<string>:6);embedded_work (<string>:", NULL);
	cr_assert_geq(hit, f.total * 8 / 10, "embedded Python frames in %llu of %llu samples (%s)",
		      (unsigned long long)hit, (unsigned long long)f.total, cfg);
	folded_free(&f);
	free(out);
	free(cmd);
	free(cfg);
	free(bin);
}

/* ---- nested imports: frames of code objects freed before they are named ---- */

#define IMPORTS "../tests/fixtures/pyimports.py"
#define IMPORT_NEXT_LINE 8 /* the generated body's `import pyebpf_imp_N  # next` */

struct import_tally {
	uint64_t samples, wrong, unreadable;
};

/* An importlib frame, which may lie between a module and the one it imports. */
static int importlib_frame(const char *f)
{
	return strstr(f, "(<frozen importlib") || strstr(f, "/importlib/");
}

/* Generated module k's frame ("<module> (DIR/pyebpf_imp_K.py:L)", or without
 * ":L" when named after its code object was gone): k and the line (0: none). */
static int generated_frame(const char *f, const char *dir, int *line)
{
	char prefix[PATH_MAX + 32];
	int k, n = 0;

	snprintf(prefix, sizeof(prefix), "<module> (%s/pyebpf_imp_", dir);
	if (strncmp(f, prefix, strlen(prefix)) != 0)
		return -1;
	f += strlen(prefix);
	*line = 0;
	if (sscanf(f, "%d.py%n", &k, &n) != 1 || !n)
		return -1;
	if (f[n] == ':')
		*line = atoi(f + n + 1);
	return k;
}

/* A frame named by no code object. */
static int unnamed_frame(const char *f)
{
	return !strncmp(f, "[unreadable", 11) || !strncmp(f, "[code object gone", 17);
}

/* The source loader's exec, whose _call_with_frames_removed runs a module's code. */
static int source_exec(const char *f)
{
	return !strncmp(f, "exec_module (", 13) || !strncmp(f, "_LoaderBasics.exec_module (", 27);
}

/*
 * The frame that runs the module imported below frame i: the one under the
 * loader's exec (`exec_module;_call_with_frames_removed;HERE`) when
 * importlib is Python (3.x; finders such as setuptools' may run before
 * it), else (2.7) the next frame. -1: none to judge (a mark, the kernel,
 * the import not that far yet).
 */
static int imported_frame(char **fr, int n, int i, int importlib)
{
	for (int j = i + 1; j < n; j++) {
		if (unnamed_frame(fr[j]))
			return j;
		if (fr[j][0] == '[' || strstr(fr[j], "_[k]"))
			return -1;
		if (!importlib ||
		    (j - i > 2 && source_exec(fr[j - 2]) && !strncmp(fr[j - 1], "_call_with_frames_removed (", 27)))
			return j;
	}
	return -1;
}

/*
 * Does one folded stack break the truth? What runs the import of the next
 * module in generated module k is module k+1's `<module>` at its file; in
 * the fixture's main(), module 0's. Below the source loader's exec (3.11+
 * names it), a `<module>`. *seen: the stack is in a generated module;
 * *unread: one of the frames judged is named by no code object.
 */
static int import_stack_wrong(char **fr, int n, const char *dir, int *seen, int *unread, const char **bad)
{
	int importlib = 0;

	for (int i = 0; i < n; i++)
		importlib |= !strncmp(fr[i], "_find_and_load (", 16);
	for (int i = 0; i < n; i++) {
		int line, k = generated_frame(fr[i], dir, &line), want = -1, j, l2, k2;

		*seen |= k >= 0;
		if (k >= 0 && (line == IMPORT_NEXT_LINE || line == 0))
			want = k + 1;
		else if (strncmp(fr[i], "main (", 6) == 0 && strstr(fr[i], "pyimports.py"))
			want = 0;
		if (i > 1 && !strncmp(fr[i - 2], "_LoaderBasics.exec_module (", 27) &&
		    !strncmp(fr[i - 1], "_call_with_frames_removed (", 27))
			*unread |= unnamed_frame(fr[i]);
		if (i > 1 && !strncmp(fr[i - 2], "_LoaderBasics.exec_module (", 27) &&
		    !strncmp(fr[i - 1], "_call_with_frames_removed (", 27) && strncmp(fr[i], "<module> (", 10) &&
		    fr[i][0] != '[' && !importlib_frame(fr[i])) {
			*bad = fr[i];
			return 1;
		}
		if (want < 0 || (j = imported_frame(fr, n, i, importlib)) < 0)
			continue;
		if (unnamed_frame(fr[j])) {
			*unread = 1;
			continue;
		}
		k2 = generated_frame(fr[j], dir, &l2);
		if (line == 0 && want > 0 && k2 < 0)
			continue; /* a module named without its line: maybe not at its import */
		if (k2 != want) {
			*bad = fr[j];
			return 1;
		}
	}
	return 0;
}

static void tally_imports(const struct folded *f, const char *dir, const char *who, struct import_tally *t)
{
	*t = (struct import_tally){ 0 };
	for (size_t i = 0; i < f->n; i++) {
		char *copy = strdup(f->lines[i].stack), *fr[2048], *save = NULL;
		int n = 0, seen = 0, unread = 0;
		const char *bad = NULL;

		for (char *s = strtok_r(copy, ";", &save); s && n < 2048; s = strtok_r(NULL, ";", &save))
			fr[n++] = s;
		int wrong = import_stack_wrong(fr, n, dir, &seen, &unread, &bad);
		if (seen) {
			t->samples += f->lines[i].count;
			t->unreadable += unread ? f->lines[i].count : 0;
			t->wrong += wrong ? f->lines[i].count : 0;
			if (wrong)
				cr_log_info("%s: %llu samples show %.200s where a generated module runs: %s\n", who,
					    (unsigned long long)f->lines[i].count, bad, f->lines[i].stack);
		}
		free(copy);
	}
}

Test(python, nested_imports_name_each_module_not_a_reused_code_object)
{
	char imports[PATH_MAX];

	cr_assert(realpath(IMPORTS, imports), "%s", IMPORTS);
	for (int i = 0; i < npys; i++) {
		char dir[64];
		const char *args[] = { dir, NULL };
		struct import_tally t;
		struct run_result r;
		struct folded f;

		snprintf(dir, sizeof(dir), "%s", temp_dir());
		record_script(NULL, pys[i].path, imports, args, 60, &f, &r);
		run_result_free(&r);
		tally_imports(&f, dir, pys[i].path, &t);
		cr_log_info("%s: %llu samples in the generated modules, %llu wrong, %llu unreadable\n", pys[i].path,
			    (unsigned long long)t.samples, (unsigned long long)t.wrong,
			    (unsigned long long)t.unreadable);
		/* 10 modules x 50 ms at 999 Hz. */
		cr_assert_geq(t.samples, 300, "%s: %llu samples in the generated modules", pys[i].path,
			      (unsigned long long)t.samples);
		cr_assert_eq(t.wrong, 0, "%s: %llu of %llu samples name a function that was not running", pys[i].path,
			     (unsigned long long)t.wrong, (unsigned long long)t.samples);
		cr_assert_leq(t.unreadable, 3 + t.samples / 50, "%s: %llu of %llu samples with an unnamed frame",
			      pys[i].path, (unsigned long long)t.unreadable, (unsigned long long)t.samples);
		folded_free(&f);
	}
}
