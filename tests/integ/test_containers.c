/*
 * Containers without Docker: a cgroup v2 child group named like a docker
 * scope, a new pid and mount namespace (unshare), and a Python whose files
 * are visible only inside that mount namespace. Two such containers run the
 * same code; pyebpf must keep exactly the one asked for.
 *
 * Then with Docker: a private dockerd (tests/engines/docker.sh, its own
 * data root) running Debian's python3 in containers named as `docker ps`
 * shows them; pyebpf finds them by name from dockerd's state on disk,
 * without its API, and refuses what names no container or several.
 */
#include "integ.h"
#include "docker_engine.h"

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
	/* What runs here is listed (none, or what else this machine runs). */
	snprintf(want, sizeof(want),
		 "pyebpf: --container: no container named 'feedfacefeed' or with an id starting with it; ");
	cr_assert_eq(strncmp(r.err, want, strlen(want)), 0, "%s", r.err);
	cr_assert_eq(occurrences(r.err, "\n"), 1, "%s", r.err);
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

/* ---- Docker ------------------------------------------------------------- */

/* The host pid of a running container's first process. */
static pid_t docker_pid(const char *name)
{
	char *out = docker((const char *const[]){ "docker", "inspect", "-f", "{{.State.Pid}}", name, NULL });
	pid_t pid = (pid_t)atoi(out);

	free(out);
	return pid;
}

/* `docker run -d` pywork.py's split (SECONDS) in a container NAME, past its start-up; its full id into id. */
static void run_split(const char *name, const char *seconds, char id[128])
{
	char script[PATH_MAX], mount[PATH_MAX + 32];
	char *out;
	pid_t pid;

	cr_assert(realpath("../tests/fixtures/pywork.py", script), "%s", strerror(errno));
	snprintf(mount, sizeof(mount), "%s:/pywork.py:ro", script);
	out = docker((const char *const[]){ "docker", "run", "-d", "--name", name, "--network", "none", "-v", mount,
					    DOCKER_IMAGE, "python3", "/pywork.py", "split", seconds, NULL });
	snprintf(id, 128, "%s", out);
	free(out);
	pid = docker_pid(name);
	for (int i = 0; i < 600 && proc_cpu(pid) < 0.5; i++)
		sleep_s(0.05);
	cr_assert_geq(proc_cpu(pid), 0.5, "%s's python3 (pid %d) did not start", name, (int)pid);
}

/* pyebpf's own line for an argument error: exit status `status`, one line that starts with want. */
static void refused(const char *const argv[], int status, const char *want)
{
	struct run_result r;

	run(argv, 60, &r);
	cr_assert_eq(r.status, status, "%s %s: %s", argv[2], argv[3], r.err);
	cr_assert_eq(strncmp(r.err, want, strlen(want)), 0, "wanted '%s...', got: %s", want, r.err);
	cr_assert_eq(occurrences(r.err, "\n"), 1, "%s", r.err);
	run_result_free(&r);
}

/*
 * `--container NAME` records that container's Python and nothing else (a
 * second container runs the same code): pywork.py's 60/40 split, measured
 * by the workload itself, at the file:line it has inside its container.
 * Its samples carry the name: `report --container NAME` finds them while
 * the container exists and once it is gone.
 */
Test(containers, docker_container_by_name, .init = docker_engine_start, .fini = docker_engine_stop, .timeout = 600)
{
	const char *dir = temp_dir();
	char name[64], decoy[64], id[128], decoy_id[128], frame[128], alpha[PATH_MAX], want[512];
	char *pb = temp_path(dir, "c.pb.gz"), *all = temp_path(dir, "all.folded"),
	     *mine = temp_path(dir, "mine.folded");
	int line = script_marker("../tests/fixtures/pywork.py", "alpha-call");
	struct run_result r;
	struct folded f;
	double truth = 0, t0;
	uint64_t a, b, total;

	docker_engine_check();
	snprintf(name, sizeof(name), "splitbox-%d", (int)getpid());
	snprintf(decoy, sizeof(decoy), "decoy-%d", (int)getpid());
	run_split(name, "16", id);
	run_split(decoy, "16", decoy_id);
	t0 = mono();
	run((const char *const[]){ PYEBPF, "record", "-F", "999", "-d", "6", "--container", name, "-o", pb, NULL }, 60,
	    &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_log_info("recorded in %.1f s: %s", mono() - t0, r.err);
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "report", pb, "--containers", "-o", all, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);

	/* What the workload measured, once it has ended. */
	free(docker((const char *const[]){ "docker", "wait", name, NULL }));
	char *logs = docker((const char *const[]){ "docker", "logs", name, NULL });
	cr_assert(sscanf(logs, "alpha-cpu-share %lf", &truth) == 1, "%s", logs);
	free(logs);

	folded_load(all, &f);
	/* Named as docker ps names it, beside the id's start. */
	snprintf(frame, sizeof(frame), ";[container %s (%.12s)];", name, id);
	snprintf(alpha, sizeof(alpha), "alpha (/pywork.py:%d)", line);
	/* A busy machine gives the container less than its CPU: fewer samples, not other ones. */
	cr_assert_gt(f.total, 400, "only %llu samples", (unsigned long long)f.total);
	for (size_t i = 0; i < f.n; i++)
		cr_assert(strstr(f.lines[i].stack, frame), "a sample outside %s: %s", name, f.lines[i].stack);
	a = count_all(&f, alpha, "work (/pywork.py:");
	b = count_all(&f, "beta (/pywork.py:", "work (/pywork.py:");
	double share = 100.0 * (double)a / (double)(a + b ? a + b : 1);
	cr_log_info("alpha %.1f%% of %llu (%llu in all), measured %.1f%%\n", share, (unsigned long long)(a + b),
		    (unsigned long long)f.total, truth);
	cr_assert_geq((a + b) * 10, f.total * 8, "alpha/beta in %llu of %llu samples", (unsigned long long)(a + b),
		      (unsigned long long)f.total);
	/* 4 points, or 3.5 standard deviations of a share sampled that many times when that is more
	 * (squared: the tests link no libm). */
	double tol2 = 3.5 * 3.5 * 100 * 100 * 0.24 / (double)(a + b ? a + b : 1);
	if (tol2 < 16)
		tol2 = 16;
	cr_assert((share - truth) * (share - truth) < tol2, "alpha %.1f%% of %llu samples, measured %.1f%%", share,
		  (unsigned long long)(a + b), truth);
	total = f.total;
	folded_free(&f);

	/* report: the name while the container exists (stopped, here), the name the recording keeps once it
	 * is removed, and the id's start each select every sample. */
	snprintf(want, sizeof(want), "%.12s", id);
	for (int i = 0; i < 3; i++) {
		if (i == 1)
			free(docker((const char *const[]){ "docker", "rm", "-f", name, NULL }));
		run((const char *const[]){ PYEBPF, "report", pb, "--container", i < 2 ? name : want, "-o", mine, NULL },
		    60, &r);
		cr_assert_eq(r.status, 0, "%s", r.err);
		run_result_free(&r);
		folded_load(mine, &f);
		cr_assert_eq(f.total, total, "report --container %s", i < 2 ? name : want);
		folded_free(&f);
	}
	/* A container the recording does not hold (the decoy ran beside it): one line that lists what it
	 * holds, and no output. */
	char *none = temp_path(dir, "none.folded");
	snprintf(want, sizeof(want),
		 "pyebpf: no sample of container '%s': the recordings hold 1 container: %s (%.12s)\n", decoy, name, id);
	refused((const char *const[]){ PYEBPF, "report", pb, "--container", decoy, "-o", none, NULL }, 1, want);
	cr_assert(access(none, F_OK) != 0, "report wrote %s for a container it does not hold", none);
	free(none);
	free(pb);
	free(all);
	free(mine);
}

/*
 * What names no running container, or several, is refused in one line that
 * says what would do: an id's start that no container has (the running
 * ones listed, names and short ids), one that two have (both listed), the
 * old trap "dock" (a part of the /docker parent group, which is no
 * container), a container that exists but does not run.
 */
Test(containers, docker_names_refused, .init = docker_engine_start, .fini = docker_engine_stop, .timeout = 600)
{
	char name[64], stopped[64], id[128], prefix[16], twin[2048], want[2048];
	char *sid;

	docker_engine_check();
	snprintf(name, sizeof(name), "idle-%d", (int)getpid());
	snprintf(stopped, sizeof(stopped), "stopped-%d", (int)getpid());
	run_split(name, "40", id);
	sid = docker((const char *const[]){ "docker", "create", "--name", stopped, "--network", "none", DOCKER_IMAGE,
					    "true", NULL });

	snprintf(want, sizeof(want),
		 "pyebpf: --container: no container named 'f0e1d2c3b4a5' or with an id starting with it; running "
		 "here: ");
	refused((const char *const[]){ PYEBPF, "record", "--container", "f0e1d2c3b4a5", NULL }, 1, want);
	struct run_result r;
	run((const char *const[]){ PYEBPF, "record", "--container", "f0e1d2c3b4a5", NULL }, 60, &r);
	snprintf(want, sizeof(want), "%s (%.12s)", name, id);
	cr_assert(strstr(r.err, want), "%s not listed: %s", want, r.err);
	run_result_free(&r);

	refused((const char *const[]){ PYEBPF, "record", "--container", "dock", NULL }, 1,
		"pyebpf: --container: no container named 'dock'; running here: ");

	snprintf(
		want, sizeof(want),
		"pyebpf: --container: container '%s' (docker %.12s) is not running (no cgroup under %s holds its id)\n",
		stopped, sid, mount_point);
	refused((const char *const[]){ PYEBPF, "record", "--container", stopped, NULL }, 1, want);

	/* Two containers whose ids start alike: the docker one, and a group named like another's scope
	 * (its id the same 8 digits, then others). */
	char twin_id[65];

	snprintf(twin_id, sizeof(twin_id), "%.8s", id);
	memset(twin_id + 8, id[8] == '0' ? '1' : '0', 56);
	twin_id[64] = '\0';
	snprintf(prefix, sizeof(prefix), "%.8s", id);
	snprintf(twin, sizeof(twin), "%s/docker-%s.scope", parent, twin_id);
	cr_assert(mkdir(twin, 0755) == 0, "mkdir %s: %s", twin, strerror(errno));
	snprintf(want, sizeof(want),
		 "pyebpf: --container: '%s' is the start of 2 container ids: %s (%.12s), %.12s (give more of the id)\n",
		 prefix, name, id, twin_id);
	refused((const char *const[]){ PYEBPF, "record", "--container", prefix, NULL }, 1, want);
	rmdir(twin);
	free(sid);
}

/* The interval files a --continuous recording's stderr says it wrote after the line holding `after`:
 * their paths and lengths (seconds), at most max; returns how many. */
static int intervals_after(const char *text, const char *after, char paths[][PATH_MAX], double *secs, int max)
{
	const char *p = strstr(text, after);
	int n = 0;

	while (p && (p = strstr(p, "pyebpf: wrote ")) && n < max) {
		unsigned long long samples;

		if (sscanf(p, "pyebpf: wrote %4095s (%llu samples in %lf s)", paths[n], &samples, &secs[n]) == 3)
			n++;
		p++;
	}
	return n;
}

/*
 * `docker restart` gives a container a new cgroup (its path, a new inode):
 * a --continuous recording of it by name follows it, says so once each
 * way, and each interval after the restart holds the workload's samples
 * at the rate due for its length. Then, with the same container, a
 * recording without --continuous ends a few seconds after the container
 * stops (python as pid 1 ignores SIGTERM: -t 1 kills it), its output
 * written, exit 0, as -p's does when its process ends.
 */
Test(containers, docker_restart_followed_and_exit_ends_the_recording, .init = docker_engine_start,
     .fini = docker_engine_stop, .timeout = 600)
{
	const char *dir = temp_dir();
	char name[64], id[128], alpha[PATH_MAX], want[512], paths[8][PATH_MAX];
	char *spool = temp_path(dir, "spool"), *err = temp_path(dir, "err"), *folded = temp_path(dir, "i.folded"),
	     *out = temp_path(dir, "exit.folded"), *err2 = temp_path(dir, "err2"), *text;
	int line = script_marker("../tests/fixtures/pywork.py", "alpha-call"), n = 0;
	double secs[8], t0;
	struct folded f;

	docker_engine_check();
	snprintf(name, sizeof(name), "restarted-%d", (int)getpid());
	snprintf(alpha, sizeof(alpha), "alpha (/pywork.py:%d)", line);
	run_split(name, "600", id);
	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "-F", "99", "--container", name,
							 "--continuous", spool, "--interval", "4s", NULL },
				  err);
	wait_for_text(err, SAMPLING, 60);
	wait_for_text(err, "pyebpf: wrote ", 30); /* an interval before the restart */
	free(docker((const char *const[]){ "docker", "restart", "-t", "1", name, NULL }));
	/* Two intervals after it (the first holds the restart), then half of a third. */
	for (t0 = mono(); n < 2 && mono() - t0 < 30; sleep_s(0.1)) {
		text = file_text(err);
		n = intervals_after(text, " started again ", paths, secs, 8);
		free(text);
		recorders_check("two intervals after the restart");
	}
	cr_assert_eq(n, 2, "%d intervals written after the restart", n);
	sleep_s(2);
	kill(rec, SIGTERM);
	cr_assert_eq(wait_exit(rec, 30), 0);
	text = file_text(err);
	snprintf(want, sizeof(want), "pyebpf: container %s (%.12s) stopped at ", name, id);
	cr_assert_eq(occurrences(text, want), 1, "%s", text);
	cr_assert_eq(occurrences(text, " stopped at "), 1, "%s", text);
	snprintf(want, sizeof(want), "pyebpf: container %s (%.12s) started again ", name, id);
	cr_assert_eq(occurrences(text, want), 1, "%s", text);
	cr_assert_eq(occurrences(text, " started again "), 1, "%s", text);
	cr_assert(strstr(text, " (a new cgroup): recording it\n"), "%s", text);
	cr_log_info("%s", text);
	n = intervals_after(text, " started again ", paths, secs, 8);
	cr_assert_eq(n, 3, "%s", text);
	for (int i = 0; i < n; i++) {
		struct run_result r;
		uint64_t due = (uint64_t)(99 * secs[i]), ab;

		run((const char *const[]){ PYEBPF, "report", paths[i], "-o", folded, NULL }, 60, &r);
		cr_assert_eq(r.status, 0, "%s: %s", paths[i], r.err);
		run_result_free(&r);
		folded_load(folded, &f);
		ab = count_all(&f, alpha, "work (/pywork.py:") +
		     count_all(&f, "beta (/pywork.py:", "work (/pywork.py:");
		cr_log_info("interval %d after the restart: %llu samples in %.1f s (%llu due), %llu in alpha/beta\n", i,
			    (unsigned long long)f.total, secs[i], (unsigned long long)due, (unsigned long long)ab);
		/* The first holds the restart's gap (under a second: the old process killed, the new one's start
		 * and the quarter second the new cgroup may wait to be seen): half the rate due is still far. */
		cr_assert_geq(f.total * 2, due, "%s: %llu samples in %.1f s", paths[i], (unsigned long long)f.total,
			      secs[i]);
		cr_assert_geq(ab * 10, f.total * 8, "%s: alpha/beta in %llu of %llu", paths[i], (unsigned long long)ab,
			      (unsigned long long)f.total);
		folded_free(&f);
	}
	free(text);

	/* Without --continuous, the container's exit ends the recording. */
	rec = spawn_capture((const char *const[]){ PYEBPF, "record", "-F", "99", "--container", name, "-o", out, NULL },
			    err2);
	wait_for_text(err2, SAMPLING, 60);
	sleep_s(1);
	free(docker((const char *const[]){ "docker", "stop", "-t", "1", name, NULL }));
	t0 = mono();
	cr_assert_eq(wait_exit(rec, 30), 0);
	double ended = mono() - t0;
	text = file_text(err2);
	cr_log_info("the recording ended %.1f s after docker stop returned: %s", ended, text);
	/* The grace (3 s) and a look (0.25 s), and the output's writing. */
	cr_assert_lt(ended, 5, "%.1f s: %s", ended, text);
	snprintf(want, sizeof(want), "pyebpf: container %s (%.12s) exited: the recording ends\n", name, id);
	cr_assert(strstr(text, want), "%s", text);
	cr_assert(strstr(text, "pyebpf: wrote "), "%s", text);
	free(text);
	folded_load(out, &f);
	cr_assert_gt(f.total, 50, "%llu samples", (unsigned long long)f.total);
	cr_assert_gt(count_all(&f, alpha, NULL), 0);
	folded_free(&f);
	free(spool);
	free(err);
	free(err2);
	free(folded);
	free(out);
}

/* ---- a real podman: no daemon, its own storage ---------------------------- */

static char podman_dir[64], podman_error[1200];

/* podman ARGS... with the test's storage (tests/engines/podman.sh do): its stdout, trailing newline removed. */
static char *podman(const char *const args[])
{
	const char *argv[24] = { "bash", "../tests/engines/podman.sh", "do", podman_dir };
	int n = 4;

	for (int i = 0; args[i] && n < 23; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return docker(argv); /* the same: the command must succeed */
}

static void podman_engine_start(void)
{
	struct run_result r;

	if (system("command -v podman >/dev/null 2>&1") != 0)
		cr_skip_test("podman is not installed (make test-deps installs it)");
	snprintf(podman_dir, sizeof(podman_dir), "/tmp/pyebpf-pm-%d", (int)getpid());
	run((const char *const[]){ "bash", "../tests/engines/podman.sh", "image", podman_dir, DOCKER_IMAGE, "trixie",
				   NULL },
	    500, &r);
	/* Failed at the test's first step (an assertion in .init is a crash). */
	if (r.status) {
		fprintf(stderr, "podman.sh image:\n%s", r.err);
		snprintf(podman_error, sizeof(podman_error), "podman.sh image (exit %d): %s", r.status,
			 last_line(r.err));
	}
	run_result_free(&r);
}

static void podman_engine_stop(void)
{
	struct run_result r;

	if (!podman_dir[0])
		return;
	run((const char *const[]){ "bash", "../tests/engines/podman.sh", "stop", podman_dir, NULL }, 180, &r);
	run_result_free(&r);
}

/*
 * podman keeps no daemon and, here, its storage where no default or
 * storage.conf says (--root, --runroot): `--container NAME` finds the
 * container through the storage its conmon names, follows it across a
 * `podman restart` (a new cgroup), and the samples carry its name.
 */
Test(containers, podman_container_by_name_followed_across_a_restart, .init = podman_engine_start,
     .fini = podman_engine_stop, .timeout = 600)
{
	const char *dir = temp_dir();
	char name[64], script[PATH_MAX], mount[PATH_MAX + 32], alpha[PATH_MAX], want[512], frame[128],
		paths[8][PATH_MAX];
	char *spool = temp_path(dir, "spool"), *err = temp_path(dir, "err"), *folded = temp_path(dir, "i.folded"), *id,
	     *text, *pidtext;
	int line = script_marker("../tests/fixtures/pywork.py", "alpha-call"), n = 0;
	double secs[8], t0;
	struct folded f;
	pid_t pid;

	cr_assert(!podman_error[0], "%s", podman_error);
	snprintf(name, sizeof(name), "podbox-%d", (int)getpid());
	snprintf(alpha, sizeof(alpha), "alpha (/pywork.py:%d)", line);
	cr_assert(realpath("../tests/fixtures/pywork.py", script), "%s", strerror(errno));
	snprintf(mount, sizeof(mount), "%s:/pywork.py:ro", script);
	id = docker((const char *const[]){ "bash", "../tests/engines/podman.sh", "run", podman_dir, name, "-v", mount,
					   DOCKER_IMAGE, "python3", "/pywork.py", "split", "600", NULL });
	pidtext = podman((const char *const[]){ "inspect", "-f", "{{.State.Pid}}", name, NULL });
	pid = (pid_t)atoi(pidtext);
	free(pidtext);
	for (int i = 0; i < 600 && proc_cpu(pid) < 0.5; i++)
		sleep_s(0.05);
	cr_assert_geq(proc_cpu(pid), 0.5, "%s's python3 (pid %d) did not start", name, (int)pid);

	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "-F", "99", "--container", name,
							 "--continuous", spool, "--interval", "3s", NULL },
				  err);
	wait_for_text(err, SAMPLING, 60);
	wait_for_text(err, "pyebpf: wrote ", 30); /* an interval before the restart */
	free(podman((const char *const[]){ "restart", "-t", "1", name, NULL }));
	for (t0 = mono(); n < 2 && mono() - t0 < 30; sleep_s(0.1)) {
		text = file_text(err);
		n = intervals_after(text, " started again ", paths, secs, 8);
		free(text);
		recorders_check("two intervals after the restart");
	}
	cr_assert_eq(n, 2, "%d intervals written after the restart", n);
	kill(rec, SIGTERM);
	cr_assert_eq(wait_exit(rec, 30), 0);
	text = file_text(err);
	cr_log_info("%s", text);
	snprintf(want, sizeof(want), "pyebpf: container %s (%.12s) stopped at ", name, id);
	cr_assert_eq(occurrences(text, want), 1, "%s", text);
	snprintf(want, sizeof(want), "pyebpf: container %s (%.12s) started again ", name, id);
	cr_assert_eq(occurrences(text, want), 1, "%s", text);
	free(text);

	/* The whole interval after the one with the restart: the workload at its rate, under its name. */
	struct run_result r;
	uint64_t due = (uint64_t)(99 * secs[1]), ab;

	run((const char *const[]){ PYEBPF, "report", paths[1], "--containers", "-o", folded, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s: %s", paths[1], r.err);
	run_result_free(&r);
	folded_load(folded, &f);
	snprintf(frame, sizeof(frame), ";[container %s (%.12s)];", name, id);
	ab = count_all(&f, alpha, "work (/pywork.py:") + count_all(&f, "beta (/pywork.py:", "work (/pywork.py:");
	cr_log_info("after the restart: %llu samples in %.1f s (%llu due), %llu in alpha/beta\n",
		    (unsigned long long)f.total, secs[1], (unsigned long long)due, (unsigned long long)ab);
	cr_assert_geq(f.total * 2, due, "%llu samples in %.1f s", (unsigned long long)f.total, secs[1]);
	cr_assert_geq(ab * 10, f.total * 8, "alpha/beta in %llu of %llu", (unsigned long long)ab,
		      (unsigned long long)f.total);
	for (size_t i = 0; i < f.n; i++)
		cr_assert(strstr(f.lines[i].stack, frame), "not under %s: %s", frame, f.lines[i].stack);
	folded_free(&f);
	free(id);
	free(spool);
	free(err);
	free(folded);
}
