/* `pyebpf dump`'s writers and the reprs of --locals: exact text, escaping of
 * every string that comes from the target, bounded lengths. */
#include "unit.h"

#include "profile/offcpu.h"
#include "profile/profile.h"
#include "live/dump_args.h"
#include "python/locals.h"
#include "python/repr.h"
#include "write/dump.h"

static char *render(const struct dump_doc *d, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert(f);
	if (json)
		dump_write_json(f, d);
	else
		dump_write_text(f, d);
	fclose(f);
	return buf;
}

static const struct dump_local locals[] = { { "count", "42" }, { "label", "'lock-wait'" } };
static const struct dump_frame uframes[] = {
	{ .kind = FRAME_PYTHON, .name = "blocked", .file = "app.py", .line = 17, .locals = locals, .nlocals = 2 },
	{ .kind = FRAME_NATIVE, .name = "take_gil", .file = "/usr/lib/libpython3.12.so" },
	{ .kind = FRAME_NATIVE, .name = "", .file = "/lib/x.so", .offset = 0x1f },
};
static const struct dump_frame kframes[] = { { .kind = FRAME_KERNEL, .name = "futex_wait" },
					     { .kind = FRAME_KERNEL, .name = "do_futex" } };

Test(dump, text)
{
	struct dump_thread t[] = {
		{ .tid = 7,
		  .name = "locker",
		  .gil_known = true,
		  .reason = OFFCPU_LOCK,
		  .frames = uframes,
		  .nframes = 3,
		  .kframes = kframes,
		  .nkframes = 2 },
		{ .tid = 8, .name = "spin", .gil_known = true, .gil_held = true },
	};
	struct dump_doc d = { .pid = 7, .comm = "python3", .python = "3.12.1", .threads = t, .nthreads = 2 };
	char *s = render(&d, false);

	cr_assert_str_eq(s, "Process 7 \"python3\", Python 3.12.1, 2 threads\n"
			    "\n"
			    "Thread 7 \"locker\" (waiting: lock)\n"
			    "    File \"app.py\", line 17, in blocked\n"
			    "        count = 42\n"
			    "        label = 'lock-wait'\n"
			    "    take_gil (libpython3.12.so)\n"
			    "    x.so+0x1f\n"
			    "    Kernel:\n"
			    "        futex_wait\n"
			    "        do_futex\n"
			    "\n"
			    "Thread 8 \"spin\" (running, holds the GIL)\n");
	free(s);
	s = render(&d, true);
	cr_assert(strstr(s, "{\"tid\": 7, \"name\": \"locker\", \"state\": \"waiting\", \"reason\": \"lock\", \"gil\": "
			    "false, \"frames\": [\n    {\"kind\": \"python\", \"function\": \"blocked\", \"file\": "
			    "\"app.py\", \"line\": 17, \"locals\": {\"count\": \"42\", \"label\": \"'lock-wait'\"}},"),
		  "%s", s);
	cr_assert(strstr(s, "\"kernel\": [\"futex_wait\", \"do_futex\"]}"), "%s", s);
	cr_assert(strstr(s, "\"state\": \"running\", \"reason\": null, \"gil\": true"), "%s", s);
	free(s);
}

/* Names and values from the target never reach the terminal raw. */
Test(dump, hostile_names_escaped)
{
	struct dump_local l[] = { { "x\x1b[2J", "'\x1b]0;owned\x07'" } };
	struct dump_frame f[] = {
		{ .kind = FRAME_PYTHON, .name = "f\r\n", .file = "a\x1b[31m.py", .line = 1, .locals = l, .nlocals = 1 }
	};
	struct dump_thread t[] = { { .tid = 1, .name = "t\x9b\xff", .frames = f, .nframes = 1 } };
	struct dump_doc d = { .pid = 1, .comm = "c\x1b", .threads = t, .nthreads = 1 };

	for (int json = 0; json < 2; json++) {
		char *s = render(&d, json);

		for (const char *p = s; *p; p++)
			cr_assert((unsigned char)*p >= 0x20 || *p == '\n', "control byte 0x%02x in:\n%s",
				  (unsigned char)*p, s);
		cr_assert(!strstr(s, "\xff") && !strstr(s, "\xc2\x9b"), "%s", s);
		free(s);
	}
}

/* asyncio tasks: the name and what it awaits in the header; awaiters by name. */
Test(dump, tasks)
{
	struct dump_frame child[] = {
		{ .kind = FRAME_PYTHON, .name = "sleep", .file = "tasks.py", .line = 716 },
		{ .kind = FRAME_PYTHON, .name = "napper", .file = "app.py", .line = 45 },
		{ .kind = FRAME_MARK, .name = "[task g\x1b[2J]" },
		{ .kind = FRAME_PYTHON, .name = "gatherer", .file = "app.py", .line = 51 },
		{ .kind = FRAME_MARK, .name = "[task]" },
		{ .kind = FRAME_PYTHON, .name = "main", .file = "app.py", .line = 55 },
	};
	struct dump_task tk[] = {
		{ .name = "child\r", .count = 1, .awaits = "sleep", .frames = child, .nframes = 6 },
		{ .name = "", .count = 3, .awaits = "running", .frames = child + 5, .nframes = 1 },
	};
	struct dump_doc d = { .pid = 7, .comm = "python3", .python = "3.14.1", .tasks = tk, .ntasks = 2 };
	char *s = render(&d, false);

	cr_assert_str_eq(s, "Process 7 \"python3\", Python 3.14.1, 0 threads\n"
			    "\n"
			    "asyncio tasks pending (innermost coroutine first):\n"
			    "\n"
			    "Task \"child\\x0d\" (awaits sleep)\n"
			    "    File \"tasks.py\", line 716, in sleep\n"
			    "    File \"app.py\", line 45, in napper\n"
			    "  awaited by task \"g\\x1b[2J\":\n"
			    "    File \"app.py\", line 51, in gatherer\n"
			    "  awaited by an unnamed task:\n"
			    "    File \"app.py\", line 55, in main\n"
			    "\n"
			    "3 tasks [unnamed] (running)\n"
			    "    File \"app.py\", line 55, in main\n");
	free(s);
	s = render(&d, true);
	cr_assert(strstr(s, "\"tasks\": [\n  {\"name\": \"child\\\\x0d\", \"count\": 1, \"awaits\": \"sleep\", "
			    "\"frames\": [\n    {\"kind\": \"python\", \"function\": \"sleep\""),
		  "%s", s);
	cr_assert(strstr(s, "{\"name\": null, \"count\": 3, \"awaits\": \"running\""), "%s", s);
	free(s);
}

Test(dump, repr_str_and_bytes)
{
	char out[PY_REPR_MAX];

	py_repr_str("lock-wait", false, out, sizeof(out));
	cr_assert_str_eq(out, "'lock-wait'");
	py_repr_str("it's", false, out, sizeof(out));
	cr_assert_str_eq(out, "\"it's\"");
	py_repr_str("a'b\"c\\\n\x01", false, out, sizeof(out));
	cr_assert_str_eq(out, "'a\\'b\"c\\\\\\n\\x01'");
	py_repr_str("héllo", true, out, sizeof(out));
	cr_assert_str_eq(out, "'héllo'...");
	py_repr_bytes((const uint8_t *)"z\0\xff", 3, false, out, sizeof(out));
	cr_assert_str_eq(out, "b'z\\x00\\xff'");
}

Test(dump, repr_bounded)
{
	char big[1000], out[16];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	py_repr_str(big, false, out, sizeof(out));
	cr_assert_str_eq(out, "'xxxxxxxxxx'...");
	memset(big, 0, sizeof(big));
	for (int i = 0; i < 50; i++)
		memcpy(big + 2 * i, "\xc3\xa9", 2); /* é: never cut inside */
	py_repr_str(big, false, out, sizeof(out));
	cr_assert_str_eq(out, "'\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9'...");
}

Test(dump, repr_float)
{
	char out[64];

	py_repr_float(2.5, out, sizeof(out));
	cr_assert_str_eq(out, "2.5");
	py_repr_float(0.1, out, sizeof(out));
	cr_assert_str_eq(out, "0.1");
	py_repr_float(3.0, out, sizeof(out));
	cr_assert_str_eq(out, "3.0");
	py_repr_float(-1e100, out, sizeof(out));
	cr_assert_str_eq(out, "-1e+100");
	py_repr_float(1.0 / 0.0, out, sizeof(out));
	cr_assert_str_eq(out, "inf");
}

/* Where a process runs: its container (12 hex digits), its name, its pid inside; escaped, in both formats. */
Test(dump, container_and_namespace_pid)
{
	struct dump_doc d = {
		.pid = 4242, .comm = "python3", .container = "3f2a9c1b7d4e", .container_name = "web\x1b[2J", .ns_pid = 1
	};
	char *s = render(&d, false);

	cr_assert_str_eq(s, "Process 4242 \"python3\", 0 threads\n"
			    "Container 3f2a9c1b7d4e \"web\\x1b[2J\", pid 1 inside\n");
	free(s);
	s = render(&d, true);
	cr_assert(strstr(s, "\"python\": null, \"container\": \"3f2a9c1b7d4e\", \"container_name\": "
			    "\"web\\\\x1b[2J\", \"ns_pid\": 1, \"threads\""),
		  "%s", s);
	free(s);
	/* The same pid inside: not repeated; no container, another pid: said so. */
	d.ns_pid = 4242;
	d.container_name = NULL;
	s = render(&d, false);
	cr_assert_str_eq(s, "Process 4242 \"python3\", 0 threads\nContainer 3f2a9c1b7d4e\n");
	free(s);
	d.container = NULL;
	d.ns_pid = 7;
	s = render(&d, false);
	cr_assert_str_eq(s, "Process 4242 \"python3\", 0 threads\nPid 7 inside its pid namespace\n");
	free(s);
	d.ns_pid = 4242;
	s = render(&d, false);
	cr_assert_str_eq(s, "Process 4242 \"python3\", 0 threads\n");
	free(s);
	s = render(&d, true);
	cr_assert(strstr(s, "\"container\": null, \"ns_pid\": 4242,"), "%s", s);
	free(s);
}

/* A frame that kept changing while its locals were read shows no values, and says why. */
Test(dump, locals_changed_while_read)
{
	struct dump_frame f[] = {
		{ .kind = FRAME_PYTHON, .name = "spin", .file = "a.py", .line = 3, .locals_changed = true },
		{ .kind = FRAME_PYTHON, .name = "caller_a", .file = "a.py", .line = 9, .locals = locals, .nlocals = 1 },
	};
	struct dump_thread t[] = { { .tid = 5, .name = "MainThread", .frames = f, .nframes = 2 } };
	struct dump_doc d = { .pid = 5, .comm = "python3", .threads = t, .nthreads = 1 };
	char *s = render(&d, false);

	cr_assert(strstr(s, "    File \"a.py\", line 3, in spin\n"
			    "        (locals changed while read)\n"
			    "    File \"a.py\", line 9, in caller_a\n"
			    "        count = 42\n"),
		  "%s", s);
	free(s);
	s = render(&d, true);
	cr_assert(strstr(s, "\"function\": \"spin\", \"file\": \"a.py\", \"line\": 3, \"locals\": \"changed while "
			    "read\"}"),
		  "%s", s);
	free(s);
}

/* The capture's frames in the chain walked later: in a row, under frames called since; else from the root in. */
Test(dump, chain_match)
{
	const uint64_t cap[] = { 10, 20, 30, 40 }; /* spin, caller_a, main, <module> */
	size_t m[4];

	cr_assert_eq(py_chain_match(cap, 4, (const uint64_t[]){ 10, 20, 30, 40 }, 4, false, m), 4);
	cr_assert(m[0] == 0 && m[1] == 1 && m[2] == 2 && m[3] == 3);
	/* Deeper now (spin called something): the same frames, one further. */
	cr_assert_eq(py_chain_match(cap, 4, (const uint64_t[]){ 99, 10, 20, 30, 40 }, 5, false, m), 4);
	cr_assert(m[0] == 1 && m[3] == 4);
	/* Another caller now: only main and <module> are the captured ones. */
	cr_assert_eq(py_chain_match(cap, 4, (const uint64_t[]){ 10, 21, 30, 40 }, 4, false, m), 2);
	cr_assert(m[0] == PY_NO_MATCH && m[1] == PY_NO_MATCH && m[2] == 2 && m[3] == 3);
	/* A cut walk has no root to start from. */
	cr_assert_eq(py_chain_match(cap, 4, (const uint64_t[]){ 10, 21, 30 }, 3, true, m), 0);
	cr_assert(m[0] == PY_NO_MATCH && m[2] == PY_NO_MATCH);
	/* Shallower now: the thread returned from spin. */
	cr_assert_eq(py_chain_match(cap, 4, (const uint64_t[]){ 20, 30, 40 }, 3, false, m), 3);
	cr_assert(m[0] == PY_NO_MATCH && m[1] == 0);
	cr_assert_eq(py_chain_match(cap, 4, NULL, 0, false, m), 0);
}

/* dump --container: the container's group and those below it, nothing beside it. */
Test(dump, cgroup_within)
{
	const char *dir = "/sys/fs/cgroup/docker/3f2a";

	cr_assert(dump_cgroup_within("/sys/fs/cgroup", dir, "/docker/3f2a"));
	cr_assert(dump_cgroup_within("/sys/fs/cgroup/", dir, "/docker/3f2a/init.scope"));
	cr_assert(dump_cgroup_within("/sys/fs/cgroup", "/sys/fs/cgroup/docker/3f2a/", "/docker/3f2a/x"));
	cr_assert(!dump_cgroup_within("/sys/fs/cgroup", dir, "/docker/3f2ab"));
	cr_assert(!dump_cgroup_within("/sys/fs/cgroup", dir, "/docker"));
	cr_assert(!dump_cgroup_within("/sys/fs/cgroup", dir, "/"));
	cr_assert(!dump_cgroup_within("/sys/fs/cgroup/unified", dir, "/docker/3f2a"));
	cr_assert(dump_cgroup_within("/", "/docker/3f2a", "/docker/3f2a/a"));
}

/* -p or --container, one of them. */
Test(dump, args_pid_or_container)
{
	struct dump_opts o;
	char *a1[] = { "dump", "--container", "web", NULL };
	char *a2[] = { "dump", "-p", "7", "--container", "web", NULL };
	char *a3[] = { "dump", NULL };

	cr_assert_eq(dump_args__parse(3, a1, &o), 0);
	cr_assert_str_eq(o.container, "web");
	cr_assert_eq(o.pid, 0);
	dump_args__free(&o);
	cr_assert_eq(dump_args__parse(5, a2, &o), -1);
	dump_args__free(&o);
	cr_assert_eq(dump_args__parse(1, a3, &o), -1);
	dump_args__free(&o);
}
