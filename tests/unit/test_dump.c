/* `pyebpf dump`'s writers and the reprs of --locals: exact text, escaping of
 * every string that comes from the target, bounded lengths. */
#include "unit.h"

#include "profile/offcpu.h"
#include "profile/profile.h"
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
