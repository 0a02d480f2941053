/* serve reads only the files it listed: a name turned into a link, a
 * directory moved away, a file replaced or truncated after the listing. */
#include "unit.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "frames.h"
#include "profile/profile.h"
#include "archive/rotation.h"
#include "serve/serve_api.h"
#include "write/pprof.h"

#define SEC 1000000000LL
#define T0 1795442400LL /* 2026-11-23T14:00:00Z */

static char dir[64], old[80];

static void make_dir(void)
{
	strcpy(dir, "/tmp/pyebpf-servefiles-XXXXXX");
	cr_assert(mkdtemp(dir));
	snprintf(old, sizeof(old), "%s.old", dir);
}

/* A recording of n samples of `fn` at `path`. */
static void write_recording(const char *path, int64_t start_ns, int n, const char *fn)
{
	struct profile *p = profile__new();
	uint32_t f = frame(p, FRAME_PYTHON, fn, "/app.py", 5, 4);
	struct sample_labels l = { .pid = 7, .tid = 7, .comm = profile__str(p, "python3") };
	FILE *out = fopen(path, "w");

	cr_assert(out);
	for (int i = 0; i < n; i++)
		profile__add_at(p, &l, &f, 1, 1, (uint64_t)i * 10000000ULL);
	profile__meta(p)->period_ns = 10000000;
	profile__meta(p)->start_epoch_ns = start_ns;
	profile__meta(p)->duration_ns = SEC;
	cr_assert_eq(pprof__write(p, out), 0);
	fclose(out);
	profile__free(p);
}

/* Interval `seq` of `d` (its path in buf). */
static char *interval_path(const char *d, uint64_t seq, char *buf, size_t size)
{
	char name[128];

	rotation_file_name((T0 + (int64_t)seq) * SEC, seq, name, sizeof(name));
	snprintf(buf, size, "%s/%s", d, name);
	return buf;
}

static void write_interval(const char *d, uint64_t seq, int n, const char *fn)
{
	char path[256];

	write_recording(interval_path(d, seq, path, sizeof(path)), (T0 + (int64_t)seq) * SEC, n, fn);
}

static const char *const *pairs;

static const char *query(void *ctx, const char *name)
{
	(void)ctx;
	for (size_t i = 0; pairs && pairs[i]; i += 2)
		if (!strcmp(pairs[i], name))
			return pairs[i + 1];
	return NULL;
}

static void ask(struct serve_api *a, const char *route, const char *const *q, struct serve_reply *r)
{
	pairs = q;
	serve_api__handle(a, route, query, NULL, r);
}

static void rm_rf(const char *d)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s.old'", d, d);
	cr_assert_eq(system(cmd), 0);
}

Test(serve_files, a_link_planted_after_the_listing_is_not_followed)
{
	struct serve_reply r;
	struct serve_api *a;
	char path[256], secret[256];

	make_dir();
	write_interval(dir, 0, 10, "alpha");
	write_interval(dir, 1, 10, "alpha");
	write_interval(dir, 2, 10, "alpha");
	snprintf(secret, sizeof(secret), "%s.secret", dir);
	write_recording(secret, (T0 + 1) * SEC, 10, "root_only_secret");
	a = serve_api__new(dir, SERVE_MAX_BYTES);
	ask(a, "/api/intervals", NULL, &r);
	cr_assert_eq(r.status, 200);
	free(r.body);
	/* Someone who can write into DIR swaps interval 1 for a link. */
	interval_path(dir, 1, path, sizeof(path));
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(symlink(secret, path), 0);
	ask(a, "/api/top", (const char *const[]){ "from", "1", "to", "1", NULL }, &r);
	cr_assert_null(strstr(r.body, "root_only_secret"), "%s", r.body);
	cr_assert_eq(r.status, 422, "%d %s", r.status, r.body);
	cr_assert_str_eq(r.body, "no interval file of the range can be read: "
				 "pyebpf-20261123T140001.000Z-000001.pb.gz: not a regular file\n");
	free(r.body);
	/* Listed again: a link is no interval. */
	ask(a, "/api/flame", (const char *const[]){ "from", "1", "to", "1", NULL }, &r);
	cr_assert_eq(r.status, 404, "%d %s", r.status, r.body);
	free(r.body);
	ask(a, "/api/intervals", NULL, &r);
	cr_assert_null(strstr(r.body, "-000001.pb.gz"), "%s", r.body);
	free(r.body);
	serve_api__free(a);

	/* Within a range: the rest is answered, the link's interval skipped. */
	cr_assert_eq(unlink(path), 0);
	write_interval(dir, 1, 10, "alpha");
	a = serve_api__new(dir, SERVE_MAX_BYTES);
	ask(a, "/api/intervals", NULL, &r);
	free(r.body);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(symlink(secret, path), 0);
	for (int k = 0; k < 2; k++) {
		ask(a, k ? "/api/flame" : "/api/top", (const char *const[]){ "from", "0", "to", "2", NULL }, &r);
		cr_assert_eq(r.status, 200, "%s", r.body);
		cr_assert(strstr(r.body, "alpha (/app.py"), "%s", r.body);
		cr_assert_null(strstr(r.body, "root_only_secret"), "%s", r.body);
		/* Named where it was skipped; listed again, it is not an interval. */
		cr_assert(!k == !!strstr(r.body, "pyebpf-20261123T140001.000Z-000001.pb.gz: not a regular file"), "%s",
			  r.body);
		free(r.body);
	}
	serve_api__free(a);
	unlink(secret);
	rm_rf(dir);
}

Test(serve_files, a_directory_moved_away_is_still_the_one_served)
{
	struct serve_reply r;
	struct serve_api *a;

	make_dir();
	write_interval(dir, 0, 10, "alpha");
	write_interval(dir, 1, 10, "alpha");
	a = serve_api__new(dir, SERVE_MAX_BYTES);
	ask(a, "/api/intervals", NULL, &r);
	free(r.body);
	/* mv DIR DIR.old; mkdir DIR; a recording of the same names in the new DIR. */
	cr_assert_eq(rename(dir, old), 0);
	cr_assert_eq(mkdir(dir, 0755), 0);
	write_interval(dir, 0, 10, "elsewhere");
	write_interval(dir, 1, 10, "elsewhere");
	write_interval(dir, 2, 10, "elsewhere");
	ask(a, "/api/intervals", NULL, &r);
	cr_assert_null(strstr(r.body, "-000002.pb.gz"), "the timeline is the old directory's: %s", r.body);
	free(r.body);
	for (int k = 0; k < 2; k++) {
		ask(a, k ? "/api/flame" : "/api/top", (const char *const[]){ "from", "0", "to", "1", NULL }, &r);
		cr_assert_eq(r.status, 200, "%s", r.body);
		cr_assert(strstr(r.body, "alpha"), "%s", r.body);
		cr_assert_null(strstr(r.body, "elsewhere"), "flame graphs are the old directory's too: %s", r.body);
		free(r.body);
	}
	serve_api__free(a);
	rm_rf(dir);
}

Test(serve_files, a_file_replaced_after_the_listing_is_a_new_interval)
{
	struct serve_reply r;
	struct serve_api *a;
	char path[256], tmp[300];

	make_dir();
	write_interval(dir, 0, 10, "alpha");
	write_interval(dir, 1, 10, "alpha");
	a = serve_api__new(dir, SERVE_MAX_BYTES);
	ask(a, "/api/intervals", NULL, &r);
	free(r.body);
	/* Same name, same size, same time: another file. */
	interval_path(dir, 1, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s/swap", dir);
	write_recording(tmp, (T0 + 1) * SEC, 10, "omega");
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(utimensat(AT_FDCWD, tmp, (struct timespec[]){ st.st_mtim, st.st_mtim }, 0), 0);
	cr_assert_eq(rename(tmp, path), 0);
	ask(a, "/api/top", (const char *const[]){ "from", "1", "to", "1", NULL }, &r);
	cr_assert_eq(r.status, 422, "%d %s", r.status, r.body);
	cr_assert(strstr(r.body, "-000001.pb.gz: replaced since it was listed"), "%s", r.body);
	cr_assert_null(strstr(r.body, "omega"), "%s", r.body);
	free(r.body);
	/* Listed again, it is read as the new interval it is. */
	ask(a, "/api/intervals", NULL, &r);
	free(r.body);
	ask(a, "/api/top", (const char *const[]){ "from", "1", "to", "1", NULL }, &r);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_assert(strstr(r.body, "omega (/app.py:4)"), "%s", r.body);
	free(r.body);
	serve_api__free(a);
	rm_rf(dir);
}

Test(serve_files, a_truncated_file_is_skipped_and_named)
{
	struct serve_reply r;
	struct serve_api *a;
	char path[256];
	struct stat st;

	make_dir();
	write_interval(dir, 0, 10, "alpha");
	write_interval(dir, 1, 20, "alpha");
	write_interval(dir, 2, 30, "alpha");
	interval_path(dir, 1, path, sizeof(path));
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(truncate(path, st.st_size / 2), 0);
	a = serve_api__new(dir, SERVE_MAX_BYTES);
	/* Before and after the timeline listed it as bad. */
	for (int k = 0; k < 2; k++) {
		ask(a, "/api/top", (const char *const[]){ "from", "0", "to", "2", NULL }, &r);
		cr_assert_eq(r.status, 200, "%d %s", r.status, r.body);
		cr_assert(strstr(r.body, "40        40  alpha (/app.py:4)"), "%s", r.body);
		cr_assert(strstr(r.body, "skipped pyebpf-20261123T140001.000Z-000001.pb.gz: "), "%s", r.body);
		free(r.body);
		ask(a, "/api/flame", (const char *const[]){ "from", "0", "to", "2", NULL }, &r);
		cr_assert_eq(r.status, 200, "%d %s", r.status, r.body);
		cr_assert(strstr(r.body, "data-total=\"40\""), "%s", r.body);
		cr_assert(strstr(r.body, "1 interval file skipped (pyebpf-20261123T140001.000Z-000001.pb.gz: "), "%s",
			  r.body);
		free(r.body);
		ask(a, "/api/intervals", NULL, &r);
		cr_assert(strstr(r.body, "\"seq\":1,\"name\":\"pyebpf-20261123T140001.000Z-000001.pb.gz\","
					 "\"start\":1795442401000.000,\"bad\":\"cannot read: truncated gzip data\"}"),
			  "%s", r.body);
		cr_assert(strstr(r.body, "\"samples\":30"), "%s", r.body);
		cr_assert(strstr(r.body, "\"skipped\":[\"pyebpf-20261123T140001.000Z-000001.pb.gz\"]}"), "%s", r.body);
		free(r.body);
	}
	serve_api__free(a);
	rm_rf(dir);
}

Test(serve_limits, an_answer_beyond_its_memory_bounds_is_a_413)
{
	struct serve_reply r;
	struct serve_api *a;

	make_dir();
	write_interval(dir, 0, 100, "alpha");
	write_interval(dir, 1, 100, "beta");
	a = serve_api__new(dir, SERVE_MAX_BYTES);
	cr_assert_eq(serve_api__limits(a)->max_reply, SERVE_MAX_REPLY);
	cr_assert_eq(serve_api__limits(a)->max_decoded, SERVE_MAX_DECODED);
	/* The SVG of two intervals is some 10 KB. */
	serve_api__limits(a)->max_reply = 4000;
	ask(a, "/api/flame", (const char *const[]){ "from", "0", "to", "1", NULL }, &r);
	cr_assert_eq(r.status, 413, "%d", r.status);
	cr_assert_str_eq(r.body, "the answer would be over 3 KiB: choose a shorter range\n");
	free(r.body);
	ask(a, "/api/top", (const char *const[]){ "from", "0", "to", "1", NULL }, &r);
	cr_assert_eq(r.status, 200, "a table fits: %s", r.body);
	free(r.body);
	ask(a, "/api/intervals", NULL, &r);
	cr_assert_eq(r.status, 200, "%s", r.body);
	free(r.body);
	/* Decoded recordings beyond the budget: no merge, no answer. */
	serve_api__limits(a)->max_reply = SERVE_MAX_REPLY;
	serve_api__limits(a)->max_decoded = 1000;
	ask(a, "/api/flame", (const char *const[]){ "from", "0", "to", "1", NULL }, &r);
	cr_assert_eq(r.status, 413, "%d", r.status);
	cr_assert_str_eq(r.body, "the range's recordings take over 0 MiB once decoded, more than one answer may; "
				 "choose a shorter range\n");
	free(r.body);
	/* A budget of one is not a file skipped: both answer once it is raised. */
	serve_api__limits(a)->max_decoded = SERVE_MAX_DECODED;
	ask(a, "/api/top", (const char *const[]){ "from", "0", "to", "1", NULL }, &r);
	cr_assert_eq(r.status, 200, "%s", r.body);
	cr_assert(strstr(r.body, "alpha") && strstr(r.body, "beta") && !strstr(r.body, "skipped"), "%s", r.body);
	free(r.body);
	serve_api__free(a);
	rm_rf(dir);
}
