/*
 * `pyebpf dump` against every installed interpreter: a process with a
 * thread blocked on a Lock, one in time.sleep and one spinning
 * (tests/fixtures/dumpme.py); each thread's name, state, innermost line and
 * locals exactly, the kernel stack where the blocked ones wait; on 3.11+,
 * the pending asyncio tasks, each with its coroutines and awaiters.
 */
#include "integ.h"

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

/* 3.11+ (not free-threaded): a task gathering two tasks, each asleep; the
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
