/* Chrome trace and SVG flame graph writers, and the top table. */
#include "unit.h"

#include <inttypes.h>

#include "frames.h"
#include "profile/profile.h"
#include "write/top.h"
#include "write/flamegraph.h"
#include "write/trace.h"

#define MS 1000000ULL

static char *run_writer(const struct profile *p, int (*write)(const struct profile *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_eq(write(p, f), 0);
	fclose(f);
	return buf;
}

static int write_svg(const struct profile *p, FILE *f)
{
	struct flamegraph_opts o = { .title = "t<&>" };

	return flamegraph__write(p, &o, f);
}

Test(trace, merged_slices_gaps_and_names)
{
	struct profile *p = profile__new();
	uint32_t a = frame(p, FRAME_PYTHON, "a", "/x.py", 1, 1), b = frame(p, FRAME_NATIVE, "b\"q", "/l.so", 0, 0);
	uint32_t c = frame(p, FRAME_KERNEL, "c", "", 0, 0);
	struct sample_labels l = {
		.pid = 1, .tid = 2, .comm = profile__str(p, "py"), .thread = profile__str(p, "main")
	};
	uint32_t ab[] = { a, b }, ac[] = { a, c };

	profile__meta(p)->period_ns = 10 * MS;
	profile__add_at(p, &l, ab, 2, 1, 0);
	profile__add_at(p, &l, ab, 2, 1, 10 * MS);
	profile__add_at(p, &l, ac, 2, 1, 20 * MS);
	profile__add_at(p, &l, ab, 1, 1, 100 * MS + 1500); /* after a gap: a alone; kept to the µs */
	profile__add(p, &l, ab, 2, 5);                     /* untimed: not on a timeline */
	char *got = run_writer(p, trace__write);
	cr_assert_str_eq(
		got,
		"{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"pyebpf\",\"start_epoch_ns\":0,"
		"\"period_ns\":10000000},\n\"traceEvents\":[\n"
		"{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"py [pid 1]\"}},\n"
		"{\"ph\":\"M\",\"pid\":1,\"tid\":2,\"name\":\"thread_name\",\"args\":{\"name\":\"main [tid 2]\"}},\n"
		"{\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":0.000,\"cat\":\"python\",\"name\":\"a (/x.py:1)\"},\n"
		"{\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":0.000,\"cat\":\"native\",\"name\":\"b\\\"q\"},\n"
		"{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":20000.000,\"cat\":\"native\",\"name\":\"b\\\"q\"},\n"
		"{\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":20000.000,\"cat\":\"kernel\",\"name\":\"c\"},\n"
		"{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":30000.000,\"cat\":\"kernel\",\"name\":\"c\"},\n"
		"{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":30000.000,\"cat\":\"python\",\"name\":\"a (/x.py:1)\"},\n"
		"{\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":100001.000,\"cat\":\"python\",\"name\":\"a (/x.py:1)\"},\n"
		"{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":110001.000,\"cat\":\"python\",\"name\":\"a (/x.py:1)\"}\n"
		"]}\n");
	free(got);
	profile__free(p);
}

/* A process track is named as --processes each names the process frame:
 * a multiprocessing child with the name multiprocessing gave it (in any of
 * its samples, the latest), escaped for JSON; one track per process even
 * when the flame graphs merge processes of one command. */
Test(trace, process_tracks_named_as_process_frames)
{
	struct profile *p = profile__new();
	uint32_t a = frame(p, FRAME_PYTHON, "worker", "/mp.py", 5, 4);
	struct sample_labels before = {
		.pid = 25477, .tid = 25477, .comm = profile__str(p, "python3"), .thread = profile__str(p, "MainThread")
	};
	struct sample_labels named = before, other = before, odd = before;

	named.process = profile__str(p, "Worker-1");
	other.pid = other.tid = 25478;
	odd.pid = odd.tid = 25479;
	odd.process = profile__str(p, "evil\"\n\x01");
	odd.thread = profile__str(p, "t\"1");
	profile__meta(p)->period_ns = 10 * MS;
	profile__add_at(p, &before, &a, 1, 1, 0); /* before its name was read */
	profile__add_at(p, &named, &a, 1, 1, 10 * MS);
	profile__add_at(p, &other, &a, 1, 1, 0);
	profile__add_at(p, &odd, &a, 1, 1, 0);
	char *got = run_writer(p, trace__write);
	cr_assert(strstr(got, "{\"ph\":\"M\",\"pid\":25477,\"tid\":0,\"name\":\"process_name\","
			      "\"args\":{\"name\":\"python3 [pid 25477, Worker-1]\"}}"),
		  "%s", got);
	cr_assert(strstr(got, "\"args\":{\"name\":\"python3 [pid 25478]\"}}"), "%s", got);
	cr_assert(strstr(got, "\"args\":{\"name\":\"python3 [pid 25479, evil\\\"\\u000a\\u0001]\"}}"), "%s", got);
	cr_assert(strstr(got, "\"args\":{\"name\":\"t\\\"1 [tid 25479]\"}}"), "%s", got);
	cr_assert(strstr(got, "\"args\":{\"name\":\"MainThread [tid 25477]\"}}"), "%s", got);
	cr_assert_eq(occurrences_of(got, "\"process_name\""), 3, "one track per process");
	free(got);
	profile__free(p);
}

/* The flame graph merges processes of one command by default, as folded
 * does; --processes each gives each its frame, with its own name. */
Test(flamegraph, processes_merged_by_default_each_apart)
{
	struct profile *p = profile__new();
	uint32_t w = frame(p, FRAME_PYTHON, "view", "/app.py", 9, 8);
	uint32_t gu = profile__str(p, "gunicorn");

	for (uint32_t pid = 11; pid <= 13; pid++) {
		struct sample_labels l = { .pid = pid, .tid = pid, .comm = gu };

		if (pid == 12)
			l.process = profile__str(p, "Worker<2>");
		profile__add(p, &l, &w, 1, 1);
	}
	char *svg = run_writer(p, write_svg);
	cr_assert(strstr(svg, "<title>gunicorn (3 samples, 100.00%)</title>"), "%s", svg);
	cr_assert(strstr(svg, "<title>view (/app.py:9) (3 samples, 100.00%)</title>"), "one tower");
	cr_assert_not(strstr(svg, "[pid "));
	free(svg);

	struct flamegraph_opts each = { .processes = PROCESSES_EACH };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(flamegraph__write(p, &each, f), 0);
	fclose(f);
	cr_assert(strstr(buf, "<title>gunicorn [pid 11] (1 samples, 33.33%)</title>"), "%s", buf);
	cr_assert(strstr(buf, "<title>gunicorn [pid 12, Worker&lt;2&gt;] (1 samples, 33.33%)</title>"), "%s", buf);
	cr_assert(strstr(buf, "<title>gunicorn [pid 13] (1 samples, 33.33%)</title>"), "%s", buf);
	free(buf);
	profile__free(p);
}

Test(flamegraph, frames_shares_colours_and_escaping)
{
	struct profile *p = profile__new();
	uint32_t m = frame(p, FRAME_PYTHON, "<module>", "/x.py", 1, 1),
		 w = frame(p, FRAME_PYTHON, "work", "/x.py", 9, 8);
	uint32_t n = frame(p, FRAME_NATIVE, "Matrix<int>::multiply()", "/l.so", 0, 0);
	uint32_t k = frame(p, FRAME_KERNEL, "do_syscall_64", "", 0, 0);
	struct sample_labels l = { .pid = 1, .tid = 1, .comm = profile__str(p, "python3") };
	uint32_t s1[] = { m, w }, s2[] = { m, w, n, k };

	profile__add(p, &l, s1, 2, 3);
	profile__add(p, &l, s2, 4, 1);
	char *svg = run_writer(p, write_svg);
	cr_assert(strstr(svg, "<title>all (4 samples, 100.00%)</title>"), "%s", svg);
	cr_assert(strstr(svg, "<title>python3 (4 samples, 100.00%)</title>"));
	cr_assert(strstr(svg, "<title>work (/x.py:9) (4 samples, 100.00%)</title>"));
	cr_assert(strstr(svg, "<title>Matrix&lt;int&gt;::multiply() (1 samples, 25.00%)</title>"));
	cr_assert(strstr(svg, "<title>do_syscall_64_[k] (1 samples, 25.00%)</title>"));
	cr_assert(strstr(svg, ">t&lt;&amp;&gt;</text>"), "the title is escaped");
	cr_assert_eq(occurrences_of(svg, "\n<g><title>"), 6, "all, process, 2 Python, native, kernel");
	/* 4 samples over 1180 px: 295 px per sample. */
	cr_assert(strstr(svg, "width=\"295.0\" height=\"15\""), "the native frame is one sample wide");
	cr_assert(strstr(svg, "width=\"1180.0\" height=\"15\""));
	cr_assert(strstr(svg, "function zoom(") && strstr(svg, "function search("), "the script is embedded");
	free(svg);
	profile__free(p);
}

Test(flamegraph, hundred_thousand_distinct_stacks_stay_small)
{
	struct profile *p = profile__new();
	struct sample_labels l = { .pid = 1, .tid = 1, .comm = profile__str(p, "python3") };
	uint32_t fr[64], st[8];
	char name[32];

	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		fr[i] = frame(p, FRAME_PYTHON, name, "/x.py", (uint32_t)i + 1, 1);
	}
	/* 64^3 / 2.6 combinations of the last three levels under a shared root. */
	for (uint32_t i = 0; i < 100000; i++) {
		st[0] = fr[0];
		st[1] = fr[1 + i % 3];
		st[2] = fr[i % 64];
		st[3] = fr[(i / 64) % 64];
		st[4] = fr[(i / 4096) % 64];
		profile__add(p, &l, st, 5, 1 + (i % 7 == 0) * 1000);
	}
	cr_assert_eq(profile__nstacks(p), 100000);
	char *svg = run_writer(p, write_svg);
	size_t frames = occurrences_of(svg, "\n<g><title>"), len = strlen(svg);
	cr_log_info("100k stacks: %zu frames drawn, %zu KiB\n", frames, len / 1024);
	cr_assert_lt(frames, 30000, "%zu frames drawn", frames);
	cr_assert_lt(len, 8u << 20, "%zu bytes", len);
	free(svg);
	profile__free(p);
}

#include <sys/resource.h>

/* Thousands of processes, each one sample 4096 frames deep and each wide
 * enough to draw (0.29 px): 16 million frames took 2.6 GB and a 1.6 GB SVG.
 * The graph stops at the depth that passes a million frames and says so. */
Test(flamegraph, thousands_of_deep_towers_stop_at_a_million_frames, .timeout = 120)
{
	enum {
		TOWERS = 300,
		DEPTH = 4096
	};
	struct profile *p = profile__new();
	uint32_t *fr = malloc(DEPTH * sizeof(*fr));
	struct flamegraph_opts o = { 0 };
	char name[32], *head = malloc(1 << 20); /* the script comes before the title */
	FILE *out = tmpfile();
	struct rusage ru;

	for (int i = 0; i < DEPTH; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		fr[i] = frame(p, FRAME_PYTHON, name, "/x.py", (uint32_t)i + 1, 1);
	}
	for (int i = 0; i < TOWERS; i++) {
		struct sample_labels l = { .pid = 1, .tid = 1 };

		snprintf(name, sizeof(name), "p%d", i);
		l.comm = profile__str(p, name);
		profile__add(p, &l, fr, DEPTH, 1);
	}
	cr_assert_eq(flamegraph__write(p, &o, out), 0);
	rewind(out);
	head[fread(head, 1, (1 << 20) - 1, out)] = 0;
	/* Levels of 300 frames: the process and 3332 frames are 999,901 with the root. */
	cr_assert(strstr(head, "pyebpf (frames from depth 3334 on left out: a graph draws at most 1000000)"), "%s",
		  strstr(head, "id=\"title\""));
	fseek(out, 0, SEEK_END);
	long size = ftell(out);
	cr_assert_lt(size, 400L << 20);
	getrusage(RUSAGE_SELF, &ru);
	cr_log_info("300 towers of 4096: %ld MiB of SVG, peak RSS %ld MiB\n", size >> 20, ru.ru_maxrss >> 10);
	fclose(out);
	free(head);
	free(fr);
	profile__free(p);
}

/* As tall as the frames drawn: a one-sample tower too thin to draw (0.1 px)
 * adds no height, so the picture opens on the frames that matter; the
 * flip between flame and icicle is there. */
Test(flamegraph, height_of_drawn_frames_and_a_flip_button)
{
	struct profile *p = profile__new();
	struct sample_labels l = { .pid = 1, .tid = 1, .comm = profile__str(p, "python3") };
	uint32_t deep[300], wide[3];
	char name[32];

	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		deep[i] = frame(p, FRAME_PYTHON, name, "/x.py", (uint32_t)i + 1, 1);
	}
	for (int i = 0; i < 3; i++)
		wide[i] = deep[i];
	profile__add(p, &l, wide, 3, 100000);
	profile__add(p, &l, deep, 300, 1); /* 0.01 px wide at 1200 px */
	char *svg = run_writer(p, write_svg);
	int height = 0;
	cr_assert_eq(sscanf(strstr(svg, "<svg "), "<svg version=\"1.1\" width=\"%*d\" height=\"%d\"", &height), 1);
	/* all, the process, three frames: 5 rows of 16 px plus 80 px around. */
	cr_assert_eq(height, 56 + 5 * 16 + 24, "height %d", height);
	cr_assert(strstr(svg, "<text id=\"flip\" class=\"button\""), "the flame/icicle button");
	cr_assert(strstr(svg, "function flip("), "its script");
	free(svg);
	profile__free(p);
}

Test(top, self_and_total_per_function)
{
	struct profile *p = profile__new();
	uint32_t m = frame(p, FRAME_PYTHON, "<module>", "/x.py", 1, 1);
	uint32_t r1 = frame(p, FRAME_PYTHON, "rec", "/x.py", 5, 4), r2 = frame(p, FRAME_PYTHON, "rec", "/x.py", 6, 4);
	uint32_t k = frame(p, FRAME_KERNEL, "read", "", 0, 0);
	struct sample_labels l = { .pid = 1, .tid = 1, .comm = profile__str(p, "py") };
	uint32_t s1[] = { m, r1, r2, r1 }, s2[] = { m, r1, k };
	size_t n;

	profile__add(p, &l, s1, 4, 3); /* recursion: counted once in total */
	profile__add(p, &l, s2, 3, 1);
	struct top_row *rows = top__rows(p, &n);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(rows[0].name, "rec (/x.py:4)");
	cr_assert_eq(rows[0].self, 3);
	cr_assert_eq(rows[0].total, 4);
	cr_assert_str_eq(rows[1].name, "read_[k]");
	cr_assert_eq(rows[1].self, 1);
	cr_assert_str_eq(rows[2].name, "<module> (/x.py:1)");
	cr_assert_eq(rows[2].self, 0);
	cr_assert_eq(rows[2].total, 4);
	top__free(rows, n);
	profile__free(p);
}

#include "base/escape.h"

Test(escape, control_characters_never_reach_a_terminal)
{
	char out[256];

	cr_assert_str_eq(text_escape("plain name (f.py:3)", out, sizeof(out)), "plain name (f.py:3)");
	cr_assert_str_eq(text_escape("a\rb\x1b[2Kc\n", out, sizeof(out)), "a\\x0db\\x1b[2Kc\\x0a");
	cr_assert_str_eq(text_escape("del\x7f", out, sizeof(out)), "del\\x7f");
	/* UTF-8 stays; C1 controls (CSI as U+009B) and broken sequences do not. */
	cr_assert_str_eq(text_escape("função_函数_\xf0\xa0\x80\x80", out, sizeof(out)), "função_函数_\xf0\xa0\x80\x80");
	cr_assert_str_eq(text_escape("x\xc2\x9b"
				     "2J",
				     out, sizeof(out)),
			 "x\\u009b2J");
	cr_assert_str_eq(text_escape("bad\xff\xc3", out, sizeof(out)), "bad\\xff\\xc3");
	/* Cut at a whole character or escape, never inside one. */
	cr_assert_str_eq(text_escape("ab\x1b", out, 5), "ab");
	cr_assert_str_eq(text_escape("ab\x1b", out, 7), "ab\\x1b");
}

static char *json_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_str(f, s);
	fclose(f);
	return buf;
}

#include "base/util.h"
#include "python/procmem.h"

/* Every JSON file pyebpf writes parses whatever a target's bytes were: one
 * bad byte made Python's json (and speedscope) refuse a whole recording. */
Test(escape, json_and_utf8_are_always_well_formed)
{
	char buf[8], *j;

	j = json_of("fun\"ção\\\n");
	cr_assert_str_eq(j, "\"fun\\\"ção\\\\\\u000a\"");
	free(j);
	/* Stray, overlong (F0 8F: what an encoder once wrote for U+FFFD),
	 * surrogate, cut. */
	j = json_of("a\xff"
		    "b\xf0\x8f\xbf\xbd c\xed\xa0\x80 d\xe5\x87");
	cr_assert_str_eq(j, "\"a\\ufffdb\\ufffd\\ufffd\\ufffd\\ufffd c\\ufffd\\ufffd\\ufffd d\\ufffd\\ufffd\"");
	free(j);
	j = json_of("\xf0\xa0\x80\x80");
	cr_assert_str_eq(j, "\"\xf0\xa0\x80\x80\"");
	free(j);
	/* A code point read from a string that changed under the read. */
	cr_assert_eq(utf8_encode(0x20000, buf), 4);
	cr_assert_eq(memcmp(buf, "\xf0\xa0\x80\x80", 4), 0);
	for (size_t i = 0; i < 5; i++) {
		const uint32_t bad[] = { 0xd800, 0xdbff, 0xdfff, 0x110000, 0xffffffff };

		memset(buf, 0, sizeof(buf));
		cr_assert_eq(utf8_encode(bad[i], buf), 3, "U+%X", bad[i]);
		cr_assert_str_eq(buf, "\xef\xbf\xbd", "U+%X", bad[i]);
	}
	cr_assert_eq(utf8_encode(0x10ffff, buf), 4);
	cr_assert_eq(utf8_valid_len(buf), 4);
}

#include "read/pprof.h"
#include "write/folded.h"
#include "write/pprof.h"
#include "write/speedscope.h"

/* Every writer and the reader take any depth their format can hold: none
 * recurses once per frame (100,000 frames crashed the flame graph before). */
Test(deep, every_writer_takes_100000_frames_and_the_reader_cuts_them, .timeout = 120)
{
	enum {
		DEPTH = 100000
	};
	struct profile *p = profile__new(), *back;
	uint32_t *frames = malloc(DEPTH * sizeof(*frames));
	struct sample_labels l = { .pid = 1, .tid = 1, .comm = profile__str(p, "deep") };
	struct flamegraph_opts go = { .threads = true };
	char *buf = NULL, why[256];
	size_t len = 0;
	FILE *null = fopen("/dev/null", "w"), *mem;

	for (uint32_t i = 0; i < DEPTH; i++) {
		char name[32];

		snprintf(name, sizeof(name), "f%u", i % 7);
		frames[i] = frame(p, FRAME_PYTHON, name, "/deep.py", i % 7 + 1, 1);
	}
	profile__add_at(p, &l, frames, DEPTH, 3, 5);
	profile__meta(p)->period_ns = 1000000;
	cr_assert_eq(flamegraph__write(p, &go, null), 0);
	cr_assert_eq(folded__write(p, NULL, null), 0);
	cr_assert_eq(trace__write(p, null), 0);
	cr_assert_eq(speedscope__write(p, null), 0);
	cr_assert_eq(top__print(p, 5, null), 0);
	mem = open_memstream(&buf, &len);
	cr_assert_eq(pprof__write(p, mem), 0);
	fclose(mem);
	back = pprof__read((const uint8_t *)buf, len, why, sizeof(why));
	cr_assert_not_null(back, "%s", why);
	cr_assert_eq(profile__total(back), 3);
	/* The reader keeps the leaf end under a mark (read/pprof.h: PPROF_MAX_DEPTH). */
	struct profile_entry e;
	profile__entry(back, 0, &e);
	cr_assert_eq(e.nframes, PPROF_MAX_DEPTH);
	cr_assert_str_eq(profile__str_at(back, profile__frame_at(back, e.frames[0])->name), "[truncated]");
	cr_assert_eq(profile__frame_at(back, e.frames[PPROF_MAX_DEPTH - 1])->line,
		     profile__frame_at(p, frames[DEPTH - 1])->line);
	cr_assert_eq(profile__frame_at(back, e.frames[1])->line, profile__frame_at(p, frames[DEPTH - 4095])->line);
	profile__free(back);
	free(buf);
	fclose(null);
	free(frames);
	profile__free(p);
}

/* A deep stack sampled with jitter (gaps of 3 periods, below 20 ms): the
 * trace grows with changes of stack, not with samples times depth. */
Test(trace, size_follows_changes_not_samples)
{
	enum {
		DEPTH = 1000,
		SAMPLES = 2000
	};
	struct profile *p = profile__new();
	uint32_t *st = malloc((DEPTH + 1) * sizeof(*st));
	struct sample_labels l = { .pid = 1, .tid = 1, .comm = profile__str(p, "py") };
	uint32_t leaf[2] = { frame(p, FRAME_PYTHON, "work", "/w.py", 24, 20),
			     frame(p, FRAME_PYTHON, "work", "/w.py", 26, 20) };

	for (int i = 0; i < DEPTH; i++)
		st[i] = frame(p, FRAME_PYTHON, "recurse", "/w.py", 81, 80);
	profile__meta(p)->period_ns = MS;
	for (int i = 0; i < SAMPLES; i++) {
		st[DEPTH] = leaf[i % 2];
		profile__add_at(p, &l, st, DEPTH + 1, 1, (uint64_t)i * 3 * MS);
	}
	char *got = run_writer(p, trace__write);
	size_t b = occurrences_of(got, "\"ph\":\"B\"");
	/* The 1000 frames once, the leaf once per sample. */
	cr_assert_eq(b, DEPTH + SAMPLES, "%zu slices", b);
	free(got);
	free(st);
	profile__free(p);
}
