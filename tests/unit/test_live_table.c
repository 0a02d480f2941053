/* `pyebpf top`'s numbers and lines: intervals and since-start totals, views, sorting, escaping. */
#include "unit.h"

#include "live/live_format.h"
#include "live/live_table.h"
#include "profile/profile.h"
#include "write/top.h"

/* A Python frame: function name, file, line, first line. */
static uint32_t py(struct profile *p, const char *name, const char *file, uint32_t line, uint32_t start)
{
	struct frame f = { .kind = FRAME_PYTHON,
			   .name = profile__str(p, name),
			   .module = profile__str(p, file),
			   .line = line,
			   .start_line = start };

	return profile__frame(p, &f);
}

static void add(struct profile *p, uint32_t pid, uint32_t tid, const char *thread, const uint32_t *frames, uint32_t n,
		uint32_t count)
{
	struct sample_labels l = {
		.pid = pid, .tid = tid, .comm = profile__str(p, "python3"), .thread = profile__str(p, thread)
	};

	profile__add(p, &l, frames, n, count);
}

/* main → work (line 5 or 6), in two threads of one process, and one of another. */
static struct profile *interval(uint32_t work_a, uint32_t work_b, uint32_t other)
{
	struct profile *p = profile__new();
	uint32_t m = py(p, "main", "app.py", 20, 18), w5 = py(p, "work", "app.py", 5, 3),
		 w6 = py(p, "work", "app.py", 6, 3), idle = py(p, "idle", "other.py", 2, 1);
	uint32_t s1[] = { m, w5 }, s2[] = { m, w6 }, s3[] = { m, idle };

	if (work_a)
		add(p, 100, 100, "MainThread", s1, 2, work_a);
	if (work_b)
		add(p, 100, 101, "worker", s2, 2, work_b);
	if (other)
		add(p, 200, 200, "MainThread", s3, 2, other);
	return p;
}

Test(live_table, intervals_and_since_start)
{
	struct live_table *t = live_table__new();
	struct live_view v = { 0 };
	struct live_totals tot;
	struct live_row *rows;
	size_t n;

	struct profile *p = interval(30, 10, 0);
	live_table__add(t, p);
	profile__free(p);
	p = interval(0, 0, 50);
	live_table__add(t, p);
	profile__free(p);
	cr_assert_eq(live_table__intervals(t), 2);

	/* By the last interval: idle leads; work is still there, with nothing now. */
	rows = live_table__view(t, &v, &n, &tot);
	cr_assert_eq(tot.now, 50);
	cr_assert_eq(tot.all, 90);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(rows[0].name, "idle (other.py:1)");
	cr_assert_eq(rows[0].func_len, 4);
	cr_assert_eq(rows[0].now.self, 50);
	cr_assert_str_eq(rows[1].name, "main (app.py:18)"); /* total 50 now: before work's 0 */
	cr_assert_str_eq(rows[2].name, "work (app.py:3)");
	cr_assert_eq(rows[2].all.self, 40);
	cr_assert_eq(rows[2].now.self, 0);
	free(rows);

	/* Since start by self: idle (50), then work (40); by total: main (90). */
	v.since_start = true;
	rows = live_table__view(t, &v, &n, &tot);
	cr_assert_str_eq(rows[0].name, "idle (other.py:1)");
	cr_assert_str_eq(rows[1].name, "work (app.py:3)");
	free(rows);
	v.sort = LIVE_SORT_TOTAL;
	rows = live_table__view(t, &v, &n, &tot);
	cr_assert_str_eq(rows[0].name, "main (app.py:18)");
	cr_assert_eq(rows[0].all.total, 90);
	free(rows);

	/* Per line: work's two lines apart. */
	v = (struct live_view){ .by_line = true, .since_start = true };
	rows = live_table__view(t, &v, &n, &tot);
	cr_assert_eq(n, 4);
	cr_assert_str_eq(rows[0].name, "idle (other.py:2)");
	cr_assert_str_eq(rows[1].name, "work (app.py:5)");
	cr_assert_eq(rows[1].all.self, 30);
	cr_assert_str_eq(rows[2].name, "work (app.py:6)");
	free(rows);

	/* One process, one thread. */
	v = (struct live_view){ .pid = 100, .since_start = true };
	rows = live_table__view(t, &v, &n, &tot);
	cr_assert_eq(tot.all, 40);
	cr_assert_eq(n, 2);
	free(rows);
	v.tid = 101;
	rows = live_table__view(t, &v, &n, &tot);
	cr_assert_eq(tot.all, 10);
	cr_assert_eq(rows[0].all.self, 10);
	free(rows);

	/* Cycling the filters. */
	cr_assert_eq(live_table__next_pid(t, 0), 100);
	cr_assert_eq(live_table__next_pid(t, 100), 200);
	cr_assert_eq(live_table__next_pid(t, 200), 0);
	cr_assert_eq(live_table__next_tid(t, 100, 0), 100);
	cr_assert_eq(live_table__next_tid(t, 100, 100), 101);
	cr_assert_eq(live_table__next_tid(t, 100, 101), 0);
	cr_assert_eq(live_table__next_tid(t, 0, 101), 200);
	cr_assert_str_eq(live_table__thread(t, 100, 101)->thread, "worker");

	/* Equal totals: the caller first. */
	p = interval(20, 0, 0);
	live_table__add(t, p);
	profile__free(p);
	v = (struct live_view){ .sort = LIVE_SORT_TOTAL };
	rows = live_table__view(t, &v, &n, &tot);
	cr_assert_str_eq(rows[0].name, "main (app.py:18)");
	cr_assert_str_eq(rows[1].name, "work (app.py:3)");
	cr_assert_eq(rows[1].now.total, 20);
	free(rows);
	live_table__free(t);
}

Test(live_table, rows_per_thread_add_up)
{
	struct profile *p = interval(30, 10, 5);
	struct top_opts o = { .per_thread = true };
	size_t n, nall;
	struct top_row *rows = top__rows_opts(p, &o, &n), *all = top__rows(p, &nall);
	uint64_t main_total = 0;

	cr_assert_eq(nall, 3);
	cr_assert_eq(n, 6); /* main and work in two threads, main and idle in one */
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].name, "main (app.py:18)"))
			main_total += rows[i].total;
	cr_assert_eq(main_total, 45);
	cr_assert_eq(rows[0].pid, 100);
	cr_assert_eq(rows[0].tid, 100);
	cr_assert_eq(rows[0].self, 30);
	top__free(rows, n);
	top__free(all, nall);
	profile__free(p);
}

Test(live_format, lines_are_escaped_and_fit)
{
	struct live_table *t = live_table__new();
	struct profile *p = profile__new();
	uint32_t f = py(p, "evil\x1b[2Jname", "x\ty.py", 3, 1);
	struct live_view v = { 0 };
	struct live_totals tot;
	size_t n;
	char buf[512], head[512];

	add(p, 7, 7, "t\x1b]0;title\x07", &f, 1, 4);
	live_table__add(t, p);
	struct live_row *rows = live_table__view(t, &v, &n, &tot);
	struct live_layout l = { .now = true, .func_width = live_func_width(rows, n, 40), .interval_s = 1 };

	live_format_header(&l, head, sizeof(head));
	live_format_row(&l, &rows[0], &tot, buf, sizeof(buf));
	cr_assert_null(strchr(buf, '\x1b'), "%s", buf);
	cr_assert_null(strchr(buf, '\t'), "%s", buf);
	cr_assert_str_eq(buf, " 100.0  100.0   100.0  100.0         4  evil\\x1b[2Jname  x\\x09y.py:1");
	cr_assert_eq(strstr(buf, "evil") - buf, strstr(head, "FUNCTION") - head, "%s\n%s", head, buf);
	v.pid = 7;
	v.tid = 7;
	live_format_view(t, &v, buf, sizeof(buf));
	cr_assert_null(strchr(buf, '\x1b'), "%s", buf);
	cr_assert_null(strchr(buf, '\x07'), "%s", buf);
	cr_assert(strstr(buf, "process: 7 python3 | thread: 7 t\\x1b]0;title\\x07"), "%s", buf);

	/* Cut by characters, not bytes. */
	char s[] = "f\xc3\xa9\xc3\xa9x";
	live_clip(s, 3);
	cr_assert_str_eq(s, "f\xc3\xa9\xc3\xa9");
	cr_assert_eq(live_width(s), 3);
	char path[] = "/very/long/path/\xc3\xa9/app.py:12";
	live_clip_left(path, 14);
	cr_assert_str_eq(path, "...\xc3\xa9/app.py:12");
	cr_assert_eq(live_width(path), 14);
	free(rows);
	profile__free(p);
	live_table__free(t);
}

Test(live_format, wall_split_and_status)
{
	struct live_table *t = live_table__new();
	struct profile *p = profile__new();
	uint32_t f = py(p, "handler", "srv.py", 9, 8);
	struct sample_labels on = { .pid = 1, .tid = 1 }, io = { .pid = 1, .tid = 1, .offcpu = OFFCPU_IO };
	struct live_view v = { 0 };
	struct live_totals tot;
	size_t n;
	char buf[512];

	profile__meta(p)->wall = 1;
	profile__add(p, &on, &f, 1, 1);
	profile__add(p, &io, &f, 1, 3);
	live_table__add(t, p);
	cr_assert(live_table__wall(t));
	struct live_row *rows = live_table__view(t, &v, &n, &tot);
	struct live_layout l = { .wall = true, .reasons = tot.reasons, .func_width = 8 };

	cr_assert_eq(tot.reasons, 1u << OFFCPU_NONE | 1u << OFFCPU_IO);
	live_format_header(&l, buf, sizeof(buf));
	cr_assert_str_eq(buf, " SELF% TOTAL%   SAMPLES    CPU%      io%  FUNCTION  FILE:LINE");
	live_format_row(&l, &rows[0], &tot, buf, sizeof(buf));
	cr_assert_str_eq(buf, " 100.0  100.0         4    25.0     75.0  handler   srv.py:8");

	struct live_status st = { .targets = "-p 1 (\x1b[31mx)",
				  .mode = "wall",
				  .freq = 99,
				  .ncpus = 2,
				  .elapsed_s = 3,
				  .samples = 4,
				  .samples_now = 4,
				  .interval_s = 1,
				  .lost = 2,
				  .own_cpu_pct = 1.25,
				  .bpf_pct = -1,
				  .paused = true };
	live_format_status(&st, buf, sizeof(buf));
	cr_assert_str_eq(buf, "pyebpf top: -p 1 (\\x1b[31mx) | wall 99 Hz on 2 CPUs | 3 s | 4 samples (4/s) | 2 lost | "
			      "cost: pyebpf 1.2% of a core | PAUSED");
	free(rows);
	profile__free(p);
	live_table__free(t);
}

/* --mode memory: a sample is a point in every N bytes of growth; the table and the status say bytes. */
Test(live_format, memory_shows_bytes_not_samples)
{
	struct live_table *t = live_table__new();
	struct profile *p = profile__new();
	uint32_t f = py(p, "leak", "mem.py", 40, 39);
	struct live_view v = { 0 };
	struct live_totals tot;
	size_t n;
	char buf[512];

	add(p, 5, 5, "MainThread", &f, 1, 3);
	live_table__add(t, p);
	struct live_row *rows = live_table__view(t, &v, &n, &tot);
	struct live_layout l = { .func_width = 4, .mem_sample_bytes = 512 * 1024 };

	live_format_header(&l, buf, sizeof(buf));
	cr_assert_str_eq(buf, " SELF% TOTAL%      GREW  FUNCTION  FILE:LINE");
	live_format_row(&l, &rows[0], &tot, buf, sizeof(buf));
	cr_assert_str_eq(buf, " 100.0  100.0  1.50 MiB  leak  mem.py:39"); /* functions: where they start */

	struct live_status st = { .targets = "-p 5",
				  .mode = "memory",
				  .elapsed_s = 2,
				  .samples = 3,
				  .samples_now = 2,
				  .interval_s = 1,
				  .bpf_pct = -1,
				  .mem_sample_bytes = 512 * 1024 };
	live_format_status(&st, buf, sizeof(buf));
	cr_assert_str_eq(buf, "pyebpf top: -p 5 | memory growth | 2 s | 1.50 MiB grew (1 MiB/s) | 0 lost | "
			      "cost: pyebpf 0.0% of a core");
	free(rows);
	profile__free(p);
	live_table__free(t);
}
