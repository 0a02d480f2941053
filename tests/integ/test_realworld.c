/*
 * Real software nobody here wrote, profiled as its users would: Debian's
 * numpy and scipy (on OpenBLAS) under --native, gunicorn serving Flask, a
 * multiprocessing pool, short CLI-like runs, Debian's stripped python3.11
 * without --native, an aiohttp server's asyncio task time. What they show must read true: one function one frame,
 * one thread one name, each worker its own tree, no invented mismatches, no
 * towers of [unknown]. A test whose package is not installed is skipped.
 */
#include "integ.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../pythons.h"

#define REAL "../tests/fixtures/real/"
#define DEBIAN_PY "/usr/bin/python3"

static void need_module(const char *python, const char *module)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "'%s' -c 'import %s' >/dev/null 2>&1", python, module);
	if (access(python, X_OK) != 0 || system(cmd) != 0)
		cr_skip_test("%s cannot import %s (install its Debian package)", python, module);
}

static const char *real_script(const char *name)
{
	static char path[PATH_MAX];
	char rel[256];

	snprintf(rel, sizeof(rel), REAL "%s", name);
	cr_assert(realpath(rel, path), "%s", rel);
	return path;
}

/* The leaf-most frame of a folded stack that is not the kernel's, in buf. */
static const char *user_leaf(const char *stack, char *buf, size_t size)
{
	const char *end = stack + strlen(stack), *p = end;

	buf[0] = '\0';
	while (p > stack) {
		const char *start = p;

		while (start > stack && start[-1] != ';')
			start--;
		size_t len = (size_t)(p - start);
		if (len < 4 || strncmp(p - 4, "_[k]", 4) != 0) {
			snprintf(buf, size, "%.*s", (int)len, start);
			return buf;
		}
		p = start > stack ? start - 1 : stack;
	}
	return buf;
}

/* Samples by leaf user frame: the heaviest one and its count. */
static uint64_t top_leaf(const struct folded *f, char *name, size_t size)
{
	uint64_t best = 0;

	name[0] = '\0';
	for (size_t i = 0; i < f->n; i++) {
		char leaf[4096], other[4096];
		uint64_t total = 0;

		user_leaf(f->lines[i].stack, leaf, sizeof(leaf));
		for (size_t k = 0; k < f->n; k++)
			if (!strcmp(user_leaf(f->lines[k].stack, other, sizeof(other)), leaf))
				total += f->lines[k].count;
		if (total > best) {
			best = total;
			snprintf(name, size, "%s", leaf);
		}
	}
	return best;
}

/* numpy's sort lives in _multiarray_umath without a symbol: every sample of
 * it must name one function (its FDE start), not one address each. */
Test(realworld, numpy_sort_without_symbols_is_one_function)
{
	char top[4096];
	const char *opts[] = { "--native", NULL }, *args[] = { NULL };
	struct folded f;
	struct run_result r;

	need_module(DEBIAN_PY, "numpy");
	record_script(opts, DEBIAN_PY, real_script("np_sort.py"), args, 60, &f, &r);
	uint64_t n = top_leaf(&f, top, sizeof(top));
	cr_assert(strstr(top, "_multiarray_umath") && strstr(top, "+0x"), "top leaf: %s", top);
	cr_assert_geq(n * 100, f.total * 60, "the sort is %llu of %llu samples: split by address?",
		      (unsigned long long)n, (unsigned long long)f.total);
	/* No other address of that module is a leaf of note. */
	uint64_t others = 0;
	for (size_t i = 0; i < f.n; i++) {
		char leaf[4096];
		user_leaf(f.lines[i].stack, leaf, sizeof(leaf));
		if (strstr(leaf, "_multiarray_umath") && strcmp(leaf, top))
			others += f.lines[i].count;
	}
	cr_assert_lt(others * 100, f.total * 10, "%llu samples in other _multiarray_umath leaves",
		     (unsigned long long)others);
	cr_assert(strstr(r.err, "named module+0xSTART of its function"), "%s", r.err);
	cr_assert_gt(count_all(&f, "sort (/usr/lib/python3/dist-packages/numpy/core/fromnumeric.py", "np_sort.py:9"),
		     f.total / 2, "the Python callers are kept");
	folded_free(&f);
	run_result_free(&r);
}

/* scipy.linalg.solve on OpenBLAS: stacks cut where the copy ends (a 540 KB
 * frame) are marked so, the Python callers above them, no mismatch. */
Test(realworld, scipy_solve_on_openblas_is_cut_not_mismatched)
{
	const char *opts[] = { "--native", NULL }, *args[] = { NULL };
	struct folded f;
	struct run_result r;

	need_module(DEBIAN_PY, "scipy.linalg");
	record_script(opts, DEBIAN_PY, real_script("scipy_solve.py"), args, 60, &f, &r);
	uint64_t mismatched = count_all(&f, "[native/Python mismatch]", NULL);
	uint64_t solve = count_all(&f, "solve (/usr/lib/python3/dist-packages/scipy/linalg/_basic.py", NULL);
	cr_assert_lt(mismatched * 100, f.total * 2, "%llu of %llu samples marked mismatched",
		     (unsigned long long)mismatched, (unsigned long long)f.total);
	cr_assert_gt(solve * 100, f.total * 30, "solve in %llu of %llu samples", (unsigned long long)solve,
		     (unsigned long long)f.total);
	/* Whatever is cut says where and why. */
	for (size_t i = 0; i < f.n; i++)
		if (strstr(f.lines[i].stack, "solve (") && strstr(f.lines[i].stack, "[stack copy ends"))
			cr_assert(strstr(f.lines[i].stack, "solve (") < strstr(f.lines[i].stack, "[stack copy ends"),
				  "the Python caller above the cut: %s", f.lines[i].stack);
	folded_free(&f);
	run_result_free(&r);
}

/* Roots "PREFIX..." of f whose stacks ran the app's code (fib), at most 8. */
static int app_roots(const struct folded *f, const char *prefix, char roots[8][64])
{
	int nroots = 0;

	for (size_t i = 0; i < f->n; i++) {
		const char *s = f->lines[i].stack;
		size_t len = strcspn(s, ";");
		if (strncmp(s, prefix, strlen(prefix)) || !strstr(s, "fib (") || len >= sizeof(roots[0]))
			continue;
		bool seen = false;
		for (int k = 0; k < nroots; k++)
			seen |= !strncmp(roots[k], s, len) && roots[k][len] == '\0';
		if (!seen && nroots < 8)
			snprintf(roots[nroots++], sizeof(roots[0]), "%.*s", (int)len, s);
	}
	return nroots;
}

/* gunicorn -w 2 serving tests/fixtures/real/FILE's `app` on 127.0.0.1:port
 * (into bind); skips the test when Flask or gunicorn is missing. */
static pid_t start_gunicorn(const char *file, int port, char *bind, size_t size)
{
	char app_dir[PATH_MAX], app[128];

	need_module(DEBIAN_PY, "flask");
	if (access("/usr/bin/gunicorn", X_OK))
		cr_skip_test("gunicorn is not installed");
	snprintf(app_dir, sizeof(app_dir), "%s", real_script(file));
	*strrchr(app_dir, '/') = '\0';
	snprintf(app, sizeof(app), "%.*s:app", (int)(strlen(file) - 3), file);
	snprintf(bind, size, "127.0.0.1:%d", port);
	return spawn(
		(const char *const[]){ "/usr/bin/gunicorn", "-w", "2", "-b", bind, "--chdir", app_dir, app, NULL });
}

/* n clients requesting http://bind/path one after another for seconds (a
 * refused connection while the workers boot is retried). */
static pid_t start_clients(const char *bind, const char *path, int n, int seconds)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "import threading, time, urllib.request as u\n"
		 "def client():\n"
		 "    end = time.time() + %d\n"
		 "    while time.time() < end:\n"
		 "        try: u.urlopen('http://%s%s').read()\n"
		 "        except OSError: time.sleep(0.05)\n"
		 "ts = [threading.Thread(target=client) for _ in range(%d)]\n"
		 "[t.start() for t in ts]\n"
		 "[t.join() for t in ts]\n",
		 seconds, bind, path, n);
	return spawn((const char *const[]){ DEBIAN_PY, "-c", cmd, NULL });
}

/* gunicorn and two workers: one command, several processes. By default one
 * tree, "gunicorn", so the endpoint is one tower of both workers' samples;
 * --processes each gives each worker its "gunicorn [pid N]" tree, and the
 * trace one track per process, named so. */
Test(realworld, gunicorn_workers_one_tree_unless_each)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "gunicorn.pb.gz"), *merged = temp_path(dir, "merged.folded"),
	     *each = temp_path(dir, "each.folded"), *trace = temp_path(dir, "t.json"), bind[64];
	struct folded f;
	struct run_result r;
	pid_t srv = start_gunicorn("flask_app.py", 20000 + getpid() % 20000, bind, sizeof(bind));
	pid_t loader = start_clients(bind, "/", 1, 12);
	sleep_s(2); /* the workers boot */
	const char *argv[] = { PYEBPF, "record", "-a", "-F", "499", "--comm", "gunicorn", "-d", "4", "-o", out, NULL };
	run(argv, 30, &r);
	kill_wait(loader);
	kill_wait(srv);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);

	char roots[8][64];
	const char *report_merged[] = { PYEBPF, "report", out, "-o", merged, NULL };
	run(report_merged, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	folded_load(merged, &f);
	cr_assert_eq(app_roots(&f, "gunicorn [pid ", roots), 0, "no per-process roots by default");
	cr_assert_eq(app_roots(&f, "gunicorn", roots), 1, "one root ran the app");
	cr_assert_str_eq(roots[0], "gunicorn");
	folded_free(&f);

	const char *report_each[] = { PYEBPF, "report", out, "--processes", "each", "-o", each, NULL };
	run(report_each, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	folded_load(each, &f);
	int nroots = app_roots(&f, "gunicorn [pid ", roots);
	cr_assert_geq(nroots, 2, "workers running the app, each its own root with --processes each: %d", nroots);
	folded_free(&f);

	/* The trace keeps a track per process, named as --processes each names
	 * the process frame. */
	const char *report_trace[] = { PYEBPF, "report", out, "-o", trace, NULL };
	run(report_trace, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	for (int k = 0; k < nroots; k++) {
		char check[PATH_MAX + 512];
		snprintf(
			check, sizeof(check),
			"%s -c 'import json,sys\n"
			"ev = json.load(open(sys.argv[1]))[\"traceEvents\"]\n"
			"assert sys.argv[2] in [e[\"args\"][\"name\"] for e in ev if e[\"name\"] == \"process_name\"]\n"
			"' %s '%s'",
			DEBIAN_PY, trace, roots[k]);
		cr_assert_eq(system(check), 0, "no trace track named %s", roots[k]);
	}
	free(out);
	free(merged);
	free(each);
	free(trace);
}

/* The first row of a top table (report --top or go tool pprof -top): its function. */
static const char *first_row(const char *table, const char *header, char *fn, size_t size)
{
	const char *row = strstr(table, header);

	fn[0] = '\0';
	if (!row || !(row = strchr(row, '\n')))
		return fn;
	row++;
	const char *end = strchr(row, '\n');
	snprintf(fn, size, "%.*s", end ? (int)(end - row) : (int)strlen(row), row);
	return fn;
}

/*
 * Flask under gunicorn, in wall mode: the endpoint that clients wait on
 * (/order: a 150 ms remote call) comes first, not the cache refresher every
 * worker keeps asleep (it outweighs the endpoint by default): report --top
 * --exclude-idle, and go tool pprof -top on report --python-only's pprof
 * (the reason a label, the waiting function the leaf).
 */
Test(realworld, gunicorn_wall_profile_puts_the_endpoint_first)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "svc.pb.gz"), *py = temp_path(dir, "py.pb.gz"), bind[64], fn[512];
	struct run_result r;
	pid_t srv = start_gunicorn("flask_service.py", 20000 + (getpid() + 7) % 20000, bind, sizeof(bind));
	/* Three clients for two workers: the workers are never idle. */
	pid_t loader = start_clients(bind, "/order", 3, 10);
	sleep_s(2); /* the workers boot */
	run((const char *const[]){ PYEBPF, "record", "--mode", "wall", "--comm", "gunicorn", "-F", "99", "-d", "4",
				   "-o", out, NULL },
	    30, &r);
	kill_wait(loader);
	kill_wait(srv);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);

	/* By default the refresher's sleep is in the table, near its top. */
	run((const char *const[]){ PYEBPF, "report", out, "--top", "5", NULL }, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "refresh_cache_forever ("), "the refresher is not in the table: %s", r.out);
	run_result_free(&r);

	run((const char *const[]){ PYEBPF, "report", out, "--top", "5", "--exclude-idle", NULL }, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_log_info("report --top --exclude-idle:\n%s%s", r.err, r.out);
	first_row(r.out, "FUNCTION", fn, sizeof(fn));
	cr_assert(strstr(fn, "call_inventory_service ("), "the first row is not the endpoint's wait: %s", r.out);
	cr_assert_null(strstr(r.out, "refresh_cache_forever"), "an idle thread is in the table: %s", r.out);
	unsigned long threads = 0;
	const char *said = strstr(r.err, "--exclude-idle left out ");
	cr_assert(said && sscanf(said, "--exclude-idle left out %lu threads", &threads) == 1 && threads >= 2,
		  "both workers' refreshers left out: %s", r.err);
	run_result_free(&r);

	run((const char *const[]){ PYEBPF, "report", out, "--exclude-idle", "--python-only", "-o", py, NULL }, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	run((const char *const[]){ "go", "tool", "pprof", "-top", py, NULL }, 120, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_log_info("go tool pprof -top:\n%s", r.out);
	first_row(r.out, "cum%", fn, sizeof(fn));
	cr_assert(strstr(fn, "call_inventory_service"), "pprof's first row is not the endpoint's wait: %s", r.out);
	cr_assert_null(strstr(r.out, "[off-cpu"), "a reason frame is a leaf: %s", r.out);
	cr_assert_null(strstr(r.out, "<unknown>"), "a function pprof cannot name: %s", r.out);
	cr_assert(strstr(r.out, "<module>"), "<module> is not named: %s", r.out);
	run_result_free(&r);
	free(out);
	free(py);
}

/* Clients of the aiohttp service: once it answers (and a second for the
 * sampler to find its tasks), N threads each make EACH /slow requests, a
 * /fast one after each; prints the /slow requests' latency sum and count. */
static const char aiohttp_clients[] =
	"import sys, threading, time, urllib.request as u\n"
	"base, n, each = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])\n"
	"end = time.monotonic() + 20\n"
	"while True:\n"
	"    try: u.urlopen(base + '/fast').read(); break\n"
	"    except OSError:\n"
	"        if time.monotonic() > end: raise\n"
	"        time.sleep(0.05)\n"
	"time.sleep(1.0)\n"
	"lock = threading.Lock(); total = [0.0, 0]\n"
	"def client():\n"
	"    for _ in range(each):\n"
	"        t = time.monotonic(); u.urlopen(base + '/slow').read(); d = time.monotonic() - t\n"
	"        u.urlopen(base + '/fast').read()\n"
	"        with lock: total[0] += d; total[1] += 1\n"
	"ts = [threading.Thread(target=client) for _ in range(n)]\n"
	"[t.start() for t in ts]; [t.join() for t in ts]\n"
	"print('%.6f %d' % (total[0], total[1]))\n";

/*
 * A real aiohttp server (Debian's, on its stripped python3.11) in task time:
 * /slow awaits fetch_remote (200 ms), /fast answers at once; 8 clients make
 * 10 /slow requests each. report --tasks --top ranks fetch_remote first
 * (above the server's main task, asleep the whole run), and its task time
 * is the clients' measured latency sum within 10%: each request's task is
 * pending while its client waits.
 */
Test(realworld, aiohttp_task_time_puts_the_slow_handler_first)
{
	const char *py311 = "/usr/bin/python3.11", *dir;
	char *out, *err, port[16], base[64], fn[512];
	struct run_result r, clients;
	double sum = 0, task = 0;
	int nreq = 0;

	need_module(py311, "aiohttp");
	dir = temp_dir();
	out = temp_path(dir, "aiohttp.pb.gz");
	err = temp_path(dir, "record.err");
	snprintf(port, sizeof(port), "%d", 20000 + (getpid() + 13) % 20000);
	snprintf(base, sizeof(base), "http://127.0.0.1:%s", port);
	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "--mode", "wall", "-o", out, "--", py311,
							 real_script("aiohttp_service.py"), port, "7", NULL },
				  err);
	run((const char *const[]){ DEBIAN_PY, "-c", aiohttp_clients, base, "8", "10", NULL }, 60, &clients);
	cr_assert_eq(clients.status, 0, "clients: %s", clients.err);
	cr_assert_eq(sscanf(clients.out, "%lf %d", &sum, &nreq), 2, "clients said: %s", clients.out);
	cr_assert_eq(nreq, 80);
	cr_assert_eq(wait_exit(rec, 30), 0, "record failed (see %s)", err);

	run((const char *const[]){ PYEBPF, "report", out, "--tasks", "--top", "5", NULL }, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_log_info("report --tasks --top 5 (the clients waited %.3f s on %d /slow requests):\n%s", sum, nreq, r.out);
	first_row(r.out, "FUNCTION", fn, sizeof(fn));
	cr_assert(strstr(fn, "fetch_remote ("), "the first row is not the slow handler's wait:\n%s", r.out);
	/* SELF% TOTAL% SELF(s) TASK(s) ... */
	cr_assert_eq(sscanf(fn, "%*s %*s %*s %lf", &task), 1, "%s", fn);
	cr_assert(task >= sum * 0.9 && task <= sum * 1.1, "fetch_remote's task time %.3f s, the clients waited %.3f s",
		  task, sum);
	run_result_free(&r);
	run_result_free(&clients);
	free(out);
	free(err);
}

/* The newest pyenv interpreter of a minor version at least min, or NULL. */
static const char *pyenv_at_least(int min_minor, struct python *pys, int n)
{
	const char *best = NULL;
	int minor = -1;

	for (int i = 0; i < n; i++)
		if (pys[i].major == 3 && pys[i].minor >= min_minor && pys[i].minor > minor && pys[i].lib[0]) {
			minor = pys[i].minor;
			best = pys[i].path;
		}
	return best;
}

/* A spawn pool on 3.12+: each thread has one name for the whole recording,
 * a worker's main thread is MainThread (multiprocessing's own _bootstrap
 * names no thread: it names the process, `SpawnPoolWorker-N`), threads
 * named by threading keep their names. */
Test(realworld, multiprocessing_pool_one_name_per_thread)
{
	struct python pys[32];
	int n = find_pythons(pys, 32);
	const char *py = pyenv_at_least(12, pys, n);
	/* --processes each: the workers' names go with their pids. */
	const char *opts[] = { "--threads", "--processes", "each", NULL }, *args[] = { "spawn", NULL };
	struct folded f;
	struct run_result r;

	if (!py)
		cr_skip_test("no pyenv Python 3.12 or later");
	record_script(opts, py, real_script("mp_pool.py"), args, 60, &f, &r);
	struct {
		unsigned pid, tid;
		char name[128];
		bool worker; /* a pool worker's main thread */
	} seen[256];
	int nseen = 0, workers = 0;
	for (size_t i = 0; i < f.n; i++) {
		unsigned pid = 0, tid = 0;
		char name[128];
		const char *s = f.lines[i].stack, *t = strchr(s, ';');
		if (sscanf(s, "%*[^[][pid %u]", &pid) != 1 || !t)
			continue;
		const char *tt = strstr(t, " [tid ");
		if (!tt || sscanf(tt, " [tid %u]", &tid) != 1 || (size_t)(tt - t - 1) >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(tt - t - 1), t + 1);
		int k;
		for (k = 0; k < nseen; k++)
			if (seen[k].tid == tid)
				break;
		if (k == nseen && nseen < 256) {
			seen[nseen].pid = pid;
			seen[nseen].tid = tid;
			seen[nseen].worker = false;
			snprintf(seen[nseen++].name, sizeof(name), "%s", name);
		} else {
			cr_assert_str_eq(name, seen[k].name, "tid %u has two names", tid);
		}
		if (k < 256 && pid == tid && strstr(s, "worker (/"))
			seen[k].worker = true;
	}
	for (int k = 0; k < nseen; k++)
		workers += seen[k].worker;
	for (int k = 0; k < nseen; k++)
		if (seen[k].pid == seen[k].tid)
			cr_assert_str_eq(seen[k].name, "MainThread", "pid %u's main thread", seen[k].pid);
	cr_assert_geq(workers, 2, "two pool workers seen");
	/* Named as multiprocessing names them, beside their pids. */
	cr_assert_gt(count_all(&f, ", SpawnPoolWorker-1];MainThread [tid ", NULL), 0, "worker 1 named");
	cr_assert_gt(count_all(&f, ", SpawnPoolWorker-2];MainThread [tid ", NULL), 0, "worker 2 named");
	for (int i = 0; i < 4; i++) {
		char want[32];
		snprintf(want, sizeof(want), ";side-%d [tid ", i);
		cr_assert_gt(count_all(&f, want, NULL), 0, "thread side-%d named", i);
	}
	folded_free(&f);
	run_result_free(&r);
}

/* Five 0.3 s runs of a new process each, with --native: every sample taken
 * while the interpreter is up and runs Python code (the native stack passes
 * Py_RunMain and the eval loop) carries its Python stack, named after the
 * process is gone. A merged stack replaces the eval loop's native frames with
 * the Python frames, so a _PyEval_EvalFrameDefault left under Py_RunMain is
 * Python code sampled without them.
 *
 * Not a share of all samples: the ones before the interpreter exists (execve,
 * ld.so, Py_Initialize before the first frame) and after (finalization) have
 * no Python stack to show, and a loaded machine gives the script less CPU and
 * so fewer samples beside a fixed count of those: 89.2% in a CI run with a
 * second job (bound 90%). On 2026-11-26 here (2 CPUs, pyenv 3.13.0, -F 999),
 * per run: 3-8 samples before main, 2-6 in Py_Initialize, 2-6 in
 * finalization, of ~315 quiet (94-98% with Python frames) and of 71-98 with
 * two busy loops beside (81-90%). Python code without its frames: none in
 * 12 runs (6 loaded) nor in 8 of this test; before kernel symbols were read
 * beside the BPF load, 64 and ~75 in 2 of ~20 runs, quiet and loaded alike
 * (the process registered 137 and 254 ms after its exec), 1 in 2 others. */
Test(realworld, short_lived_processes_keep_their_python_stacks)
{
	struct python pys[32];
	int n = find_pythons(pys, 32);
	const char *py = pyenv_at_least(11, pys, n);

	if (!py)
		cr_skip_test("no pyenv Python 3.11 or later");
	for (int run_i = 0; run_i < 5; run_i++) {
		const char *dir = temp_dir();
		char *out = temp_path(dir, "short.folded");
		const char *argv[] = { PYEBPF, "record", "--native", "-F", "999",
				       "-o",   out,      "--",       py,   real_script("short.py"),
				       NULL };
		uint64_t total = 0, python = 0, hot = 0, bare = 0;
		const char *bare_stack = NULL;
		struct run_result r;
		struct folded f;

		run(argv, 30, &r);
		cr_assert_eq(r.status, 0, "%s", r.err);
		folded_load(out, &f);
		for (size_t i = 0; i < f.n; i++) {
			const char *s = f.lines[i].stack;

			total += f.lines[i].count;
			if (strstr(s, ".py:") || strstr(s, "<frozen "))
				python += f.lines[i].count;
			if (strstr(s, "hot (") && strstr(s, "short.py:"))
				hot += f.lines[i].count;
			if (strstr(s, ";Py_RunMain;") && strstr(s, "_PyEval_EvalFrameDefault")) {
				bare += f.lines[i].count;
				bare_stack = s;
			}
		}
		cr_assert_eq(bare, 0,
			     "run %d: %llu of %llu samples ran Python code without their Python stack "
			     "(%llu with Python frames), e.g. %s",
			     run_i, (unsigned long long)bare, (unsigned long long)total, (unsigned long long)python,
			     bare_stack);
		cr_assert_gt(hot, 0, "run %d: no sample of hot() named (%llu of %llu with Python frames)", run_i,
			     (unsigned long long)python, (unsigned long long)total);
		folded_free(&f);
		run_result_free(&r);
		free(out);
	}
}

/* Debian's python3.11 has no frame pointers: start-up stacks without
 * --native end where the chain does, marked once, no towers of [unknown]. */
Test(realworld, stacks_without_frame_pointers_are_cut_not_towers)
{
	const char *args[] = { "fork", NULL };
	struct folded f;
	struct run_result r;

	if (access(DEBIAN_PY, X_OK))
		cr_skip_test("no Debian python3");
	record_script(NULL, DEBIAN_PY, real_script("mp_pool.py"), args, 60, &f, &r);
	for (size_t i = 0; i < f.n; i++) {
		const char *s = f.lines[i].stack;
		cr_assert_null(strstr(s, ";[unknown];[unknown]"), "a tower of [unknown]: %s", s);
		cr_assert_leq(occurrences(s, "[no frame pointers]"), 1, "%s", s);
	}
	cr_assert_gt(count_all(&f, "[no frame pointers]", NULL), 0, "start-up code without frame pointers is marked");
	cr_assert(strstr(r.err, "cut where frame pointers end"), "%s", r.err);
	folded_free(&f);
	run_result_free(&r);
}
