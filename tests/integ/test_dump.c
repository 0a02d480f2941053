/*
 * `pyebpf dump` against every installed interpreter: a process with a
 * thread blocked on a Lock, one in time.sleep and one spinning
 * (tests/fixtures/dumpme.py); each thread's name, state, innermost line and
 * locals exactly, the kernel stack where the blocked ones wait; on 3.11+,
 * the pending asyncio tasks, each with its coroutines and awaiters. Locals
 * of a busy thread are those of the frames shown (dump_consistency.py), and
 * `dump --container NAME` finds a docker container's process, with its id
 * and its pid inside.
 */
#include "integ.h"
#include "docker_engine.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../pythons.h"

#define FIXTURE "../tests/fixtures/dumpme.py"

static char script[PATH_MAX];
static struct python pys[32];
static int npys;

static void setup(void)
{
	npys = setup_pythons(FIXTURE, script, pys, 32);
}

TestSuite(dump, .init = setup, .timeout = 300);

/* The fixture under py, ready: its pid. */
static pid_t start_fixture(const struct python *py, const char *err)
{
	const char *argv[] = { py->path, script, NULL };
	pid_t pid = spawn_capture(argv, err);

	wait_for_text(err, "ready", 30);
	return pid;
}

/* The part of a text dump that is thread `name`'s (up to the next thread). */
static char *thread_block(const char *out, const char *name)
{
	char want[128];
	const char *at, *end;

	snprintf(want, sizeof(want), "\"%s\" (", name);
	at = strstr(out, want);
	cr_assert(at, "no thread %s in:\n%s", name, out);
	while (at > out && at[-1] != '\n')
		at--;
	end = strstr(at + 1, "\nThread ");
	return strndup(at, end ? (size_t)(end - at) : strlen(at));
}

/* The block's first frame is `File "script", line <marker>, in func`, followed by these lines. */
static void expect_top(const struct python *py, const char *block, const char *func, const char *mark,
		       const char *const locals[])
{
	char want[PATH_MAX + 128];
	const char *nl = strchr(block, '\n');

	snprintf(want, sizeof(want), "\n    File \"%s\", line %d, in %s\n", script, script_marker(script, mark), func);
	cr_assert(nl && !strncmp(nl, want, strlen(want)), "%s: the innermost frame is not %s:\n%s", py->path, want,
		  block);
	for (int i = 0; locals && locals[i]; i++) {
		snprintf(want, sizeof(want), "\n        %s\n", locals[i]);
		cr_assert(strstr(block, want), "%s: no local '%s' in:\n%s", py->path, locals[i], block);
	}
}

/* ", Python 2.7.18," as the interpreter itself says sys.version_info (3.13.15t
 * free-threaded, 3.15.0a2 for a pre-release): into want. */
static void python_version_head(const struct python *py, char *want, size_t size)
{
	const char *argv[] = { py->path, "-c",
			       "import platform, sys; print(platform.python_version() + "
			       "('t' if 't' in getattr(sys, 'abiflags', '') else ''))",
			       NULL };
	struct run_result r;

	run(argv, 30, &r);
	cr_assert(r.status == 0 && r.out[0], "%s: no version: %s", py->path, r.err);
	r.out[strcspn(r.out, "\n")] = '\0';
	snprintf(want, size, ", Python %s, ", r.out);
	run_result_free(&r);
}

Test(dump, threads_reasons_lines_and_locals)
{
	for (int i = 0; i < npys; i++) {
		const struct python *py = &pys[i];
		const char *dir = temp_dir();
		char *err = temp_path(dir, "err"), pidarg[16], head[64];
		pid_t pid = start_fixture(py, err);
		const char *argv[] = { PYEBPF, "dump", "-p", pidarg, "--locals", NULL };
		struct run_result r;
		char *b;

		snprintf(pidarg, sizeof(pidarg), "%d", pid);
		run(argv, 30, &r);
		cr_log_info("%s: dump in %.2f s\n", py->path, r.seconds);
		cr_assert_eq(r.status, 0, "%s: dump failed: %s", py->path, r.err);
		snprintf(head, sizeof(head), "Process %d ", pid);
		cr_assert(!strncmp(r.out, head, strlen(head)), "%s: %s", py->path, r.out);
		cr_assert(strstr(r.out, ", 4 threads\n"), "%s: %s", py->path, r.out);
		/* The patch level as the interpreter reports it (2.7.18, not 2.7.0),
		 * symbols or none (Debian's /usr/bin/python3.11). */
		char version[96];
		python_version_head(py, version, sizeof(version));
		cr_assert(strstr(r.out, version) && strstr(r.out, version) < strchr(r.out, '\n'),
			  "%s: the first line does not say '%s': %s", py->path, version, r.out);

		b = thread_block(r.out, "MainThread");
		snprintf(head, sizeof(head), "Thread %d \"MainThread\" (waiting: io", pid);
		cr_assert(!strncmp(b, head, strlen(head)), "%s: %s", py->path, b);
		expect_top(py, b, "<module>", "dump-main", NULL);
		free(b);

		b = thread_block(r.out, "locker");
		cr_assert(strstr(b, "\"locker\" (waiting: lock)\n"), "%s: %s", py->path, b);
		expect_top(py, b, "blocked", "dump-lock",
			   (const char *const[]){ "count = 42", "label = 'lock-wait'", NULL });
		cr_assert(strstr(b, "    Kernel:\n") && strstr(b, "futex"), "%s: no futex wait in:\n%s", py->path, b);
		free(b);

		b = thread_block(r.out, "sleeper");
		cr_assert(strstr(b, "\"sleeper\" (sleeping)\n"), "%s: %s", py->path, b);
		expect_top(py, b, "sleeper", "dump-sleep",
			   (const char *const[]){ "seconds = 3600", "ratio = 2.5",
						  py->major == 2 ? "tag = 'zz'" : "tag = b'zz'", NULL });
		cr_assert(strstr(b, "nanosleep") || strstr(b, "select"), "%s: no sleep in:\n%s", py->path, b);
		free(b);

		b = thread_block(r.out, "spinner");
		cr_assert(strstr(b, "\"spinner\" (running") || strstr(b, "\"spinner\" (runnable"), "%s: %s", py->path,
			  b);
		expect_top(py, b, "spinner", "dump-spin",
			   (const char *const[]){ "limit = -7", "nothing = None", "flag = True", NULL });
		cr_assert(strstr(b, "\n        total = "), "%s: %s", py->path, b);
		free(b);
		run_result_free(&r);

		/* The same as one JSON document. */
		const char *jargv[] = { PYEBPF, "dump", "-p", pidarg, "--json", NULL };
		run(jargv, 30, &r);
		cr_assert_eq(r.status, 0, "%s: dump --json failed: %s", py->path, r.err);
		cr_assert(strstr(r.out, "\"name\": \"locker\", \"state\": \"waiting\", \"reason\": \"lock\""), "%s: %s",
			  py->path, r.out);
		cr_assert(strstr(r.out, "\"name\": \"sleeper\", \"state\": \"waiting\", \"reason\": \"sleep\""),
			  "%s: %s", py->path, r.out);
		cr_assert(strstr(r.out, "\"function\": \"blocked\""), "%s: %s", py->path, r.out);
		run_result_free(&r);
		kill_wait(pid);
		unlink(err);
		free(err);
		rmdir(dir);
	}
}

/* 3.11+ (free-threaded builds too): a task gathering two tasks, each asleep; the
 * gatherer is awaited by the main task (asyncio's Task-1, unnamed). */
Test(dump, asyncio_tasks_with_coroutines_and_awaiters)
{
	char async_script[PATH_MAX];

	cr_assert(realpath("../tests/fixtures/pyasync.py", async_script));
	const char *dir = temp_dir();
	char *err = temp_path(dir, "err");

	for (int i = 0; i < npys; i++) {
		const struct python *py = &pys[i];
		const char *argv[] = { py->path, async_script, "gather", "30", NULL };
		char pidarg[16], want[4 * PATH_MAX];
		struct run_result r;
		pid_t pid;

		if (!python_has_asyncio_tasks(py))
			continue;
		/* Dumped once its tasks wait, however long importing asyncio takes
		 * (a fixed 1.5 s found a 3.14 still reading its modules from disk in
		 * a loaded CI run). */
		setenv("PYASYNC_READY", "1", 1);
		pid = spawn_capture(argv, err);
		unsetenv("PYASYNC_READY");
		wait_for_text(err, "tasks waiting", 30);
		snprintf(pidarg, sizeof(pidarg), "%d", pid);
		const char *dargv[] = { PYEBPF, "dump", "-p", pidarg, NULL };
		run(dargv, 30, &r);
		cr_assert_eq(r.status, 0, "%s: dump failed: %s", py->path, r.err);
		for (int k = 0; k < 2; k++) {
			char head[64];
			const char *at;

			/* asyncio's own sleep is the innermost frame, then the fixture's. */
			snprintf(head, sizeof(head), "\nTask \"child-%c\" (awaits sleep)\n", 'a' + k);
			snprintf(want, sizeof(want),
				 "    File \"%s\", line %d, in napper\n"
				 "  awaited by task \"gatherer\":\n"
				 "    File \"%s\", line %d, in gatherer\n"
				 "  awaited by an unnamed task:\n"
				 "    File \"%s\", line %d, in gather\n",
				 async_script, script_marker(async_script, "napper"), async_script,
				 script_marker(async_script, "gatherer"), async_script,
				 script_marker(async_script, "gather"));
			at = strstr(r.out, head);
			at = at ? strchr(at + strlen(head), '\n') : NULL;
			cr_assert(at && strstr(at - 20, "in sleep\n") && !strncmp(at + 1, want, strlen(want)),
				  "%s: child-%c's chain is not sleep, then\n%s\nin:\n%s", py->path, 'a' + k, want,
				  r.out);
		}
		snprintf(want, sizeof(want),
			 "\nTask \"gatherer\" (awaits gather)\n    File \"%s\", line %d, in gatherer\n"
			 "  awaited by an unnamed task:\n",
			 async_script, script_marker(async_script, "gatherer"));
		cr_assert(strstr(r.out, want), "%s: the gatherer is not\n%s\nin:\n%s", py->path, want, r.out);
		run_result_free(&r);

		const char *jargv[] = { PYEBPF, "dump", "-p", pidarg, "--json", NULL };
		run(jargv, 30, &r);
		cr_assert_eq(r.status, 0, "%s: dump --json failed: %s", py->path, r.err);
		cr_assert(strstr(r.out, "\"tasks\": [") &&
				  strstr(r.out, "{\"name\": \"gatherer\", \"count\": 1, \"awaits\": \"gather\""),
			  "%s: %s", py->path, r.out);
		run_result_free(&r);
		kill_wait(pid);
		unlink(err);
	}
	free(err);
}

Test(dump, filters)
{
	const struct python *py = &pys[npys - 1];
	const char *dir = temp_dir();
	char *err = temp_path(dir, "err"), pidarg[16];
	pid_t pid = start_fixture(py, err);
	const char *argv[] = { PYEBPF, "dump", "-p", pidarg, "--thread", "locker", "--no-kernel", NULL };
	struct run_result r;

	snprintf(pidarg, sizeof(pidarg), "%d", pid);
	run(argv, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, ", 1 thread\n") && strstr(r.out, "\"locker\" (waiting: lock)"), "%s", r.out);
	cr_assert(!strstr(r.out, "Kernel:"), "%s", r.out);
	run_result_free(&r);
	kill_wait(pid);
	unlink(err);
	free(err);
	rmdir(dir);
}

Test(dump, no_such_process)
{
	const char *argv[] = { PYEBPF, "dump", "-p", "1073741823", NULL };
	struct run_result r;

	run(argv, 30, &r);
	cr_assert_neq(r.status, 0);
	cr_assert_str_eq(r.err, "pyebpf: no process with pid 1073741823\n");
	cr_assert_str_empty(r.out);
	run_result_free(&r);
}

Test(dump, not_python)
{
	const char *busy[] = { BUSY, "30", NULL };
	pid_t pid = spawn(busy);
	char pidarg[16];
	const char *argv[] = { PYEBPF, "dump", "-p", pidarg, NULL };
	struct run_result r;

	sleep_s(0.3);
	snprintf(pidarg, sizeof(pidarg), "%d", pid);
	run(argv, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(!strstr(r.out, "Python") && strstr(r.out, "Thread "), "%s", r.out);
	cr_assert(strstr(r.out, " (busy"), "no native frame of busy in:\n%s", r.out);
	run_result_free(&r);
	kill_wait(pid);
}

/* ---- --locals of a busy thread: the values of the frames shown ------------ */

#define CONSISTENCY "../tests/fixtures/dump_consistency.py"
#define CONSISTENCY_DUMPS 30
/* Dumps of 30 whose spin frame may say "changed while read": a machine
 * busy enough to stall pyebpf through every try of a thread. */
#define CONSISTENCY_CHANGED_MAX 5

/* The interpreters the check runs on: each frame layout (2.7's and 3.8's
 * objects, 3.12's and 3.14's interpreter frames, every free-threaded build:
 * 3.13t, and 3.14t/3.15t with their per-thread bytecode). */
static bool consistency_python(const struct python *py)
{
	if (py->major == 2 || py->free_threaded)
		return true;
	return py->minor == 8 || py->minor == 12 || py->minor == 14;
}

enum verdict {
	V_NO_SPIN,
	V_OK,
	V_CHANGED,
	V_WRONG
};

/* One dump's spin frame: its sec beside the caller the dump shows (caller_a passes 1111, caller_b 2222). */
static enum verdict spin_verdict(const char *out, char *why, size_t size)
{
	const char *spin = strstr(out, ", in spin\n"), *next, *caller, *changed, *sec;
	int want;

	next = spin ? strstr(spin, "\n    File ") : NULL; /* the caller's frame */
	caller = next ? strstr(next, ", in ") : NULL;
	if (!caller || strncmp(caller, ", in caller_", 12))
		return V_NO_SPIN;
	want = caller[12] == 'a' ? 1111 : 2222;
	changed = strstr(spin, "(locals changed while read)");
	if (changed && changed < next)
		return V_CHANGED;
	sec = strstr(spin, "\n        sec = ");
	if (!sec || sec > next) {
		snprintf(why, size, "no sec in spin's frame");
		return V_WRONG;
	}
	if (atoi(sec + 15) != want) {
		snprintf(why, size, "spin's sec = %d under caller_%c", atoi(sec + 15), caller[12]);
		return V_WRONG;
	}
	return V_OK;
}

/*
 * 30 dumps --locals of a process that calls spin(1111) from caller_a and
 * spin(2222) from caller_b in a hot loop: each dump's spin frame shows
 * the sec its caller passed, or says its locals changed while read (a
 * few at most). Before the check, 10 to 18 of 30 showed the other
 * caller's value.
 */
Test(dump, locals_consistent_with_frames, .timeout = 900)
{
	char cscript[PATH_MAX];
	int tested = 0;

	cr_assert(realpath(CONSISTENCY, cscript));
	for (int i = 0; i < npys; i++) {
		const struct python *py = &pys[i];
		const char *dir = temp_dir();
		char *err = temp_path(dir, "err"), pidarg[16], why[128];
		const char *argv[] = { py->path, cscript, "600", NULL };
		int n[4] = { 0 };
		pid_t pid;

		if (!consistency_python(py))
			continue;
		pid = spawn_capture(argv, err);
		wait_for_text(err, "ready", 30);
		snprintf(pidarg, sizeof(pidarg), "%d", pid);
		for (int k = 0; k < CONSISTENCY_DUMPS; k++) {
			const char *dargv[] = { PYEBPF, "dump", "-p", pidarg, "--locals", NULL };
			struct run_result r;
			enum verdict v;

			run(dargv, 60, &r);
			cr_assert_eq(r.status, 0, "%s: dump failed: %s", py->path, r.err);
			v = spin_verdict(r.out, why, sizeof(why));
			cr_assert_neq(v, V_WRONG, "%s: dump %d: %s:\n%s", py->path, k + 1, why, r.out);
			n[v]++;
			run_result_free(&r);
		}
		cr_log_info("%s: %d of %d consistent, %d changed while read, %d without spin\n", py->path, n[V_OK],
			    CONSISTENCY_DUMPS, n[V_CHANGED], n[V_NO_SPIN]);
		cr_assert_leq(n[V_CHANGED], CONSISTENCY_CHANGED_MAX, "%s: %d of %d changed while read", py->path,
			      n[V_CHANGED], CONSISTENCY_DUMPS);
		/* spin is where the loop spends its time: most dumps catch it. */
		cr_assert_geq(n[V_OK], CONSISTENCY_DUMPS / 2, "%s: only %d of %d dumps in spin", py->path, n[V_OK],
			      CONSISTENCY_DUMPS);
		kill_wait(pid);
		unlink(err);
		free(err);
		rmdir(dir);
		tested++;
	}
	cr_assert_geq(tested, 3, "only %d of the interpreters the check needs are installed", tested);
}

/* ---- dump --container, under a private dockerd ---------------------------- */

/*
 * `dump --container NAME`: the container's python3 (pid 1 inside, another
 * pid on the host), with the container's short id and name, its stack and
 * consistent locals; the same in JSON; an unknown name refused in one line.
 */
Test(dump, container_by_name, .init = docker_engine_start, .fini = docker_engine_stop, .timeout = 600)
{
	char script[PATH_MAX], mount[PATH_MAX + 32], name[64], want[256], pidarg[16];
	char *id, *hostpid;
	struct run_result r;
	pid_t pid;

	docker_engine_check();
	cr_assert(realpath(CONSISTENCY, script));
	snprintf(mount, sizeof(mount), "%s:/consistency.py:ro", script);
	snprintf(name, sizeof(name), "dumpbox-%d", (int)getpid());
	id = docker((const char *const[]){ "docker", "run", "-d", "--name", name, "--network", "none", "-v", mount,
					   DOCKER_IMAGE, "python3", "/consistency.py", "300", NULL });
	hostpid = docker((const char *const[]){ "docker", "inspect", "-f", "{{.State.Pid}}", name, NULL });
	pid = (pid_t)atoi(hostpid);
	for (int i = 0; i < 600 && proc_cpu(pid) < 0.5; i++)
		sleep_s(0.05);
	cr_assert_geq(proc_cpu(pid), 0.5, "%s's python3 (pid %d) did not start", name, (int)pid);

	run((const char *const[]){ PYEBPF, "dump", "--container", name, "--locals", NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(want, sizeof(want), "Process %d \"python3\", Python 3.", (int)pid);
	cr_assert(!strncmp(r.out, want, strlen(want)), "not %s... in:\n%s", want, r.out);
	snprintf(want, sizeof(want), "\nContainer %.12s \"%s\", pid 1 inside\n", id, name);
	cr_assert(strstr(r.out, want), "no '%s' in:\n%s", want + 1, r.out);
	cr_log_info("dump --container %s:\n%s", name, r.out);
	cr_assert(strstr(r.out, "File \"/consistency.py\", line "), "%s", r.out);
	cr_assert_eq(occurrences(r.out, "\nProcess ") + !strncmp(r.out, "Process ", 8), 1, "%s", r.out);
	char why[128];
	cr_assert_neq(spin_verdict(r.out, why, sizeof(why)), V_WRONG, "%s:\n%s", why, r.out);
	run_result_free(&r);

	/* By id too, as JSON: one document around the container's processes. */
	run((const char *const[]){ PYEBPF, "dump", "--container", id, "--json", NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(want, sizeof(want), "{\"container\": \"%.12s\", \"name\": \"%s\", \"processes\": [\n{\"pid\": %d,", id,
		 name, (int)pid);
	cr_assert(!strncmp(r.out, want, strlen(want)), "not %s... in:\n%s", want, r.out);
	snprintf(want, sizeof(want), "\"container\": \"%.12s\", \"container_name\": \"%s\", \"ns_pid\": 1,", id, name);
	cr_assert(strstr(r.out, want), "no '%s' in:\n%s", want, r.out);
	run_result_free(&r);

	/* -p of the same process: the same container line, named from docker's state. */
	snprintf(pidarg, sizeof(pidarg), "%d", (int)pid);
	run((const char *const[]){ PYEBPF, "dump", "-p", pidarg, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(want, sizeof(want), "\nContainer %.12s \"%s\", pid 1 inside\n", id, name);
	cr_assert(strstr(r.out, want), "no '%s' in:\n%s", want + 1, r.out);
	run_result_free(&r);

	free(docker((const char *const[]){ "docker", "rm", "-f", name, NULL }));
	run((const char *const[]){ PYEBPF, "dump", "--container", name, NULL }, 60, &r);
	cr_assert_eq(r.status, 1, "%s", r.err);
	cr_assert(!strncmp(r.err, "pyebpf: --container: ", 21) && occurrences(r.err, "\n") == 1, "%s", r.err);
	run_result_free(&r);
	free(id);
	free(hostpid);
}
