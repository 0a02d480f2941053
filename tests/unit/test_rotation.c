/* Continuous mode's file names, intervals, sizes and pruning. */
#include "unit.h"

#include <sys/stat.h>

#include "archive/rotation.h"

Test(rotation, intervals_and_sizes)
{
	double s;
	uint64_t b;

	cr_assert_eq(parse_interval("60s", &s), 0);
	cr_assert_eq(s, 60);
	cr_assert_eq(parse_interval("5m", &s), 0);
	cr_assert_eq(s, 300);
	cr_assert_eq(parse_interval("1h", &s), 0);
	cr_assert_eq(s, 3600);
	cr_assert_eq(parse_interval("90", &s), 0);
	cr_assert_eq(s, 90);
	cr_assert_eq(parse_interval("0.5s", &s), -1, "under a second");
	cr_assert_eq(parse_interval("5x", &s), -1);
	cr_assert_eq(parse_interval("m", &s), -1);
	cr_assert_eq(parse_size("512M", &b), 0);
	cr_assert_eq(b, 512ULL << 20);
	cr_assert_eq(parse_size("2G", &b), 0);
	cr_assert_eq(b, 2ULL << 30);
	cr_assert_eq(parse_size("100K", &b), 0);
	cr_assert_eq(b, 100ULL << 10);
	cr_assert_eq(parse_size("12345", &b), 0);
	cr_assert_eq(b, 12345);
	cr_assert_eq(parse_size("-1M", &b), -1);
	cr_assert_eq(parse_size("1MB", &b), -1);
}

Test(rotation, names_sort_by_time)
{
	char a[128], b[128], c[128];

	rotation_file_name(1795000000123000000LL, 7, a, sizeof(a));
	cr_assert_str_eq(a, "pyebpf-20261118T110640.123Z-000007.pb.gz");
	rotation_file_name(1795000000124000000LL, 8, b, sizeof(b));
	rotation_file_name(1795000060000000000LL, 9, c, sizeof(c));
	cr_assert_lt(strcmp(a, b), 0);
	cr_assert_lt(strcmp(b, c), 0);
}

static bool exists(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* 2026-06-01T00:00:00Z: after the test files' names, before 2199. */
#define NOW_NS (1780272000LL * 1000000000LL)

/* rotation_prune with bounds only, as before there was a file just written. */
static int prune(const char *dir, size_t keep, uint64_t max_bytes)
{
	struct rotation_prune pr = { .keep = keep, .max_bytes = max_bytes, .now_ns = NOW_NS };

	return rotation_prune(dir, &pr);
}

Test(rotation, prune_oldest_by_count_and_size)
{
	char dir[] = "/tmp/pyebpf-rot-XXXXXX", cmd[128];
	const char *names[] = { "pyebpf-20260101T000000.000Z-000000.pb.gz", "pyebpf-20260101T000100.000Z-000001.pb.gz",
				"pyebpf-20260101T000200.000Z-000002.pb.gz",
				"pyebpf-20260101T000300.000Z-000003.pb.gz" };

	cr_assert(mkdtemp(dir));
	for (int i = 0; i < 4; i++)
		make_file(dir, names[i], 100);
	make_file(dir, "notes.txt", 5000); /* not ours: never counted or deleted */
	cr_assert_eq(prune(dir, 3, 0), 1);
	cr_assert_not(exists(dir, names[0]));
	cr_assert(exists(dir, names[1]) && exists(dir, names[3]));
	cr_assert_eq(prune(dir, 0, 250), 1, "300 bytes > 250: the oldest goes");
	cr_assert_not(exists(dir, names[1]));
	cr_assert_eq(prune(dir, 0, 1), 1, "down to the newest, never below");
	cr_assert(exists(dir, names[3]));
	cr_assert(exists(dir, "notes.txt"));
	cr_assert_eq(prune("/nonexistent/dir", 1, 0), -1);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

Test(rotation, only_whole_interval_names_are_ours)
{
	uint64_t seq;

	cr_assert(rotation_parse_name("pyebpf-20261122T101500.123Z-000007.pb.gz", &seq));
	cr_assert_eq(seq, 7);
	cr_assert(rotation_parse_name("pyebpf-20261122T101500.123Z-1234567.pb.gz", &seq));
	cr_assert_eq(seq, 1234567);
	cr_assert_not(rotation_parse_name("pyebpf-demo.pb.gz", &seq));
	cr_assert_not(rotation_parse_name("pyebpf-prod-incident.pb.gz", &seq));
	cr_assert_not(rotation_parse_name("pyebpf-20261122T101500.123Z-00007.pb.gz", &seq), "5 digits");
	cr_assert_not(rotation_parse_name("pyebpf-20261122T101500.123Z-000007.pb.gz.bak", &seq));
	cr_assert_not(rotation_parse_name("xpyebpf-20261122T101500.123Z-000007.pb.gz", &seq));
	cr_assert_not(rotation_parse_name("pyebpf-2026112XT101500.123Z-000007.pb.gz", &seq));
	cr_assert_not(rotation_parse_name("pyebpf-20261122T101500.123Z-00000a.pb.gz", &seq));
	cr_assert_not(rotation_parse_name("pyebpf-20261122T101500.123Z-000007-x.pb.gz", &seq));
}

/* Foreign files that look like ours were deleted before, or made ours go. */
Test(rotation, foreign_files_are_never_pruned_nor_counted)
{
	char dir[] = "/tmp/pyebpf-rot-XXXXXX", cmd[128], path[512];
	const char *ours[] = { "pyebpf-20260101T000000.000Z-000000.pb.gz", "pyebpf-20260101T000100.000Z-000001.pb.gz" };

	cr_assert(mkdtemp(dir));
	make_file(dir, "pyebpf-demo.pb.gz", 10);
	make_file(dir, "pyebpf-prod-incident.pb.gz", 200 * 1024);
	make_file(dir, ours[0], 100);
	make_file(dir, ours[1], 100);
	/* A link with our name to a foreign file: not a regular file of ours. */
	snprintf(path, sizeof(path), "%s/pyebpf-20250101T000000.000Z-000000.pb.gz", dir);
	cr_assert_eq(symlink("pyebpf-demo.pb.gz", path), 0);
	cr_assert_eq(prune(dir, 1, 0), 1);
	cr_assert_not(exists(dir, ours[0]));
	cr_assert(exists(dir, ours[1]), "the newest interval always stays");
	cr_assert(exists(dir, "pyebpf-demo.pb.gz") && exists(dir, "pyebpf-prod-incident.pb.gz"));
	cr_assert(exists(dir, "pyebpf-20250101T000000.000Z-000000.pb.gz"));
	/* 200 KB of foreign data does not count against --max-disk. */
	cr_assert_eq(prune(dir, 0, 150), 0);
	cr_assert(exists(dir, ours[1]));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* Ranked by the time in the name, then the sequence number (which outgrows 6 digits). */
Test(rotation, ranked_by_time_then_sequence)
{
	char dir[] = "/tmp/pyebpf-rot-XXXXXX", cmd[128];
	const char *older = "pyebpf-20260101T000000.000Z-999999.pb.gz",
		   *newer = "pyebpf-20260101T000000.000Z-1000000.pb.gz";

	cr_assert(mkdtemp(dir));
	make_file(dir, newer, 10);
	make_file(dir, older, 10);
	cr_assert_eq(prune(dir, 1, 0), 1);
	cr_assert(exists(dir, newer));
	cr_assert_not(exists(dir, older));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* Three planted names dated 2199 ranked newest: --keep 3 deleted every
 * file pyebpf wrote and kept them. */
Test(rotation, planted_future_names_never_push_ours_out)
{
	char dir[] = "/tmp/pyebpf-rot-XXXXXX", cmd[128];
	const char *ours[] = { "pyebpf-20260101T000000.000Z-000000.pb.gz", "pyebpf-20260101T000100.000Z-000001.pb.gz",
			       "pyebpf-20260101T000200.000Z-000002.pb.gz", "pyebpf-20260101T000300.000Z-000003.pb.gz" };
	const char *junk[] = { "pyebpf-21991231T000001.000Z-000001.pb.gz", "pyebpf-21991231T000002.000Z-000002.pb.gz",
			       "pyebpf-21991231T000003.000Z-000003.pb.gz" };
	struct rotation_prune pr = { .keep = 3, .written = ours[3], .now_ns = NOW_NS };

	cr_assert(mkdtemp(dir));
	for (int i = 0; i < 4; i++)
		make_file(dir, ours[i], 100);
	for (int i = 0; i < 3; i++)
		make_file(dir, junk[i], 100000);
	cr_redirect_stderr();
	cr_assert_eq(rotation_prune(dir, &pr), 1);
	cr_assert_eq(pr.foreign, 3);
	cr_assert_not(exists(dir, ours[0]));
	for (int i = 1; i < 4; i++)
		cr_assert(exists(dir, ours[i]), "%s", ours[i]);
	for (int i = 0; i < 3; i++)
		cr_assert(exists(dir, junk[i]), "%s", junk[i]);
	/* 300 KB of planted files do not count against --max-disk either. */
	pr = (struct rotation_prune){ .max_bytes = 250, .written = ours[3], .now_ns = NOW_NS };
	cr_assert_eq(rotation_prune(dir, &pr), 1);
	cr_assert(exists(dir, ours[2]) && exists(dir, ours[3]));
	fflush(stderr);
	char want[1024];
	snprintf(want, sizeof(want),
		 "pyebpf: deleted %s/%s (beyond --keep 3)\npyebpf: deleted %s/%s (beyond --max-disk 250 bytes)\n", dir,
		 ours[0], dir, ours[1]);
	cr_assert_stderr_eq_str(want);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* The file just written is the newest, whatever the clock made of its name. */
Test(rotation, the_file_just_written_is_never_deleted)
{
	char dir[] = "/tmp/pyebpf-rot-XXXXXX", cmd[128];
	const char *later = "pyebpf-20260101T000500.000Z-000000.pb.gz",
		   *written = "pyebpf-20260101T000100.000Z-000009.pb.gz";
	struct rotation_prune pr = { .keep = 1, .written = written, .now_ns = NOW_NS };

	cr_assert(mkdtemp(dir));
	make_file(dir, later, 10);
	make_file(dir, written, 10);
	cr_redirect_stderr();
	cr_assert_eq(rotation_prune(dir, &pr), 1);
	cr_assert(exists(dir, written));
	cr_assert_not(exists(dir, later));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/* Files another user owns, or with another hard link, are not pyebpf's. */
Test(rotation, other_owners_and_hard_links_are_not_ours)
{
	char dir[] = "/tmp/pyebpf-rot-XXXXXX", cmd[128], a[512], b[512];
	const char *theirs = "pyebpf-20250101T000000.000Z-000000.pb.gz",
		   *linked = "pyebpf-20250101T000100.000Z-000001.pb.gz",
		   *mine = "pyebpf-20260101T000000.000Z-000002.pb.gz";
	struct rotation_prune pr = { .keep = 1, .written = mine, .now_ns = NOW_NS };

	cr_assert(mkdtemp(dir));
	make_file(dir, theirs, 10);
	make_file(dir, linked, 10);
	make_file(dir, mine, 10);
	snprintf(a, sizeof(a), "%s/%s", dir, theirs);
	cr_assert_eq(chown(a, 65534, 65534), 0);
	snprintf(a, sizeof(a), "%s/%s", dir, linked);
	snprintf(b, sizeof(b), "%s/elsewhere", dir);
	cr_assert_eq(link(a, b), 0);
	cr_assert_eq(rotation_prune(dir, &pr), 0);
	cr_assert_eq(pr.foreign, 2);
	cr_assert(exists(dir, theirs) && exists(dir, linked) && exists(dir, mine));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}
