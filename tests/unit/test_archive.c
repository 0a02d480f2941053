/* Many recordings as one: merging, wall-clock windows, diffs, and serve's answers. */
#include "unit.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "archive/archive.h"
#include "profile/filter.h"
#include "frames.h"
#include "profile/profile.h"
#include "read/pprof.h"
#include "archive/rotation.h"
#include "serve/serve_api.h"
#include "write/top.h"
#include "base/wallclock.h"
#include "write/flamegraph.h"
#include "write/folded.h"
#include "write/pprof.h"

#define SEC 1000000000LL
/* 2026-11-23T14:00:00Z */
#define T0 1795442400LL

static char dir[64];

static void make_dir(void)
{
	strcpy(dir, "/tmp/pyebpf-archive-XXXXXX");
	cr_assert(mkdtemp(dir));
}

/* An interval file of `dir`: `n` samples of f() (k of them of g()) at 10 ms
 * steps from its start, period period_ns; returns its path. */
static char *interval(int64_t start_ns, uint64_t seq, int n, int k, uint64_t period_ns, int wall)
{
	struct profile *p = profile__new();
	uint32_t mod = frame(p, FRAME_PYTHON, "<module>", "/app.py", 1, 1);
	uint32_t f = frame(p, FRAME_PYTHON, "f", "/app.py", 5, 4), g = frame(p, FRAME_PYTHON, "g", "/app.py", 9, 8);
	struct sample_labels l = { .pid = 7, .tid = 7, .comm = profile__str(p, "python3") };
	uint32_t sf[] = { mod, f }, sg[] = { mod, g };
	char name[128], *path;
	FILE *out;

	for (int i = 0; i < n; i++)
		profile__add_at(p, &l, i < k ? sg : sf, 2, 1, (uint64_t)i * 10000000ULL);
	profile__meta(p)->period_ns = period_ns;
	profile__meta(p)->start_epoch_ns = start_ns;
	profile__meta(p)->duration_ns = SEC;
	profile__meta(p)->wall = wall;
	rotation_file_name(start_ns, seq, name, sizeof(name));
	cr_assert(asprintf(&path, "%s/%s", dir, name) > 0);
	out = fopen(path, "w");
	cr_assert_eq(pprof__write(p, out), 0);
	fclose(out);
	profile__free(p);
	return path;
}

static struct profile *load_dir(const struct filter *f, uint32_t flags)
{
	struct archive a = { 0 };
	struct archive_stats st;
	struct profile *p;

	cr_assert_eq(archive__add(&a, dir), 0);
	p = archive__load(&a, f, flags, &st);
	archive__free(&a);
	return p;
}

enum shown {
	TABLE,
	SVG,
	FOLDED,
	DIFF_FOLDED
};

/* A profile as a diff's table, a diff's SVG, or folded lines (a diff's or not). */
static char *printed(const struct profile *p, enum shown how)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct flamegraph_opts g = { .diff = true };
	struct folded_opts f = { .diff = how == DIFF_FOLDED };

	cr_assert_eq(how == TABLE ? top__print_diff(p, 10, out)
		     : how == SVG ? flamegraph__write(p, &g, out)
				  : folded__write(p, &f, out),
		     0);
	fclose(out);
	return buf;
}

static char *folded_of(const struct profile *p, bool diff)
{
	return printed(p, diff ? DIFF_FOLDED : FOLDED);
}

Test(wallclock, forms)
{
	struct time_arg since, until;
	int64_t now = (T0 + 3600) * SEC;

	cr_assert_eq(time_arg_parse("90", &since), 0);
	cr_assert(!since.wall);
	cr_assert_eq(since.offset_ns, 90 * SEC);
	cr_assert_eq(time_arg_parse("2026-11-23T14:00Z", &since), 0);
	cr_assert_eq(time_arg_epoch(&since, NULL, now), T0 * SEC);
	/* A bare time takes the other bound's date. */
	cr_assert_eq(time_arg_parse("14:20:00.5Z", &until), 0);
	cr_assert_eq(time_arg_epoch(&until, &since, 0), (T0 + 1200) * SEC + SEC / 2);
	/* ...else today's. */
	cr_assert_eq(time_arg_epoch(&until, NULL, now), (T0 + 1200) * SEC + SEC / 2);
	cr_assert_eq(time_arg_parse("2026-11-23 14:00:05.123456789Z", &since), 0);
	cr_assert_eq(time_arg_epoch(&since, NULL, 0), (T0 + 5) * SEC + 123456789);
	cr_assert_eq(time_arg_parse("14:61", &since), -1);
	cr_assert_eq(time_arg_parse("2026-13-01T00:00", &since), -1);
	cr_assert_eq(time_arg_parse("-5", &since), -1);
	cr_assert_eq(time_arg_parse("14:00ZZ", &since), -1);
	cr_assert_eq(time_arg_parse("", &since), -1);
}

/* On the day clocks go forward, 04:00 in Berlin is 02:00Z, not 03:00Z
 * (midnight's offset plus four hours read it as 05:00). */
Test(wallclock, local_times_on_daylight_saving_days)
{
	struct time_arg t;
	char *tz = getenv("TZ") ? strdup(getenv("TZ")) : NULL;

	setenv("TZ", "Europe/Berlin", 1);
	tzset();
	cr_assert_eq(time_arg_parse("2026-03-29T04:00", &t), 0);
	cr_assert_eq(time_arg_epoch(&t, NULL, 0), 1774749600LL * SEC, "2026-03-29T02:00Z");
	cr_assert_eq(time_arg_parse("2026-03-29T01:30:00.25", &t), 0);
	cr_assert_eq(time_arg_epoch(&t, NULL, 0), (1774744200LL) * SEC + SEC / 4, "2026-03-29T00:30Z");
	/* Back to CET on October 25th: 12:00 is 11:00Z. */
	cr_assert_eq(time_arg_parse("2026-10-25 12:00", &t), 0);
	cr_assert_eq(time_arg_epoch(&t, NULL, 0), 1792926000LL * SEC);
	/* A bare time on today's date, today being the change: 04:00 is 02:00Z. */
	cr_assert_eq(time_arg_parse("04:00", &t), 0);
	cr_assert_eq(time_arg_epoch(&t, NULL, 1774760000LL * SEC), 1774749600LL * SEC);
	if (tz)
		setenv("TZ", tz, 1);
	else
		unsetenv("TZ");
	tzset();
	free(tz);
}

/* Days a month does not have, and numbers strtod takes but nobody means. */
Test(wallclock, impossible_days_and_numbers_are_refused)
{
	struct time_arg t;

	cr_assert_eq(time_arg_parse("2026-02-30", &t), -1);
	cr_assert_str_eq(t.why, "there is no such day");
	cr_assert_eq(time_arg_parse("2026-04-31T10:00", &t), -1);
	cr_assert_eq(time_arg_parse("2025-02-29", &t), -1);
	cr_assert_eq(time_arg_parse("2028-02-29", &t), 0, "a leap day");
	cr_assert_eq(time_arg_parse("2000-02-29", &t), 0);
	cr_assert_eq(time_arg_parse("2100-02-29", &t), -1);
	cr_assert_eq(time_arg_parse("2026-12-31T23:59:59Z", &t), 0);
	cr_assert_eq(time_arg_parse("0x10", &t), -1);
	cr_assert_str_eq(t.why, "seconds are written in decimal, as 90 or 2.5");
	cr_assert_eq(time_arg_parse("1e3", &t), -1);
	cr_assert_eq(time_arg_parse("5.", &t), 0);
	cr_assert_eq(t.offset_ns, 5 * SEC);
	cr_assert_eq(time_arg_parse("2.5", &t), 0);
	cr_assert_eq(t.offset_ns, 5 * SEC / 2);
	cr_assert_eq(time_arg_parse("3 ", &t), -1);
}

Test(archive, merge_is_the_sum_in_time_order)
{
	struct filter f;
	struct profile *p;
	struct profile_event_cursor c = { 0 };
	struct profile_event ev;
	uint64_t last = 0, n = 0;

	make_dir();
	/* Written out of order: merged by time all the same. */
	free(interval((T0 + 2) * SEC, 2, 30, 0, 10000000, 0));
	free(interval(T0 * SEC, 0, 10, 0, 10000000, 0));
	free(interval((T0 + 1) * SEC, 1, 20, 5, 10000000, 0));
	filter__init(&f);
	p = load_dir(&f, 0);
	cr_assert_eq(profile__total(p), 60);
	cr_assert_eq(profile__meta_of(p)->start_epoch_ns, T0 * SEC);
	cr_assert_eq(profile__meta_of(p)->duration_ns, 3 * SEC);
	while (profile__next_event(p, &c, &ev)) {
		cr_assert_geq(ev.time_ns, last, "the timeline runs forward");
		last = ev.time_ns;
		n += ev.count;
	}
	cr_assert_eq(n, 60);
	cr_assert_eq(last, 2 * SEC + 29 * 10000000ULL, "the last sample is 2.29 s after the first file's start");
	char *text = folded_of(p, false);
	cr_assert_str_eq(
		text, "python3;<module> (/app.py:1);f (/app.py:5) 55\npython3;<module> (/app.py:1);g (/app.py:9) 5\n");
	free(text);
	profile__free(p);
}

Test(archive, window_is_exact_at_interval_boundaries)
{
	struct filter f;
	struct profile *p;
	char *second;
	/* Starts not on a millisecond: names tell them rounded down. */
	int64_t s0 = T0 * SEC + 400000, s1 = (T0 + 1) * SEC + 400000, s2 = (T0 + 2) * SEC + 400000;

	make_dir();
	free(interval(s0, 0, 100, 0, 10000000, 0));
	second = interval(s1, 1, 100, 100, 10000000, 0);
	free(interval(s2, 2, 100, 0, 10000000, 0));
	/* The window as the names say it: exactly the second interval. */
	filter__init(&f);
	f.timed = true;
	f.since_epoch_ns = (T0 + 1) * SEC;
	f.until_epoch_ns = (T0 + 2) * SEC;
	p = load_dir(&f, 0);
	cr_assert_eq(profile__total(p), 100);
	char *text = folded_of(p, false);
	cr_assert_str_eq(text, "python3;<module> (/app.py:1);g (/app.py:9) 100\n");
	free(text);
	profile__free(p);
	/* Seconds from the first file's start: the same window. */
	filter__init(&f);
	f.timed = true;
	f.since_ns = 1 * SEC;
	f.until_ns = 2 * SEC;
	p = load_dir(&f, 0);
	cr_assert_eq(profile__total(p), 100);
	profile__free(p);
	/* Only overlapping files are read: a broken second file is never opened
	 * by a window of the third. */
	FILE *out = fopen(second, "w");
	fputs("not a profile", out);
	fclose(out);
	filter__init(&f);
	f.timed = true;
	f.since_epoch_ns = (T0 + 2) * SEC;
	p = load_dir(&f, 0);
	cr_assert_not_null(p);
	cr_assert_eq(profile__total(p), 100);
	profile__free(p);
	free(second);
}

Test(archive, frequencies_and_kinds)
{
	struct filter f;
	struct profile *p;
	size_t n;

	make_dir();
	free(interval(T0 * SEC, 0, 10, 0, 10000000, 0));      /* 100 Hz */
	free(interval((T0 + 1) * SEC, 1, 10, 0, 1000000, 0)); /* 1000 Hz */
	filter__init(&f);
	p = load_dir(&f, 0);
	/* The 100 Hz samples count as ten 1000 Hz samples each. */
	cr_assert_eq(profile__total(p), 110);
	cr_assert_eq(profile__meta_of(p)->period_ns, 1000000);
	cr_assert_eq(profile__comments(p, &n)[0] != NULL && n == 1, 1);
	profile__free(p);
	free(interval((T0 + 2) * SEC, 2, 10, 0, 1000000, 1));
	cr_redirect_stderr();
	p = load_dir(&f, 0);
	cr_assert_null(p);
	fflush(stderr);
	char want[512];
	snprintf(want, sizeof(want),
		 "pyebpf: cannot merge '%s/pyebpf-20261123T140000.000Z-000000.pb.gz' and "
		 "'%s/pyebpf-20261123T140002.000Z-000002.pb.gz': one records CPU time, the other wall-clock time "
		 "(--mode wall or off-cpu)\n",
		 dir, dir);
	cr_assert_stderr_eq_str(want);
}

/* A 1 ns period beside a 4.3 s one: 4.3e9 a sample wrapped in 32 bits
 * (10,065,408 for two); a period of 2^62 gave a scale of 0. */
Test(archive, frequencies_far_apart_count_in_64_bits)
{
	struct filter f;
	struct profile *p;

	make_dir();
	free(interval(T0 * SEC, 0, 2, 0, 4300000000ULL, 0));
	free(interval((T0 + 1) * SEC, 1, 1, 0, 1, 0));
	filter__init(&f);
	p = load_dir(&f, 0);
	cr_assert_not_null(p);
	cr_assert_eq(profile__total(p), 8600000001ULL);
	cr_assert_eq(profile__meta_of(p)->period_ns, 1);
	/* Written and read back: the same count. */
	char *buf = NULL, why[256];
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	cr_assert_eq(pprof__write(p, out), 0);
	fclose(out);
	struct profile *back = pprof__read((uint8_t *)buf, len, why, sizeof(why));
	cr_assert_not_null(back, "%s", why);
	cr_assert_eq(profile__total(back), 8600000001ULL);
	profile__free(back);
	free(buf);
	profile__free(p);

	make_dir();
	char *huge = interval(T0 * SEC, 0, 2, 0, 1ULL << 62, 0);
	free(interval((T0 + 1) * SEC, 1, 1, 0, 1000000, 0));
	cr_redirect_stderr();
	cr_assert_null(load_dir(&f, 0));
	fflush(stderr);
	char want[512];
	snprintf(want, sizeof(want),
		 "pyebpf: cannot read '%s': its sampling period of 4611686018427387904 ns is not a period (0 to one "
		 "hour)\n",
		 huge);
	cr_assert_stderr_eq_str(want);
	free(huge);
}

/* Both sides of a diff in one profile, as report builds it. */
static struct profile *diff_of(const char *after_dir, const char *before_dir)
{
	struct filter f;
	struct profile *p, *b;

	filter__init(&f);
	strcpy(dir, after_dir);
	p = load_dir(&f, 0);
	strcpy(dir, before_dir);
	b = load_dir(&f, LABEL_BASE);
	filter__copy(&f, b, p, 0, 1, 0);
	profile__free(b);
	return p;
}

Test(diff, against_itself_is_empty)
{
	char one[64];

	make_dir();
	free(interval(T0 * SEC, 0, 40, 10, 10000000, 0));
	strcpy(one, dir);
	struct profile *p = diff_of(one, one);
	char *text = folded_of(p, true), *top = printed(p, TABLE);

	cr_assert_str_eq(text, "python3;<module> (/app.py:1);f (/app.py:5) 30 30\n"
			       "python3;<module> (/app.py:1);g (/app.py:9) 10 10\n");
	cr_assert_str_eq(top, "before: 40 samples, after: 40 samples; shares of each side's samples\n"
			      " BEFORE   AFTER   CHANGE  SELF-B  SELF-A   CHANGE  FUNCTION\n"
			      "(no change: every function has the same share before and after)\n");
	free(text);
	free(top);
	profile__free(p);
}

Test(diff, a_function_that_doubles_is_red)
{
	char before[64], after[64];

	/* before: f 10, g 10; after: f 20, g 10. */
	make_dir();
	free(interval(T0 * SEC, 0, 20, 10, 10000000, 0));
	strcpy(before, dir);
	make_dir();
	free(interval((T0 + 60) * SEC, 0, 30, 10, 10000000, 0));
	strcpy(after, dir);
	struct profile *p = diff_of(after, before);
	char *text = folded_of(p, true), *top = printed(p, TABLE), *svg = printed(p, SVG);

	cr_assert_str_eq(text, "python3;<module> (/app.py:1);f (/app.py:5) 10 20\n"
			       "python3;<module> (/app.py:1);g (/app.py:9) 10 10\n");
	cr_assert(strstr(top, "before: 20 samples, after: 30 samples"), "%s", top);
	/* f: 50% of before, 66.7% of after: +16.67 points; g the opposite. */
	cr_assert(strstr(top, "  50.0%   66.7%   +16.67   50.0%   66.7%   +16.67  f (/app.py:4)\n"), "%s", top);
	cr_assert(strstr(top, "  50.0%   33.3%   -16.67   50.0%   33.3%   -16.67  g (/app.py:8)\n"), "%s", top);
	/* The deepest red for the largest change; numbers on hover. */
	cr_assert(strstr(svg, "f (/app.py:5) (20 samples, 66.67%; before 10 samples, 50.00%; +16.67 points)</title>"
			      "<rect x=\"10.0\""),
		  "%s", svg);
	const char *f = strstr(svg, "f (/app.py:5) (20 samples");
	cr_assert(strstr(f, "fill=\"rgb(255,38,38)\""), "f is red");
	const char *g = strstr(svg, "g (/app.py:9) (10 samples");
	cr_assert(strstr(g, "fill=\"rgb(38,38,255)\""), "g is blue");
	cr_assert(strstr(svg, "<text x=\"10\" y=\"44\">share grew</text>") || strstr(svg, ">share grew</text>"));
	free(text);
	free(top);
	free(svg);
	profile__free(p);
}

/* serve's answers, without HTTP. */
static const char *const *query_pairs;

static const char *query(void *ctx, const char *name)
{
	(void)ctx;
	for (size_t i = 0; query_pairs && query_pairs[i]; i += 2)
		if (!strcmp(query_pairs[i], name))
			return query_pairs[i + 1];
	return NULL;
}

static void ask(struct serve_api *a, const char *route, const char *const *pairs, struct serve_reply *r)
{
	query_pairs = pairs;
	serve_api__handle(a, route, query, NULL, r);
}

Test(serve_api, answers_and_refusals)
{
	struct serve_reply r;
	struct serve_api *a;

	make_dir();
	free(interval(T0 * SEC, 0, 10, 0, 10000000, 0));
	free(interval((T0 + 1) * SEC, 1, 20, 20, 10000000, 0));
	/* Not ours: never listed, never read. */
	close(open(strcat(strcpy((char[128]){ 0 }, dir), "/secret.pb.gz"), O_CREAT | O_WRONLY, 0600));
	a = serve_api__new(dir, SERVE_MAX_BYTES);
	cr_assert_not_null(a);

	ask(a, "/", NULL, &r);
	cr_assert_eq(r.status, 200);
	cr_assert(strstr(r.body, "<div id=\"timeline\">"));
	free(r.body);

	ask(a, "/api/intervals", NULL, &r);
	cr_assert_eq(r.status, 200);
	cr_assert(strstr(r.body, "\"seq\":0,\"name\":\"pyebpf-20261123T140000.000Z-000000.pb.gz\","
				 "\"start\":1795442400000.000,\"duration\":1000.000,\"samples\":10,\"offcpu\":0}"),
		  "%s", r.body);
	cr_assert(strstr(r.body, "\"samples\":20"));
	cr_assert(!strstr(r.body, "secret"));
	free(r.body);

	ask(a, "/api/flame", (const char *const[]){ "from", "1", "to", "1", NULL }, &r);
	cr_assert_eq(r.status, 200);
	cr_assert_str_eq(r.type, "image/svg+xml");
	cr_assert(strstr(r.body, "data-total=\"20\""));
	free(r.body);

	ask(a, "/api/top", (const char *const[]){ "from", "1", "to", "1", "base_from", "0", "base_to", "0", NULL }, &r);
	cr_assert_eq(r.status, 200);
	cr_assert(strstr(r.body, "+100.00  g (/app.py:8)"), "%s", r.body);
	free(r.body);

	/* Hostile or wrong requests: one line, no file. */
	ask(a, "/../secret.pb.gz", NULL, &r);
	cr_assert_eq(r.status, 404);
	free(r.body);
	ask(a, "/api/flame", (const char *const[]){ "from", "../../etc/passwd", "to", "1", NULL }, &r);
	cr_assert_eq(r.status, 400);
	cr_assert_str_eq(r.body, "from and to must be interval numbers, from not after to\n");
	free(r.body);
	ask(a, "/api/flame", (const char *const[]){ "from", "0", "to", "18446744073709551615", NULL }, &r);
	cr_assert_eq(r.status, 404);
	cr_assert_str_eq(r.body, "no interval 18446744073709551615 in this directory\n");
	free(r.body);
	ask(a, "/api/flame", (const char *const[]){ "from", "1", "to", "0", NULL }, &r);
	cr_assert_eq(r.status, 400);
	free(r.body);
	ask(a, "/api/flame", (const char *const[]){ "from", "0", "to", "1", "pid", "x", NULL }, &r);
	cr_assert_eq(r.status, 400);
	free(r.body);
	serve_api__free(a);
	/* A range holding more than one answer may read. */
	a = serve_api__new(dir, 100);
	ask(a, "/api/flame", (const char *const[]){ "from", "0", "to", "1", NULL }, &r);
	cr_assert_eq(r.status, 413);
	cr_assert(strstr(r.body, "2 intervals hold ") && strstr(r.body, "at most 0 KiB are read for one answer"), "%s",
		  r.body);
	free(r.body);
	serve_api__free(a);
}
