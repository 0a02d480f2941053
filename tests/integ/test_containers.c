/*
 * Containers without Docker: a cgroup v2 child group named like a docker
 * scope, a new pid and mount namespace (unshare), and a Python whose files
 * are visible only inside that mount namespace. Two such containers run the
 * same code; pyebpf must keep exactly the one asked for.
 */
#include "integ.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PY "/usr/bin/python3"
#define ID_A "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2"
#define ID_B "b1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2"

static char mount_point[1024], parent[1536];

static void cgroup2(void)
{
	FILE *f = fopen("/proc/mounts", "r");
	char dev[256], dir[1024], type[64], line[4096];

	mount_point[0] = '\0';
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %1023s %63s", dev, dir, type) == 3 && !strcmp(type, "cgroup2")) {
			snprintf(mount_point, sizeof(mount_point), "%s", dir);
			break;
		}
	if (f)
		fclose(f);
}

struct container {
	char cgroup[2048]; /* its directory */
	char root[2048];   /* empty on the host, the Python inside */
	pid_t pid;         /* unshare, which runs the Python as pid 1 of its namespace */
};

/* Start `python3 pywork.py split SECONDS` in a new cgroup, pid and mount namespace. */
static void start_container(struct container *c, const char *dir, const char *id, const char *seconds)
{
	char stage[2048], cmd[16384];

	snprintf(c->cgroup, sizeof(c->cgroup), "%s/docker-%s.scope", parent, id);
	cr_assert(mkdir(c->cgroup, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", c->cgroup, strerror(errno));
	/* The files, staged on the host and bind-mounted over an empty directory inside. */
	snprintf(stage, sizeof(stage), "%s/stage-%.4s", dir, id);
	snprintf(c->root, sizeof(c->root), "%s/root-%.4s", dir, id);
	mkdir(stage, 0755);
	mkdir(c->root, 0755);
	snprintf(cmd, sizeof(cmd), "cp " PY " %s/python3 && cp ../tests/fixtures/pywork.py %s/pywork.py", stage, stage);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(cmd, sizeof(cmd),
		 "echo $$ > %s/cgroup.procs && exec unshare --pid --mount --fork --kill-child --mount-proc "
		 "sh -c 'mount --bind %s %s && exec %s/python3 %s/pywork.py split %s'",
		 c->cgroup, stage, c->root, c->root, c->root, seconds);
	c->pid = spawn((const char *const[]){ "sh", "-c", cmd, NULL });
}

static void stop_container(struct container *c)
{
	kill_wait(c->pid);
	c->pid = 0;
	/* The cgroup can go once its last process has. */
	for (int i = 0; i < 100 && rmdir(c->cgroup) && errno == EBUSY; i++)
		sleep_s(0.05);
}

/* CPU seconds a container's python3 has used (0: none running yet). */
static double python_cpu(const struct container *c)
{
	char path[2100], comm[64], stat[1024];
	FILE *procs;
	double best = 0;
	int pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", c->cgroup);
	procs = fopen(path, "r");
	while (procs && fscanf(procs, "%d", &pid) == 1) {
		unsigned long ut = 0, st = 0;
		FILE *f;
		char *p;

		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		comm[0] = '\0';
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		if (strcmp(comm, "python3\n"))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(stat, sizeof(stat), f) ? strrchr(stat, ')') : NULL;
		fclose(f);
		/* After the name: state ppid pgrp session tty tpgid flags minflt
		 * cminflt majflt cmajflt utime stime. */
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2 &&
		    (double)(ut + st) / (double)sysconf(_SC_CLK_TCK) > best)
			best = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	}
	if (procs)
		fclose(procs);
	return best;
}

/* Both containers' Pythons past their start-up (a second on this machine,
 * several under the kernel matrix's emulation): their samples all have
 * stacks, none caught in the middle of exec. */
static void wait_running(const struct container *a, const struct container *b)
{
	for (int i = 0; i < 1200 && (python_cpu(a) < 0.5 || python_cpu(b) < 0.5); i++)
		sleep_s(0.05);
	cr_assert(python_cpu(a) >= 0.5 && python_cpu(b) >= 0.5, "the containers' Pythons did not start");
}

/* How long a container's Python runs, in seconds: teardown stops it long
 * before, and its start plus a recording's must fit inside. 60 did not on
 * 5.10 under TCG: the Pythons had exited before the recording's first
 * sample (0 samples, the test 75 s long; a recording's start takes 30 s and
 * more there). */
#define CONTAINER_LIFE "600"

/* At most two containers per test, stopped by teardown whatever happened. */
static struct container ctr[2];

/* Groups an aborted run left behind: named after a test process that is gone. */
static void remove_stale(void)
{
	DIR *d = opendir(mount_point);
	struct dirent *e;
	int pid;

	while (d && (e = readdir(d))) {
		char cmd[4096];

		if (sscanf(e->d_name, "pyebpf-test-%d", &pid) != 1 || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(cmd, sizeof(cmd), "rmdir %s/%s/*/ %s/%s 2>/dev/null", mount_point, e->d_name, mount_point,
			 e->d_name);
		if (system(cmd)) {
			/* Still busy: the next run tries again. */
		}
	}
	if (d)
		closedir(d);
}

static void setup(void)
{
	cgroup2();
	if (!*mount_point || access(PY, X_OK) || system("command -v unshare >/dev/null 2>&1")) {
		fprintf(stderr, "[SKIP] needs a cgroup2 mount, " PY " and unshare\n");
		cr_skip_test("no cgroup2, python3 or unshare");
	}
	remove_stale();
	snprintf(parent, sizeof(parent), "%s/pyebpf-test-%d", mount_point, (int)getpid());
	cr_assert(mkdir(parent, 0755) == 0, "mkdir %s: %s", parent, strerror(errno));
}

static void teardown(void)
{
	for (int i = 0; i < 2; i++)
		if (ctr[i].pid > 0)
			stop_container(&ctr[i]);
	if (*parent)
		rmdir(parent);
}

TestSuite(containers, .init = setup, .fini = teardown, .timeout = 120);

/* record -a with a target; the recording converted to folded with container frames. */
static void record_containers(const char *dir, const char *target_opt, const char *target, struct folded *f, char **pb)
{
	*pb = temp_path(dir, "c.pb.gz");
	char *folded = temp_path(dir, "c.folded");
	struct run_result r;

	run((const char *const[]){ PYEBPF, "record", "-a", "-F", "499", "-d", "2", target_opt, target, "-o", *pb,
				   NULL },
	    30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "report", *pb, "--containers", "-o", folded, NULL }, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	folded_load(folded, f);
	free(folded);
}

static void check_only(const struct folded *f, const struct container *c, const char *id, const char *other)
{
	char frame[64], script[PATH_MAX + 64];
	uint64_t python = 0;

	snprintf(frame, sizeof(frame), ";[container %.12s];", id);
	snprintf(script, sizeof(script), "alpha (%s/pywork.py:", c->root);
	cr_assert_gt(f->total, 100, "only %llu samples", (unsigned long long)f->total);
	for (size_t i = 0; i < f->n; i++) {
		cr_assert(strstr(f->lines[i].stack, frame), "a sample outside the container: %s", f->lines[i].stack);
		cr_assert_null(strstr(f->lines[i].stack, other), "the other container: %s", f->lines[i].stack);
		if (strstr(f->lines[i].stack, script))
			python += f->lines[i].count;
	}
	/* Python frames, named with the paths seen inside the container. */
	cr_assert_geq(python * 100, f->total * 30, "alpha() in %llu of %llu samples", (unsigned long long)python,
		      (unsigned long long)f->total);
}

Test(containers, container_id_selects_one_of_two)
{
	const char *dir = temp_dir();
	struct container *a = &ctr[0], *b = &ctr[1];
	struct folded f;
	char *pb;

	start_container(a, dir, ID_A, CONTAINER_LIFE);
	start_container(b, dir, ID_B, CONTAINER_LIFE);
	wait_running(a, b);
	record_containers(dir, "--container", "a1b2c3d4e5f6", &f, &pb);
	check_only(&f, a, ID_A, "[container b1b2c3d4e5f6]");
	folded_free(&f);

	/* The labels: the full id, the cgroup path, the pid inside the container. */
	if (system("command -v go >/dev/null 2>&1") == 0) {
		struct run_result r;
		char want[512];

		run((const char *const[]){ "go", "tool", "pprof", "-tags", pb, NULL }, 120, &r);
		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_assert(strstr(r.out, ID_A), "no container label: %s", r.out);
		snprintf(want, sizeof(want), "/pyebpf-test-%d/docker-%s.scope", (int)getpid(), ID_A);
		cr_assert(strstr(r.out, want), "no cgroup_path label %s: %s", want, r.out);
		cr_assert(strstr(r.out, "ns_pid:"), "no ns_pid label: %s", r.out);
		run_result_free(&r);
	}
	free(pb);
}

Test(containers, cgroup_path_relative_to_the_mount)
{
	const char *dir = temp_dir();
	struct container *a = &ctr[0], *b = &ctr[1];
	struct folded f;
	char rel[PATH_MAX], *pb;

	start_container(a, dir, ID_A, CONTAINER_LIFE);
	start_container(b, dir, ID_B, CONTAINER_LIFE);
	wait_running(a, b);
	snprintf(rel, sizeof(rel), "pyebpf-test-%d/docker-%s.scope", (int)getpid(), ID_B);
	record_containers(dir, "--cgroup", rel, &f, &pb);
	check_only(&f, b, ID_B, "[container a1b2c3d4e5f6]");
	folded_free(&f);
	free(pb);
}

Test(containers, unknown_container_and_cgroup)
{
	struct run_result r;
	char want[PATH_MAX + 128];

	run((const char *const[]){ PYEBPF, "record", "--container", "feedfacefeed", NULL }, 30, &r);
	cr_assert_eq(r.status, 1, "%s", r.err);
	snprintf(want, sizeof(want), "pyebpf: --container: no cgroup of container 'feedfacefeed' under %s\n",
		 mount_point);
	cr_assert_str_eq(r.err, want);
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "record", "--cgroup", "../../../../etc", NULL }, 30, &r);
	cr_assert_eq(r.status, 1, "%s", r.err);
	snprintf(want, sizeof(want), "pyebpf: --cgroup: '../../../../etc' is outside the cgroup2 mount %s\n",
		 mount_point);
	cr_assert_str_eq(r.err, want);
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "record", "--cgroup", "no/such/group", NULL }, 30, &r);
	cr_assert_eq(r.status, 1, "%s", r.err);
	snprintf(want, sizeof(want), "pyebpf: --cgroup: no cgroup 'no/such/group' under the cgroup2 mount %s\n",
		 mount_point);
	cr_assert_str_eq(r.err, want);
	run_result_free(&r);
}

/*
 * Wall mode keeps each task's "is it in a target cgroup?" with the cgroup it
 * was asked in (bpf/offcpu.bpf.h): a process that waited outside the group
 * (asked, not a target) and is then moved into it is counted from the move.
 */
Test(containers, wall_mode_follows_a_process_moved_into_the_cgroup)
{
	const char *dir = temp_dir();
	char group[2048], procs[2100], rel[PATH_MAX], pidbuf[16];
	char *out = temp_path(dir, "moved.folded"), *err = temp_path(dir, "err");
	struct folded f;

	snprintf(group, sizeof(group), "%s/moved", parent);
	cr_assert(mkdir(group, 0755) == 0, "mkdir %s: %s", group, strerror(errno));
	snprintf(rel, sizeof(rel), "pyebpf-test-%d/moved", (int)getpid());
	/* Sleeps of 10 ms: a switch out and in every 10 ms, outside the group first. */
	ctr[0].pid = spawn((const char *const[]){ PY, "-c", "import time\nwhile True: time.sleep(0.01)", NULL });
	snprintf(ctr[0].cgroup, sizeof(ctr[0].cgroup), "%s", group);
	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "--mode", "wall", "-F", "99", "--cgroup",
							 rel, "-o", out, NULL },
				  err);
	wait_for_text(err, SAMPLING, 60);
	sleep_s(1); /* its answer kept: not a target */
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", group);
	FILE *p = fopen(procs, "w");
	cr_assert(p, "%s: %s", procs, strerror(errno));
	snprintf(pidbuf, sizeof(pidbuf), "%d\n", ctr[0].pid);
	cr_assert(fputs(pidbuf, p) >= 0 && fclose(p) == 0, "moving %d into %s failed", ctr[0].pid, group);
	sleep_s(2);
	kill(rec, SIGINT);
	cr_assert_eq(wait_exit(rec, 60), 0);
	folded_load(out, &f);
	uint64_t slept = count_all(&f, "[off-cpu: sleep]", "[off-cpu: sleep]");
	cr_log_info("%llu sleep samples of %llu after the move\n", (unsigned long long)slept,
		    (unsigned long long)f.total);
	/* 2 s at 99 Hz after the move; none before it. */
	cr_assert(slept > 150 && slept < 260, "%llu sleep samples of %llu", (unsigned long long)slept,
		  (unsigned long long)f.total);
	folded_free(&f);
}
