/* serve's timeline: a wall interval's bar split into the time on the CPU and
 * each off-CPU reason (its total is threads x interval whatever the load);
 * a CPU interval's bar is all CPU; the page says what it selects by default. */
#include "unit.h"

#include "frames.h"
#include "profile/offcpu.h"
#include "profile/profile.h"
#include "archive/rotation.h"
#include "serve/serve_api.h"
#include "serve/serve_split.h"
#include "write/pprof.h"

#define SEC 1000000000LL
#define T0 1795442400LL /* 2026-11-23T14:00:00Z */

static char dir[64];

static void make_dir(void)
{
	strcpy(dir, "/tmp/pyebpf-servetimeline-XXXXXX");
	cr_assert(mkdtemp(dir));
}

static void rm_rf(const char *d)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	cr_assert_eq(system(cmd), 0);
}

/* Samples of a wall interval by reason (OFFCPU_NONE: on the CPU). */
static const uint32_t wall_counts[OFFCPU__COUNT] = {
	[OFFCPU_NONE] = 5, [OFFCPU_RUNQUEUE] = 1, [OFFCPU_SLEEP] = 7, [OFFCPU_IO] = 3,
	[OFFCPU_LOCK] = 2, [OFFCPU_GIL] = 4,      [OFFCPU_OTHER] = 0,
};

/* A recording as record writes one: an off-CPU sample ends in its
 * "[off-cpu: REASON]" frame and carries the reason as a label. */
static struct profile *recording(int64_t start_ns, const uint32_t *counts, bool wall)
{
	struct profile *p = profile__new();
	uint32_t f = frame(p, FRAME_PYTHON, "work", "/app.py", 5, 4);

	for (int r = 0; r < OFFCPU__COUNT; r++) {
		struct sample_labels l = {
			.pid = 7, .tid = 7, .comm = profile__str(p, "python3"), .offcpu = (uint32_t)r
		};
		uint32_t stack[] = { f, r ? frame(p, FRAME_MARK, offcpu_reason_frame((enum offcpu_reason)r), "", 0, 0)
					  : 0 };

		/* One add per sample, 10 ms apart: the counts are summed, not taken whole. */
		for (uint32_t i = 0; i < counts[r]; i++)
			profile__add_at(p, &l, stack, r ? 2 : 1, 1, (uint64_t)i * 10000000ULL);
	}
	profile__meta(p)->period_ns = 10000000;
	profile__meta(p)->start_epoch_ns = start_ns;
	profile__meta(p)->duration_ns = SEC;
	profile__meta(p)->wall = wall;
	return p;
}

static void write_interval(uint64_t seq, const uint32_t *counts, bool wall)
{
	int64_t start = (T0 + (int64_t)seq) * SEC;
	struct profile *p = recording(start, counts, wall);
	char name[128], path[256];
	FILE *out;

	rotation_file_name(start, seq, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out = fopen(path, "w");
	cr_assert(out);
	cr_assert_eq(pprof__write(p, out), 0);
	fclose(out);
	profile__free(p);
}

static const char *no_query(void *ctx, const char *name)
{
	(void)ctx;
	(void)name;
	return NULL;
}

static char *intervals_of_dir(void)
{
	struct serve_reply r;
	struct serve_api *a = serve_api__new(dir, SERVE_MAX_BYTES);

	cr_assert_not_null(a);
	serve_api__handle(a, "/api/intervals", no_query, NULL, &r);
	cr_assert_eq(r.status, 200, "%s", r.body);
	serve_api__free(a);
	return r.body;
}

Test(serve_timeline, a_wall_interval_is_split_by_reason)
{
	char *body;

	make_dir();
	write_interval(0, wall_counts, true);
	body = intervals_of_dir();
	cr_assert(strstr(body, "\"wall\":true"), "%s", body);
	cr_assert(strstr(body, "\"samples\":22,\"offcpu\":17,\"split\":{\"cpu\":5,\"runqueue\":1,\"sleep\":7,"
			       "\"io\":3,\"lock\":2,\"gil\":4,\"other\":0}}"),
		  "%s", body);
	free(body);
	rm_rf(dir);
}

Test(serve_timeline, a_cpu_interval_has_no_split)
{
	static const uint32_t cpu_counts[OFFCPU__COUNT] = { [OFFCPU_NONE] = 9 };
	char *body;

	make_dir();
	write_interval(0, cpu_counts, false);
	body = intervals_of_dir();
	cr_assert(strstr(body, "\"wall\":false"), "%s", body);
	cr_assert(strstr(body, "\"samples\":9,\"offcpu\":0}"), "%s", body);
	cr_assert_null(strstr(body, "split"), "%s", body);
	free(body);
	rm_rf(dir);
}

Test(serve_timeline, a_reason_this_build_does_not_know_is_other)
{
	struct serve_split s = { 0 };
	struct profile *p = recording(T0 * SEC, wall_counts, true);
	struct sample_labels l = { .pid = 7, .tid = 7, .offcpu = OFFCPU__COUNT + 3 };
	uint32_t f = frame(p, FRAME_PYTHON, "work", "/app.py", 5, 4);

	profile__add(p, &l, &f, 1, 6);
	serve_split__count(&s, p);
	cr_assert_eq(s.n[OFFCPU_OTHER], 6);
	cr_assert_eq(s.n[OFFCPU_NONE], 5);
	cr_assert_eq(serve_split__offcpu(&s), 17 + 6);
	profile__free(p);
}

Test(serve_timeline, the_page_says_what_it_selects_by_default)
{
	struct serve_reply r;
	struct serve_api *a;

	make_dir();
	a = serve_api__new(dir, SERVE_MAX_BYTES);
	serve_api__handle(a, "/", no_query, NULL, &r);
	cr_assert_eq(r.status, 200);
	/* The line under the timeline, and what it is built from. */
	cr_assert(strstr(r.body, "<div id=\"selection\"></div>"));
	cr_assert(strstr(r.body, "var DEFAULT_INTERVALS = 10;"));
	cr_assert(strstr(r.body, "\": the newest \" + DEFAULT_INTERVALS + \" intervals, the default\""));
	cr_assert(strstr(r.body, "\", as dragged\""));
	free(r.body);
	serve_api__free(a);
	rm_rf(dir);
}
