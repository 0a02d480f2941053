// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * --mode memory against real Pythons, with answers the workloads know
 * (tests/fixtures/memwork.py): leak() keeps 8 MiB a round, churn() takes
 * and frees 32 MiB, spin() allocates nothing; numpy arrays grown in one
 * function and half freed in another. The workload prints its VmRSS when
 * its rounds begin and end, then holds its memory while the recording
 * stops: what is held then is what the profile must say is held.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integ.h"
#include "docker_engine.h"
#include "../pythons.h"

#define WORKLOAD "../tests/fixtures/memwork.py"
#define MIB (1024.0 * 1024.0)

TestSuite(memory, .timeout = 300);

/* The last recording saw growth at the LRU tracepoint (fentry refused), whose per-CPU batches can flush
 * a few pages of one function's growth while the next runs. */
static bool lru_batches;

/* What the workload said of itself. */
struct truth {
	double rss_start, rss_end, kept; /* bytes */
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *s = NULL;
	size_t cap = 0;
	ssize_t n;

	cr_assert(f, "%s: %s", path, strerror(errno));
	n = getdelim(&s, &cap, '\0', f);
	fclose(f);
	cr_assert_geq(n, 0, "%s: empty", path);
	return s;
}

static void read_truth(const char *text, struct truth *t)
{
	const char *s = strstr(text, "rss-start "), *e = strstr(text, "rss-end "), *k = strstr(text, "kept ");
	long a, b, c;

	cr_assert(s && e && k && sscanf(s, "rss-start %ld", &a) == 1 && sscanf(e, "rss-end %ld", &b) == 1 &&
			  sscanf(k, "kept %ld", &c) == 1,
		  "no truth in: %s", text);
	*t = (struct truth){ .rss_start = a * 1024.0, .rss_end = b * 1024.0, .kept = c * 1024.0 };
}

/*
 * pyebpf record --mode memory OPTS... -o pb [-- ENV... PYTHON memwork.py MODE ROUNDS 120]:
 * stopped (SIGINT) once the workload has told its truth, while it holds
 * its memory. The recording's stderr (the workload's too) into *err.
 */
/* What record_held() runs pyebpf under, or NULL: as a command prefix (the next test's namespace). */
static const char *const *record_prefix;

static void record_held(const char *const opts[], const char *const env[], const char *python, const char *mode,
			const char *rounds, const char *pb, char **err, struct truth *t)
{
	const char *dir = temp_dir();
	char *err_path = temp_path(dir, "record.err"), script[PATH_MAX];
	const char *argv[48];
	int n = 0, status;
	pid_t pid;

	for (int i = 0; record_prefix && record_prefix[i]; i++)
		argv[n++] = record_prefix[i];
	for (const char *const *a = (const char *const[]){ PYEBPF, "record", "--mode", "memory", "-o", pb, NULL }; *a;
	     a++)
		argv[n++] = *a;
	cr_assert(realpath(WORKLOAD, script), "%s", strerror(errno));
	for (int i = 0; opts && opts[i]; i++)
		argv[n++] = opts[i];
	argv[n++] = "--";
	if (env && env[0]) {
		argv[n++] = "env";
		for (int i = 0; env[i]; i++)
			argv[n++] = env[i];
	}
	argv[n++] = python;
	argv[n++] = script;
	argv[n++] = mode;
	argv[n++] = rounds;
	argv[n++] = "120"; /* held until the recording stops it */
	argv[n] = NULL;
	pid = spawn_capture(argv, err_path);
	wait_for_text(err_path, "rss-end", 180);
	kill(pid, SIGINT);
	status = wait_exit(pid, 60);
	*err = slurp(err_path);
	cr_assert_eq(status, 0, "exit %d: %s", status, *err);
	lru_batches = strstr(*err, "refuses fentry") != NULL;
	read_truth(*err, t);
	free(err_path);
}

/* One value of a memory recording, as folded lines (counts in bytes or points). */
static void view(const char *pb, const char *type, struct folded *f)
{
	char name[64], *out;
	struct run_result r;

	snprintf(name, sizeof(name), "%s.folded", type);
	out = temp_path(temp_dir(), name);
	run((const char *const[]){ PYEBPF, "report", pb, "--sample-type", type, "-o", out, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	folded_load(out, f);
	free(out);
}

/* Bytes of the folded lines whose stack has this frame. */
static double bytes_in(const struct folded *f, const char *frame)
{
	return (double)count_all(f, frame, NULL);
}

/*
 * The hidden answer: of what is held, >= 85% under leak() (at its line),
 * the total within 20% of the program's own VmRSS growth; churn()'s
 * traffic beside it in alloc_space; spin() in neither.
 */
/* script: where the workload's markers are read; shown: its path in the frames (inside a container, its own). */
static void check_leak(const char *label, const char *pb, const struct truth *t, const char *script, const char *shown,
		       int rounds)
{
	struct folded in, al;
	char leak[PATH_MAX + 64], churn[PATH_MAX + 64], spin[PATH_MAX + 64];
	double grew = t->rss_end - t->rss_start, held, leak_held, churn_alloc, leak_alloc, spin_any;

	snprintf(leak, sizeof(leak), "leak (%s:%d)", shown, script_marker(script, "leak"));
	snprintf(churn, sizeof(churn), "churn (%s:%d)", shown, script_marker(script, "churn"));
	snprintf(spin, sizeof(spin), "spin (%s:", shown);
	view(pb, "inuse_space", &in);
	view(pb, "alloc_space", &al);
	held = (double)in.total;
	leak_held = bytes_in(&in, leak);
	churn_alloc = bytes_in(&al, churn);
	leak_alloc = bytes_in(&al, leak);
	spin_any = bytes_in(&in, spin) + bytes_in(&al, spin);
	cr_log_info("%s: held %.1f MiB (VmRSS grew %.1f MiB), %.1f%% under leak(); grew %.1f MiB, churn %.1f MiB, "
		    "leak %.1f MiB, spin %.1f MiB\n",
		    label, held / MIB, grew / MIB, 100 * leak_held / held, (double)al.total / MIB, churn_alloc / MIB,
		    leak_alloc / MIB, spin_any / MIB);
	cr_assert(held > 0.8 * grew && held < 1.2 * grew, "%s: %.1f MiB held, VmRSS grew %.1f MiB", label, held / MIB,
		  grew / MIB);
	cr_assert_geq(leak_held, 0.85 * held, "%s: %.1f of %.1f MiB held under %s", label, leak_held / MIB, held / MIB,
		      leak);
	/* rounds of 32 MiB taken and given back, and leak()'s 8 MiB each. */
	cr_assert(churn_alloc > 0.75 * rounds * 32 * MIB && churn_alloc < 1.25 * rounds * 32 * MIB,
		  "%s: %.1f MiB grew under churn()", label, churn_alloc / MIB);
	cr_assert(leak_alloc > 0.8 * t->kept && leak_alloc < 1.2 * t->kept, "%s: %.1f MiB grew under leak(), kept %.1f",
		  label, leak_alloc / MIB, t->kept / MIB);
	/* spin() maps nothing in: none at fentry; at the tracepoint, a batch's last pages at most (1% of what grew). */
	if (lru_batches)
		cr_assert_leq(spin_any, 0.01 * (double)al.total, "%s: %.1f MiB under spin() of %.1f MiB", label,
			      spin_any / MIB, (double)al.total / MIB);
	else
		cr_assert_eq(spin_any, 0, "%s: %.1f MiB under spin()", label, spin_any / MIB);
	folded_free(&in);
	folded_free(&al);
}

/* Is py one of versions ("3.11": Debian's own, not pyenv's)? Free-threaded builds: ft. */
static bool of_versions(const struct python *py, const char *const versions[], size_t n, bool ft)
{
	char v[16];

	snprintf(v, sizeof(v), "%d.%d", py->major, py->minor);
	if (py->free_threaded)
		return ft;
	if (!strcmp(v, "3.11"))
		return !strncmp(py->path, "/usr/bin/", 9);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v, versions[i]))
			return true;
	return false;
}

/* The interpreters the answer is checked on (the issue's, and 2.7), and each free-threaded build
 * (3.13t, 3.14t, 3.15t). */
static bool wanted(const struct python *py)
{
	static const char *const versions[] = { "2.7", "3.8", "3.11", "3.12", "3.14" };

	return of_versions(py, versions, sizeof(versions) / sizeof(versions[0]), true);
}

Test(memory, leak_churn_spin_on_every_interpreter)
{
	struct python pys[32];
	char script[PATH_MAX];
	int n = setup_pythons(WORKLOAD, script, pys, 32), tested = 0;

	for (int i = 0; i < n; i++) {
		/* 3.13t's mimalloc keeps freed memory resident for a while (it
		 * purges it after a delay): the next allocation reuses churn()'s
		 * pages without a fault, and what the kernel sees held is churn()'s
		 * growth. With the purge at once, freed memory goes back as glibc's
		 * does (docs/memory.md says so to users). */
		const char *const ft_env[] = { "MIMALLOC_PURGE_DELAY=0", NULL };
		char *pb = temp_path(temp_dir(), "leak.pb.gz"), *err;
		struct truth t;

		if (!wanted(&pys[i]))
			continue;
		record_held(NULL, pys[i].free_threaded ? ft_env : NULL, pys[i].path, "leak", "30", pb, &err, &t);
		cr_assert(strstr(err, "pyebpf: memory: the targets mapped in "), "%s", err);
		check_leak(pys[i].path, pb, &t, script, script, 30);
		free(err);
		free(pb);
		tested++;
	}
	cr_assert_geq(tested, 4, "only %d of the interpreters were found", tested);
}

/* numpy's buffers (Debian's python3-numpy): what grow() made and shrink()
 * did not free is held under grow(), the rest went back. */
Test(memory, numpy_arrays_grown_and_freed)
{
	const char *python = "/usr/bin/python3.11";
	char script[PATH_MAX], grow[PATH_MAX + 64];
	char *pb = temp_path(temp_dir(), "numpy.pb.gz"), *err;
	struct folded in, al;
	struct truth t;
	struct run_result r;

	run((const char *const[]){ python, "-c", "import numpy", NULL }, 60, &r);
	if (r.status)
		cr_skip_test("Debian's python3-numpy is not installed");
	run_result_free(&r);
	cr_assert(realpath(WORKLOAD, script));
	record_held(NULL, NULL, python, "numpy", "20", pb, &err, &t);
	snprintf(grow, sizeof(grow), "grow (%s:%d)", script, script_marker(script, "grow"));
	view(pb, "inuse_space", &in);
	view(pb, "alloc_space", &al);
	double held = (double)in.total, grew = t.rss_end - t.rss_start, under = bytes_in(&in, grow);

	cr_log_info("numpy: held %.1f MiB (VmRSS grew %.1f, kept %.1f), %.1f%% under grow(); %.1f MiB grew in all\n",
		    held / MIB, grew / MIB, t.kept / MIB, 100 * under / held, (double)al.total / MIB);
	cr_assert(held > 0.8 * grew && held < 1.2 * grew, "%.1f MiB held, VmRSS grew %.1f MiB", held / MIB, grew / MIB);
	cr_assert_geq(under, 0.85 * held, "%.1f of %.1f MiB held under %s", under / MIB, held / MIB, grow);
	cr_assert_geq(bytes_in(&al, grow), 0.8 * t.kept, "%.1f MiB grew under grow()", bytes_in(&al, grow) / MIB);
	folded_free(&in);
	folded_free(&al);
	free(err);
	free(pb);
}

/*
 * The same answer on the kernel it runs on (the matrix's guests run it):
 * growth seen at fentry where the kernel allows it, else at the LRU
 * tracepoint, with the line that says so. Fewer rounds: a guest has 1 GiB.
 */
Test(kernels, memory_mode_reads_the_leak_on_this_kernel, .timeout = 600)
{
	const char *python = "/usr/bin/python3.11";
	char script[PATH_MAX], *pb = temp_path(temp_dir(), "kernel-leak.pb.gz"), *err;
	struct truth t;

	cr_assert(realpath(WORKLOAD, script));
	if (access(python, X_OK))
		cr_skip_test("no %s here", python);
	/* A point every 128 KiB: 10 rounds keep 80 MiB, 640 points, so the 20% the check allows is five
	 * standard deviations of the sampling (at 512 KiB, 160 points: 2.5, and a guest once read +20.4%). */
	record_held((const char *const[]){ "--sample-bytes", "128K", NULL }, NULL, python, "leak", "10", pb, &err, &t);
	cr_log_info("growth seen %s\n",
		    strstr(err, "refuses fentry") ? "at the LRU tracepoint (fentry refused)" : "at fentry");
	check_leak(python, pb, &t, script, script, 10);
	free(err);
	free(pb);
}

/*
 * A fresh host, most containers and a DaemonSet that mounts debugfs alone
 * have no tracing filesystem: in a mount namespace of its own with tracefs
 * and debugfs unmounted (the shell checks they are gone, or exits 97
 * before pyebpf starts), memory mode attaches all it needs and reads the
 * same answer, twice: as root, with the syscalls' own tracepoints (their
 * ids read through a tracefs it mounts privately), and without
 * CAP_SYS_ADMIN, which may not mount, at the raw syscall tracepoints,
 * saying so. Neither leaves a tracefs mounted here.
 */
Test(memory, without_tracefs_or_debugfs)
{
	const char *python = "/usr/bin/python3.11";
	char script[PATH_MAX], *pb = temp_path(temp_dir(), "notracefs.pb.gz"), *err;
	struct truth t;
#define UNMOUNTED                                                                                                   \
	"unshare", "--mount", "--propagation", "private", "sh", "-c",                                               \
		"for m in $(awk '$3 == \"tracefs\" || $3 == \"debugfs\" { print $2 }' /proc/mounts | sort -r); do " \
		"umount -l \"$m\" || exit 97; done; "                                                               \
		"! grep -qE ' (tracefs|debugfs) ' /proc/mounts || exit 97; exec \"$@\"",                            \
		"sh"
	static const char *const as_root[] = { UNMOUNTED, NULL };
	static const char *const no_mount[] = { UNMOUNTED, "setpriv", "--inh-caps=-sys_admin",
						"--bounding-set=-sys_admin", NULL };
#undef UNMOUNTED
	static const char *const *const ways[] = { as_root, no_mount };
	const char *raw_line = "memory given back is seen at the raw syscall tracepoints";
	struct run_result r;
	char *before;

	cr_assert(realpath(WORKLOAD, script));
	run((const char *const[]){ "grep", "-c", " tracefs ", "/proc/self/mounts", NULL }, 10, &r);
	before = strdup(r.out ? r.out : "");
	run_result_free(&r);
	for (int w = 0; w < 2; w++) {
		record_prefix = ways[w];
		record_held(NULL, NULL, python, "leak", "10", pb, &err, &t);
		record_prefix = NULL;
		cr_assert_null(strstr(err, "cannot attach"), "%s", err);
		if (w)
			cr_assert(strstr(err, raw_line), "without CAP_SYS_ADMIN, no line says why: %s", err);
		else
			cr_assert_null(strstr(err, raw_line), "as root: %s", err);
		check_leak(w ? "raw syscall tracepoints" : "syscall tracepoints by id", pb, &t, script, script, 10);
		free(err);
	}
	run((const char *const[]){ "grep", "-c", " tracefs ", "/proc/self/mounts", NULL }, 10, &r);
	cr_assert_str_eq(r.out, before, "tracefs mounts here: %s before, %s after", before, r.out);
	run_result_free(&r);
	free(before);
	free(pb);
}

/*
 * -a: the whole machine, beside another Python that grows memory of its
 * own all the while: the workload's pid alone (report --pid) reads its
 * answer, and the other's growth stays under its own pid and function.
 */
Test(memory, system_wide_beside_another_grower)
{
	const char *dir = temp_dir(), *python = "/usr/bin/python3.11";
	char *pb = temp_path(dir, "all.pb.gz"), *err = temp_path(dir, "rec.err"), *werr = temp_path(dir, "work.err");
	char script[PATH_MAX], pidbuf[16], *text;
	struct truth t;
	struct folded f;
	struct run_result r;

	cr_assert(realpath(WORKLOAD, script));
	pid_t other = spawn((const char *const[]){ python, "-c",
						   "import time\n"
						   "def decoy(keep):\n"
						   "    keep.append(bytearray(1 << 20))\n"
						   "keep = []\n"
						   "while True:\n"
						   "    decoy(keep)\n"
						   "    del keep[:-64]\n"
						   "    time.sleep(0.01)\n",
						   NULL });
	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "-a", "--mode", "memory", "-o", pb, NULL },
				  err);
	wait_for_text(err, SAMPLING, 60);
	pid_t work = spawn_capture((const char *const[]){ python, script, "leak", "30", "120", NULL }, werr);
	wait_for_text(werr, "rss-end", 120);
	kill(rec, SIGINT);
	cr_assert_eq(wait_exit(rec, 60), 0);
	kill_wait(work);
	kill_wait(other);
	text = slurp(werr);
	read_truth(text, &t);
	free(text);
	/* The workload's own samples, by pid. */
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)work);
	char *mine = temp_path(dir, "mine.pb.gz");
	run((const char *const[]){ PYEBPF, "report", pb, "--pid", pidbuf, "-o", mine, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	check_leak("-a, its pid", mine, &t, script, script, 30);
	/* The other grower: under decoy(), never under the workload's functions. */
	view(pb, "alloc_space", &f);
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)other);
	uint64_t decoy = count_all(&f, "decoy (<string>:3)", NULL);
	cr_assert_gt(decoy, 0, "no growth under decoy()");
	for (size_t i = 0; i < f.n; i++)
		cr_assert(!strstr(f.lines[i].stack, "decoy (") ||
				  (!strstr(f.lines[i].stack, "leak (") && !strstr(f.lines[i].stack, "churn (")),
			  "%s", f.lines[i].stack);
	cr_log_info("-a: decoy() grew %.1f MiB beside the workload\n", (double)decoy / MIB);
	folded_free(&f);
	free(mine);
	free(pb);
	free(err);
	free(werr);
}

/*
 * In a container (the tests' private docker engine): --container NAME, the
 * workload's answer at the path it has inside the container.
 */
Test(memory, in_a_container, .init = docker_engine_start, .fini = docker_engine_stop, .timeout = 600)
{
	const char *dir = temp_dir();
	char name[64], mount[PATH_MAX + 32], script[PATH_MAX], *pb = temp_path(dir, "c.pb.gz");
	char *err = temp_path(dir, "rec.err"), *logs;
	struct truth t;

	docker_engine_check();
	cr_assert(realpath(WORKLOAD, script));
	snprintf(name, sizeof(name), "memwork-%d", (int)getpid());
	snprintf(mount, sizeof(mount), "%s:/memwork.py:ro", script);
	/* The recording starts while the container waits: it sees all of the rounds.
	 * (The truth on stdout: docker logs writes the container's stderr to its own.) */
	free(docker((const char *const[]){ "docker", "run", "-d", "--name", name, "--network", "none", "-v", mount,
					   DOCKER_IMAGE, "sh", "-c",
					   "sleep 3; exec python3 /memwork.py leak 30 120 2>&1", NULL }));
	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "--mode", "memory", "--container", name,
							 "-o", pb, NULL },
				  err);
	wait_for_text(err, SAMPLING, 60);
	/* All of the log (docker() keeps an answer's first line). */
	for (int i = 0; i < 600; i++) {
		struct run_result lr;

		run((const char *const[]){ "docker", "logs", name, NULL }, 60, &lr);
		free(lr.err);
		logs = lr.out;
		if (strstr(logs, "rss-end"))
			break;
		if (i < 599)
			free(logs);
		sleep_s(0.2);
	}
	cr_assert(strstr(logs, "rss-end"), "the workload never ended its rounds: %s", logs);
	kill(rec, SIGINT);
	cr_assert_eq(wait_exit(rec, 60), 0);
	read_truth(logs, &t);
	free(logs);
	free(docker((const char *const[]){ "docker", "rm", "-f", name, NULL }));
	check_leak("container", pb, &t, script, "/memwork.py", 30);
	free(pb);
	free(err);
}

/*
 * A continuous memory recording in `serve`: the timeline counts growth, in
 * bytes, and a range's table is what its newest interval holds, in sizes.
 */
Test(memory, continuous_intervals_in_serve)
{
	const char *dir = temp_dir();
	char *spool = temp_path(dir, "spool"), *err = temp_path(dir, "serve.err"), script[PATH_MAX], url[300], u[400];
	char *body = NULL, line[512];
	struct run_result r;

	cr_assert(realpath(WORKLOAD, script));
	run((const char *const[]){ PYEBPF, "record", "--mode", "memory", "--continuous", spool, "--interval", "1s",
				   "-d", "3.5", "--", "/usr/bin/python3.11", script, "leak", "30", "20", NULL },
	    60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	pid_t srv = spawn_capture((const char *const[]){ PYEBPF, "serve", spool, "--listen", "127.0.0.1:0", NULL },
				  err);
	wait_for_text(err, "pyebpf: serving ", 20);
	FILE *f = fopen(err, "r");
	cr_assert(f && fgets(line, sizeof(line), f));
	fclose(f);
	cr_assert_eq(sscanf(line, "pyebpf: serving %*s at %255s", url), 1, "%s", line);
	snprintf(u, sizeof(u), "%sapi/intervals", url);
	cr_assert_eq(http(u, NULL, &body, NULL), 200);
	cr_assert(strstr(body, "\"memory\":524288"), "%s", body);
	free(body);
	snprintf(u, sizeof(u), "%sapi/top?from=0&to=3", url);
	cr_assert_eq(http(u, NULL, &body, NULL), 200);
	/* The first row: leak(), held, in MiB. */
	const char *head = strstr(body, "FUNCTION\n"), *row = head ? head + strlen("FUNCTION\n") : NULL;
	const char *end = row ? strchr(row, '\n') : NULL;

	cr_assert(end, "%s", body);
	cr_assert(memmem(row, (size_t)(end - row), " MiB ", 5) && memmem(row, (size_t)(end - row), "leak (", 6), "%s",
		  body);
	free(body);
	kill_wait(srv);
	free(spool);
	free(err);
}

/* Small objects (tuples, dicts, strings in pymalloc's arenas, and the list
 * that keeps them growing): held under records(), at its line. */
Test(memory, small_objects_in_pymalloc_arenas)
{
	struct python pys[32];
	char script[PATH_MAX], records[PATH_MAX + 64];
	int n = setup_pythons(WORKLOAD, script, pys, 32), tested = 0;

	for (int i = 0; i < n; i++) {
		char v[16], *pb, *err;
		struct folded in;
		struct truth t;

		snprintf(v, sizeof(v), "%d.%d", pys[i].major, pys[i].minor);
		/* the oldest, Debian's and the newest without the GIL's removal */
		if (pys[i].free_threaded ||
		    (strcmp(v, "2.7") && strcmp(pys[i].path, "/usr/bin/python3.11") && strcmp(v, "3.14")))
			continue;
		pb = temp_path(temp_dir(), "objects.pb.gz");
		record_held(NULL, NULL, pys[i].path, "objects", "10", pb, &err, &t);
		snprintf(records, sizeof(records), "records (%s:%d)", script, script_marker(script, "records"));
		view(pb, "inuse_space", &in);
		double held = (double)in.total, grew = t.rss_end - t.rss_start, under = bytes_in(&in, records);

		cr_log_info("%s objects: held %.1f MiB (VmRSS grew %.1f), %.1f%% under records()\n", pys[i].path,
			    held / MIB, grew / MIB, 100 * under / held);
		cr_assert(held > 0.8 * grew && held < 1.2 * grew, "%s: %.1f MiB held, VmRSS grew %.1f MiB", pys[i].path,
			  held / MIB, grew / MIB);
		cr_assert_geq(under, 0.85 * held, "%s: %.1f of %.1f MiB held under %s", pys[i].path, under / MIB,
			      held / MIB, records);
		folded_free(&in);
		free(err);
		free(pb);
		tested++;
	}
	cr_assert_geq(tested, 2, "only %d of the interpreters were found", tested);
}

/* Of the interpreters, those a command run to its end is checked on: the oldest, Debian's, the newest. */
static bool wanted_at_exit(const struct python *py)
{
	static const char *const versions[] = { "2.7", "3.12", "3.14", "3.15" };

	return of_versions(py, versions, sizeof(versions) / sizeof(versions[0]), false);
}

/*
 * record -- CMD of a program run to its end (memwork.py exit): keep()
 * keeps 200 MiB to the end, passing() holds 64 MiB at the peak and frees
 * it, early() took and freed 64 MiB before; then the interpreter's
 * teardown frees all that keep() kept, and the process exits. What it held
 * at its end is its inuse_space (memray's leaks view), what it held at its
 * high-water mark its peak_space (memray's default), each at its function.
 */
Test(memory, a_command_run_to_its_end_held_at_its_end_and_at_its_peak)
{
	struct python pys[32];
	char script[PATH_MAX], keep[PATH_MAX + 64], passing[PATH_MAX + 64], early[PATH_MAX + 64];
	int n = setup_pythons(WORKLOAD, script, pys, 32), tested = 0;
	bool v27 = false, v312 = false, v315 = false;
	const double kept = 50 * 4 * MIB, pass = 2 * (32 * MIB + 4096);

	snprintf(keep, sizeof(keep), "keep (%s:%d)", script, script_marker(script, "keep"));
	snprintf(passing, sizeof(passing), "passing (%s:%d)", script, script_marker(script, "passing"));
	snprintf(early, sizeof(early), "early (%s:%d)", script, script_marker(script, "early"));
	for (int i = 0; i < n; i++) {
		char *pb = temp_path(temp_dir(), "exit.pb.gz");
		struct folded in, pk, al;
		struct run_result r;

		if (!wanted_at_exit(&pys[i]))
			continue;
		/* A point every 128 KiB: 200 MiB is 1,600 points, 64 MiB 512. The pause after passing()'s free
		 * lets its release be read before the teardown's. */
		run((const char *const[]){ PYEBPF, "record", "--mode", "memory", "--sample-bytes", "128K", "-o", pb,
					   "--", pys[i].path, script, "exit", "50", "0.5", NULL },
		    120, &r);
		cr_assert_eq(r.status, 0, "%s: exit %d: %s", pys[i].path, r.status, r.err);
		cr_assert(strstr(r.err, "held at its end"), "%s: %s", pys[i].path, r.err);
		cr_assert(strstr(r.err, "--sample-type peak_space"), "%s: %s", pys[i].path, r.err);
		cr_assert_null(strstr(r.err, "went back with it"), "%s: %s", pys[i].path, r.err);
		view(pb, "inuse_space", &in);
		view(pb, "peak_space", &pk);
		view(pb, "alloc_space", &al);
		double in_keep = bytes_in(&in, keep), in_pass = bytes_in(&in, passing), in_early = bytes_in(&in, early);
		double pk_keep = bytes_in(&pk, keep), pk_pass = bytes_in(&pk, passing), pk_early = bytes_in(&pk, early);
		double al_early = bytes_in(&al, early);

		cr_log_info("%s run to its end: held at its end %.1f MiB (keep %.1f, passing %.1f, early %.1f); at its "
			    "peak %.1f MiB (keep %.1f, passing %.1f, early %.1f); early grew %.1f MiB\n",
			    pys[i].path, (double)in.total / MIB, in_keep / MIB, in_pass / MIB, in_early / MIB,
			    (double)pk.total / MIB, pk_keep / MIB, pk_pass / MIB, pk_early / MIB, al_early / MIB);
		cr_assert(in_keep > 0.85 * kept && in_keep < 1.15 * kept, "%s: %.1f MiB held at its end under keep()",
			  pys[i].path, in_keep / MIB);
		cr_assert_leq(in_pass + in_early, 0.1 * pass, "%s: %.1f MiB held at its end under passing()/early()",
			      pys[i].path, (in_pass + in_early) / MIB);
		cr_assert(pk_keep > 0.85 * kept && pk_keep < 1.15 * kept, "%s: %.1f MiB at its peak under keep()",
			  pys[i].path, pk_keep / MIB);
		cr_assert(pk_pass > 0.75 * pass && pk_pass < 1.25 * pass, "%s: %.1f MiB at its peak under passing()",
			  pys[i].path, pk_pass / MIB);
		cr_assert_leq(pk_early, 0.1 * pass, "%s: %.1f MiB at its peak under early(), freed before it",
			      pys[i].path, pk_early / MIB);
		cr_assert(al_early > 0.75 * pass && al_early < 1.25 * pass, "%s: %.1f MiB grew under early()",
			  pys[i].path, al_early / MIB);
		v27 |= pys[i].major == 2;
		v312 |= pys[i].major == 3 && pys[i].minor == 12;
		v315 |= pys[i].major == 3 && pys[i].minor == 15;
		folded_free(&in);
		folded_free(&pk);
		folded_free(&al);
		run_result_free(&r);
		free(pb);
		tested++;
	}
	cr_assert(v27 && v312 && v315, "2.7 %d, 3.12 %d, 3.15 %d found (of %d tested)", v27, v312, v315, tested);
}
