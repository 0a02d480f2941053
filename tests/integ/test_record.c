/* The sampler against real processes: targets, stacks, kernel frames, stops. */
#include "integ.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STACK "main;outer;inner"

/* Most samples of busy must be in main → outer → inner. */
static void assert_busy_stacks(const struct folded *f, const char *comm)
{
	uint64_t all = folded_comm_total(f, comm), hit = folded_count(f, comm, STACK);

	cr_assert_geq(all, 50, "only %llu samples of %s", (unsigned long long)all, comm);
	cr_assert_geq(hit * 100, all * 80, "%s in %llu of %llu samples of %s", STACK, (unsigned long long)hit,
		      (unsigned long long)all, comm);
}

Test(record, pid_target_shows_main_outer_inner, .timeout = 40)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "p.folded");
	const char *busy[] = { BUSY, "8", NULL };
	pid_t pid = spawn(busy);
	char pidarg[16];
	struct run_result r;
	struct folded f;

	sleep_s(0.2);
	snprintf(pidarg, sizeof(pidarg), "%d", pid);
	const char *argv[] = { PYEBPF, "record", "-p", pidarg, "-d", "2", "-o", out, NULL };
	run(argv, 20, &r);
	kill_wait(pid);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	folded_load(out, &f);
	assert_busy_stacks(&f, "busy");
	/* Only the target: every sample is busy's. */
	cr_assert_eq(folded_comm_total(&f, "busy"), f.total);
	cr_assert(strstr(r.err, "pyebpf: wrote "), "summary: %s", r.err);
	cr_assert_eq(dot_files(dir), 0);
	folded_free(&f);
	run_result_free(&r);
}

Test(record, pid_target_excludes_other_processes, .timeout = 40)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "p.folded"), *other = temp_path(dir, "otherbusy");
	char cmd[512], pidarg[16];
	struct run_result r;
	struct folded f;

	snprintf(cmd, sizeof(cmd), "cp %s %s", BUSY, other);
	cr_assert_eq(system(cmd), 0);
	const char *a[] = { BUSY, "8", NULL }, *b[] = { other, "8", NULL };
	pid_t pa = spawn(a), pb = spawn(b);
	sleep_s(0.2);
	snprintf(pidarg, sizeof(pidarg), "%d", pa);
	const char *argv[] = { PYEBPF, "record", "-p", pidarg, "-d", "2", "-o", out, NULL };
	run(argv, 20, &r);
	kill_wait(pa);
	kill_wait(pb);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	folded_load(out, &f);
	cr_assert_eq(folded_comm_total(&f, "otherbusy"), 0, "another process leaked into a -p profile");
	assert_busy_stacks(&f, "busy");
	folded_free(&f);
	run_result_free(&r);
}

Test(record, pid_target_stops_when_it_exits, .timeout = 40)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "p.folded");
	const char *busy[] = { BUSY, "1.5", NULL };
	pid_t pid = spawn(busy);
	char pidarg[16];
	struct run_result r;
	struct folded f;

	snprintf(pidarg, sizeof(pidarg), "%d", pid);
	const char *argv[] = { PYEBPF, "record", "-p", pidarg, "-o", out, NULL };
	run(argv, 20, &r);
	wait_exit(pid, 5);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	cr_assert_lt(r.seconds, 8, "did not stop when its target exited");
	folded_load(out, &f);
	assert_busy_stacks(&f, "busy");
	folded_free(&f);
	run_result_free(&r);
}

Test(record, command_is_profiled_until_it_exits, .timeout = 40)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "c.folded");
	const char *argv[] = { PYEBPF, "record", "-o", out, "--", BUSY, "2", NULL };
	struct run_result r;
	struct folded f;

	run(argv, 20, &r);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	cr_assert_lt(r.seconds, 8);
	folded_load(out, &f);
	assert_busy_stacks(&f, "busy");
	cr_assert_eq(folded_comm_total(&f, "busy"), f.total, "only the command is sampled");
	folded_free(&f);
	run_result_free(&r);
}

Test(record, command_children_are_followed, .timeout = 40)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "c.folded");
	/* The shell forks busy: the child must be sampled too. */
	const char *argv[] = { PYEBPF, "record", "-o", out, "--", "sh", "-c", BUSY " 2; true", NULL };
	struct run_result r;
	struct folded f;

	run(argv, 20, &r);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	folded_load(out, &f);
	assert_busy_stacks(&f, "busy");
	folded_free(&f);
	run_result_free(&r);
}

Test(record, all_processes_and_never_itself, .timeout = 40)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "a.folded");
	const char *busy[] = { BUSY, "8", NULL };
	pid_t pid = spawn(busy);
	/* --threads names each thread with its tid: pyebpf's (single) thread is its pid.
	 * By pid, not by name: another pyebpf on the host is fair game. */
	const char *argv[] = { PYEBPF, "record", "-a", "--threads", "-d", "2", "-o", out, NULL };
	char self[64];
	struct folded f;

	sleep_s(0.2);
	pid_t rec = spawn(argv);
	cr_assert_eq(wait_exit(rec, 20), 0);
	kill_wait(pid);
	folded_load(out, &f);
	assert_busy_stacks(&f, "busy");
	snprintf(self, sizeof(self), " [tid %d];", (int)rec);
	for (size_t i = 0; i < f.n; i++)
		cr_assert_null(strstr(f.lines[i].stack, self), "pyebpf sampled itself: %s", f.lines[i].stack);
	folded_free(&f);
}

Test(record, kernel_frames_and_no_kernel, .timeout = 40)
{
	const char *dir = temp_dir();
	char *with = temp_path(dir, "k.folded"), *without = temp_path(dir, "nk.folded");
	const char *a1[] = { PYEBPF, "record", "-o", with, "--", BUSY, "1.5", "sys", NULL };
	const char *a2[] = { PYEBPF, "record", "--no-kernel", "-o", without, "--", BUSY, "1.5", "sys", NULL };
	struct run_result r;
	struct folded f;

	run(a1, 20, &r);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	run_result_free(&r);
	folded_load(with, &f);
	/* busy makes getppid() calls: the kernel side shows, on top of the user frames.
	 * Where in the syscall path the time goes depends on the (virtual) machine. */
	uint64_t k = folded_count(&f, "busy", "do_syscall_64_[k]");
	cr_assert_geq(k * 100, f.total * 30, "do_syscall_64 in %llu of %llu samples", (unsigned long long)k,
		      (unsigned long long)f.total);
	cr_assert_gt(folded_count(&f, "busy", "getppid_[k]"), 0, "no sample inside getppid");
	for (size_t i = 0; i < f.n; i++) {
		const char *kf = strstr(f.lines[i].stack, "_[k]"), *main_ = strstr(f.lines[i].stack, ";main;");
		if (kf && main_)
			cr_assert_lt(main_, kf, "kernel frame below user frames: %s", f.lines[i].stack);
	}
	folded_free(&f);

	run(a2, 20, &r);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	run_result_free(&r);
	folded_load(without, &f);
	cr_assert_gt(f.total, 50);
	for (size_t i = 0; i < f.n; i++)
		cr_assert_null(strstr(f.lines[i].stack, "_[k]"), "kernel frame with --no-kernel: %s", f.lines[i].stack);
	folded_free(&f);
}

Test(record, exited_processes_keep_their_names, .timeout = 40)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "e.folded");
	const char *argv[] = { PYEBPF, "record", "-a", "-d", "3", "-o", out, NULL };
	const char *busy[] = { BUSY, "0.5", NULL };
	char *err = temp_path(dir, "err");
	struct folded f;

	pid_t rec = spawn_capture(argv, err);
	wait_for_text(err, SAMPLING, 10);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(wait_exit(spawn(busy), 10), 0);
	/* All three are gone long before the profile is written. */
	cr_assert_eq(wait_exit(rec, 20), 0);
	folded_load(out, &f);
	assert_busy_stacks(&f, "busy");
	folded_free(&f);
}

Test(record, sigint_and_sigterm_write_the_profile, .timeout = 40)
{
	const int sigs[] = { SIGINT, SIGTERM };

	for (int i = 0; i < 2; i++) {
		const char *dir = temp_dir();
		char *out = temp_path(dir, "s.folded");
		const char *argv[] = { PYEBPF, "record", "-o", out, "--", BUSY, "10", NULL };
		struct folded f;
		pid_t rec = spawn(argv);

		sleep_s(2);
		kill(rec, sigs[i]);
		cr_assert_eq(wait_exit(rec, 10), 0, "signal %d", sigs[i]);
		folded_load(out, &f);
		assert_busy_stacks(&f, "busy");
		cr_assert_eq(dot_files(dir), 0);
		folded_free(&f);
	}
}

Test(record, second_sigint_leaves_no_file, .timeout = 40)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "s.folded");
	const char *argv[] = { PYEBPF, "record", "-a", "-o", out, NULL };
	pid_t rec = spawn(argv);

	sleep_s(1.5);
	kill(rec, SIGINT);
	kill(rec, SIGINT);
	int status = wait_exit(rec, 10);
	/* Whichever won the race, there is never a partial or temporary file. */
	cr_assert_eq(dot_files(dir), 0, "temporary file left behind");
	if (status == 130) {
		cr_assert_neq(access(out, F_OK), 0, "output written after the second Ctrl-C");
	} else {
		struct folded f;

		cr_assert_eq(status, 0);
		folded_load(out, &f); /* complete: every line parses */
		folded_free(&f);
	}
}

Test(record, duration_stops_recording, .timeout = 40)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "d.folded");
	const char *argv[] = { PYEBPF, "record", "-a", "-d", "1", "-o", out, NULL };
	struct run_result r;

	run(argv, 20, &r);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	cr_assert_lt(r.seconds, 6);
	cr_assert_eq(access(out, F_OK), 0);
	cr_assert(strstr(r.err, " samples from "), "summary missing: %s", r.err);
	run_result_free(&r);
}
