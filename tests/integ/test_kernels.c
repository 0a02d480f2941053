/*
 * What pyebpf does on the kernel it runs on: these tests run here (6.18)
 * and in each guest of the kernel matrix (`make kernels`: Debian's 5.10,
 * 6.1, 6.12 and 7.x under QEMU), and expect of each kernel what the README's
 * table says: the build of the BPF programs it takes, Python stacks in
 * --mode cpu everywhere, --mode wall by task work or by the
 * finish_task_switch kprobe, and one exact line where a kernel cannot.
 */
#include "integ.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "../pythons.h"

#define WORKLOAD "../tests/fixtures/pywork.py"
#define WALL_WORKLOAD "../tests/fixtures/pywall.py"

static char script[PATH_MAX], wall_script[PATH_MAX];
static struct python pys[32];
static int npys;

static void setup(void)
{
	npys = setup_pythons(WORKLOAD, script, pys, 32);
	cr_assert(realpath(WALL_WORKLOAD, wall_script));
}

TestSuite(kernels, .init = setup, .timeout = 900);

/* The running kernel as major * 100 + minor (6.18: 618). */
static int kernel_version(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	cr_assert_eq(uname(&u), 0);
	cr_assert_eq(sscanf(u.release, "%d.%d", &major, &minor), 2, "%s", u.release);
	return major * 100 + minor;
}

/* Two interpreters are enough for a kernel: the oldest and the newest. */
static void two_pythons(const struct python **a, const struct python **b)
{
	*a = *b = &pys[0];
	for (int i = 0; i < npys; i++) {
		int v = pys[i].major * 100 + pys[i].minor;

		if (pys[i].free_threaded)
			continue;
		if (v < (*a)->major * 100 + (*a)->minor)
			*a = &pys[i];
		if (v > (*b)->major * 100 + (*b)->minor)
			*b = &pys[i];
	}
}

/* The 60/40 split within 4 points of what the workload measured, and a
 * 1000-deep recursion whole: the walker of whatever build was loaded. */
static void python_stacks_read(const struct python *py, const char *want_note)
{
	const char *split[] = { "split", "3", NULL }, *deep[] = { "deep", "2", NULL };
	struct folded f;
	struct run_result r;
	double truth = 0;
	const char *m;

	record_script(NULL, py->path, script, split, 120, &f, &r);
	if (want_note)
		cr_assert(strstr(r.err, want_note), "%s: no '%s' in: %s", py->path, want_note, r.err);
	m = r.out ? strstr(r.out, "alpha-cpu-share ") : NULL;
	cr_assert(m && sscanf(m, "alpha-cpu-share %lf", &truth) == 1, "%s: %s", py->path, r.out);
	uint64_t a = count_all(&f, script_frame(script, "alpha", "alpha-call"), "work (");
	uint64_t b = count_all(&f, "beta (", "work (");
	double share = 100.0 * (double)a / (double)(a + b);
	cr_log_info("%s: alpha %.1f%% of %llu, measured %.1f%%\n", py->path, share, (unsigned long long)(a + b), truth);
	/* The arm64 guest (guest-tests.sh) allows more: under TCG its split
	 * read 0.2-2.3 points off in 4 runs and 5.8 in a fifth. */
	const char *pp = getenv("PYEBPF_TEST_SPLIT_PP");
	double tol = pp ? strtod(pp, NULL) : 4;
	cr_assert(share > truth - tol && share < truth + tol, "%s: alpha %.1f%% of %llu samples, measured %.1f%%",
		  py->path, share, (unsigned long long)(a + b), truth);
	folded_free(&f);
	run_result_free(&r);

	/* INTEG_DEEP_FREQ where the CPU is emulated (a later -F wins): on a
	 * slower machine's TCG, the bounded-loop build at 999 Hz did not keep
	 * up with a 1000-deep stack: the recording outlived 120 s, its program
	 * gone (3.15 on 6.1), or the descent took the whole run (2.7 on 6.12:
	 * 0 samples of 4,201 whole). */
	const char *freq = getenv("INTEG_DEEP_FREQ");
	const char *deep_opts[] = { freq ? "-F" : NULL, freq, NULL };
	record_script(deep_opts, py->path, script, deep, 120, &f, &r);
	uint64_t whole = 0, cut = 0;
	for (size_t k = 0; k < f.n; k++) {
		if (occurrences(f.lines[k].stack, "recurse (") == 1000)
			whole += f.lines[k].count;
		if (strstr(f.lines[k].stack, ".py:") && strstr(f.lines[k].stack, "[truncated]"))
			cut += f.lines[k].count;
	}
	/* Under emulation the descent itself takes a good part of the run (4/5
	 * of it for 2.7 on 7.2 once): what matters is that the bottom is read
	 * whole, and nothing cut. */
	cr_assert_geq(whole * 8, f.total, "%s: 1000 frames whole in %llu of %llu", py->path, (unsigned long long)whole,
		      (unsigned long long)f.total);
	cr_assert_eq(cut, 0, "%s: %llu Python stacks cut", py->path, (unsigned long long)cut);
	folded_free(&f);
	run_result_free(&r);
}

Test(kernels, cpu_mode_reads_python_on_this_kernel)
{
	const struct python *old, *young;
	int k = kernel_version();
	const char *note = k < 517 ? "this kernel has no bpf_loop (Linux 5.17)" : NULL;

	two_pythons(&old, &young);
	python_stacks_read(old, note);
	if (young != old) /* an arm64 guest's root has one */
		python_stacks_read(young, note);
}

/* The bounded-loop build, as kernels before 5.17 take it, on this one. */
Test(kernels, the_compat_build_reads_python_here_too)
{
	const struct python *old, *young;

	/* Before 5.17 it is the build cpu_mode_reads_python_on_this_kernel ran
	 * already: again would only cost the matrix 2.5 minutes of TCG. */
	if (kernel_version() < 517)
		cr_skip_test("this kernel runs the bounded-loop build in every test");

	/* What differs per kernel is the verifier, which checks the one
	 * program whatever the interpreter: the newest reads the most layout
	 * (the oldest is read by the compat build on 5.10's guest, in every
	 * test there); two cost a slow machine's guests 5 minutes. */
	setenv("PYEBPF_TEST_COMPAT_BUILD", "1", 1);
	two_pythons(&old, &young);
	python_stacks_read(young, "this kernel has no bpf_loop (Linux 5.17)");
}

Test(kernels, wall_mode_or_one_line)
{
	const struct python *old, *young;
	const char *opts[] = { "--mode", "wall", "--thread", "MainThread", "-F", "199", NULL };
	const char *args[] = { "split", "5", NULL };
	int k = kernel_version();

	two_pythons(&old, &young);
	struct folded f;
	struct run_result r;
	record_script(opts, young->path, wall_script, args, 120, &f, &r);
	/* Before 6.18 the kprobe path, and the summary says so; after, task
	 * work or (where the verifier refuses it) the syscall's return, whose
	 * note may say the kernel has no kprobes but never that one is used. */
	if (k < 618)
		cr_assert(strstr(r.err, "off-CPU samples are sent from a kprobe on finish_task_switch"), "%s", r.err);
	else
		cr_assert_null(strstr(r.err, "sent from a kprobe"), "%s", r.err);
	uint64_t cpu = 0, sleep = count_all(&f, "sleep_phase (", "[off-cpu: sleep]");
	uint64_t io = count_all(&f, "pipe_phase (", "[off-cpu: io]"),
		 lock = count_all(&f, "lock_phase (", "[off-cpu: lock]");
	for (size_t i = 0; i < f.n; i++)
		if (strstr(f.lines[i].stack, "cpu_phase (") && !strstr(f.lines[i].stack, "[off-cpu: "))
			cpu += f.lines[i].count;
	double sum = (double)(cpu + sleep + io + lock);
	cr_log_info("%s: cpu %.1f%% sleep %.1f%% io %.1f%% lock %.1f%% of %llu\n", young->path, 100 * cpu / sum,
		    100 * sleep / sum, 100 * io / sum, 100 * lock / sum, (unsigned long long)f.total);
	/* 40/30/20/10 by design; a guest under emulation is slower at the CPU
	 * part and spends seconds starting the interpreter, so only the
	 * reasons and rough shares are held here. */
	cr_assert_geq(sum, f.total * 0.3, "phases in %.0f of %llu samples; pyebpf said:\n%s", sum,
		      (unsigned long long)f.total, r.err);
	cr_assert(sleep > sum * 0.15 && io > sum * 0.08 && lock > sum * 0.03 && cpu > sum * 0.2,
		  "cpu %llu sleep %llu io %llu lock %llu; pyebpf said:\n%s", (unsigned long long)cpu,
		  (unsigned long long)sleep, (unsigned long long)io, (unsigned long long)lock, r.err);
	folded_free(&f);
	run_result_free(&r);
}

Test(kernels, native_or_one_line)
{
	struct run_result r;
	int k = kernel_version();

	run((const char *const[]){ PYEBPF, "record", "--native", "-d", "0.5", "-p", "1", "-o",
				   "/tmp/pyebpf-kernels.folded", NULL },
	    60, &r);
	if (k < 515) {
		cr_assert_neq(r.status, 0);
		cr_assert_str_eq(r.err, "pyebpf: --native needs the BPF helper bpf_task_pt_regs (Linux 5.15); this "
					"kernel can do --mode cpu without --native\n");
	} else {
		cr_assert_eq(r.status, 0, "%s", r.err);
	}
	run_result_free(&r);
}

/* A server blocked in epoll_wait for the whole recording is counted up to
 * the stop by the stop flush (bpf_task_from_pid, 6.2); before it, the one
 * line says its time is not counted. */
Test(kernels, the_stop_flush_or_its_line)
{
	const struct python *old, *young;
	const char *dir = temp_dir();
	char *out = temp_path(dir, "wall.folded"), *err = temp_path(dir, "err"), *ready = temp_path(dir, "ready");
	char pidbuf[16], cmd[2 * PATH_MAX + 64];
	struct folded f;
	int k = kernel_version();

	two_pythons(&old, &young);
	snprintf(cmd, sizeof(cmd), "exec %s %s server > %s", young->path, wall_script, ready);
	pid_t srv = spawn((const char *const[]){ "sh", "-c", cmd, NULL });
	wait_for_text(ready, "ready", 120);
	snprintf(pidbuf, sizeof(pidbuf), "%d", srv);
	double start = mono();
	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "--mode", "wall", "-F", "99", "-p", pidbuf,
							 "-o", out, NULL },
				  err);
	wait_for_text(err, SAMPLING, 120);
	sleep_s(2);
	kill(rec, SIGINT);
	cr_assert_eq(wait_exit(rec, 120), 0);
	/* The recording's whole life bounds the wait it may count: under TCG
	 * the start and the stop take seconds of their own beside the 2 s. */
	double lived = mono() - start;
	kill_wait(srv);
	folded_load(out, &f);
	uint64_t wait = count_all(&f, "serve (", "[off-cpu: io]");
	cr_log_info("%s: %llu io samples of the blocked server\n", young->path, (unsigned long long)wait);
	if (k < 602) {
		wait_for_text(err,
			      "threads still off the CPU when the recording stops are counted up to their last "
			      "switch",
			      1);
		cr_assert_eq(wait, 0);
	} else {
		/* At least the 2 s at 99 Hz, from the flush alone; never more than
		 * the recording lived. */
		cr_assert(wait > 150 && wait < 99 * lived + 10, "the server's wait is %llu samples in %.1f s",
			  (unsigned long long)wait, lived);
	}
	folded_free(&f);
}

/* pyebpf dump reads every thread through the dump iterator (a sleepable task
 * iterator and bpf_task_from_pid, 6.2); before it, one line says so. */
Test(kernels, dump_or_one_line)
{
	const struct python *old, *young;
	const char *dir = temp_dir();
	char *ready = temp_path(dir, "ready");
	char pidbuf[16], cmd[2 * PATH_MAX + 64], want[PATH_MAX + 64];
	struct run_result r;
	int k = kernel_version();

	two_pythons(&old, &young);
	snprintf(cmd, sizeof(cmd), "exec %s %s server > %s", young->path, wall_script, ready);
	pid_t srv = spawn((const char *const[]){ "sh", "-c", cmd, NULL });
	wait_for_text(ready, "ready", 120);
	snprintf(pidbuf, sizeof(pidbuf), "%d", srv);
	run((const char *const[]){ PYEBPF, "dump", "-p", pidbuf, NULL }, 60, &r);
	kill_wait(srv);
	if (k < 602) {
		cr_assert_neq(r.status, 0);
		cr_assert_str_eq(r.err,
				 "pyebpf: dump needs a sleepable task iterator and bpf_task_from_pid (Linux 6.2 or "
				 "later)\n");
	} else {
		cr_assert_eq(r.status, 0, "%s", r.err);
		/* The server waits in epoll_wait, called from serve(). */
		snprintf(want, sizeof(want), "File \"%s\", line ", wall_script);
		cr_assert(strstr(r.out, want) && strstr(r.out, "in serve\n") && strstr(r.out, "(waiting: io)"), "%s",
			  r.out);
	}
	run_result_free(&r);
}

/*
 * Issue #40: record -a on 5.10 seemed to stop sampling after its first
 * second (4 samples in 2 s while the timer program ran 1926 times). It was
 * the measurement: its workload, fixtures/busy with its default 5 s, had
 * exited before the recording began (pyebpf's start-up takes 9-25 s under
 * TCG), and the timer's runs on idle CPUs send nothing. A workload that
 * outlives the start-up is sampled by -a as often as by -p, every second.
 */
Test(kernels, system_wide_samples_as_often_as_one_pid)
{
	const char *dir = temp_dir();
	char *pb = temp_path(dir, "a.pb.gz"), *all = temp_path(dir, "a.folded"), *late = temp_path(dir, "late.folded");
	char *one = temp_path(dir, "p.folded"), pidbuf[16];
	struct folded f;
	struct run_result r;
	uint64_t a, a_late, p;

	/* Busy until killed: longer than any start-up. */
	pid_t busy = spawn((const char *const[]){ "./fixtures/busy", "3600", NULL });
	snprintf(pidbuf, sizeof(pidbuf), "%d", busy);
	sleep_s(0.5);

	run((const char *const[]){ PYEBPF, "record", "-a", "-F", "499", "-d", "3", "-o", pb, NULL }, 120, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "report", pb, "-o", all, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "report", pb, "--since", "1", "-o", late, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "record", "-p", pidbuf, "-F", "499", "-d", "3", "-o", one, NULL }, 120, &r);
	kill_wait(busy);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);

	folded_load(all, &f);
	a = folded_comm_total(&f, "busy");
	folded_free(&f);
	folded_load(late, &f);
	a_late = folded_comm_total(&f, "busy");
	folded_free(&f);
	folded_load(one, &f);
	p = folded_comm_total(&f, "busy");
	folded_free(&f);
	cr_log_info("busy: -a %llu samples (%llu after the first second), -p %llu\n", (unsigned long long)a,
		    (unsigned long long)a_late, (unsigned long long)p);
	/* 1,497 on an idle machine; 400-800 on a loaded one or under TCG,
	 * where the guest's other work shares the busy CPU. The bound is loose:
	 * what it catches is a stall (4 samples). */
	cr_assert_gt(p, 100, "-p: %llu samples of busy in 3 s at 499 Hz", (unsigned long long)p);
	cr_assert_geq(a * 3, p, "-a: %llu samples of busy, -p %llu", (unsigned long long)a, (unsigned long long)p);
	/* Two of the three seconds: a third of the samples at the least. */
	cr_assert_geq(a_late * 3, a, "-a: %llu of %llu samples after the first second", (unsigned long long)a_late,
		      (unsigned long long)a);
}
