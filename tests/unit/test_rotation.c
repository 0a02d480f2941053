/* Continuous mode's file names, intervals, sizes and pruning. */
#include "unit.h"

#include <sys/stat.h>

#include "rotation.h"

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

static void make_file(const char *dir, const char *name, size_t size)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert(f);
	for (size_t i = 0; i < size; i++)
		fputc('x', f);
	fclose(f);
}

static bool exists(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
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
	cr_assert_eq(rotation_prune(dir, 3, 0), 1);
	cr_assert_not(exists(dir, names[0]));
	cr_assert(exists(dir, names[1]) && exists(dir, names[3]));
	cr_assert_eq(rotation_prune(dir, 0, 250), 1, "300 bytes > 250: the oldest goes");
	cr_assert_not(exists(dir, names[1]));
	cr_assert_eq(rotation_prune(dir, 0, 1), 1, "down to the newest, never below");
	cr_assert(exists(dir, names[3]));
	cr_assert(exists(dir, "notes.txt"));
	cr_assert_eq(rotation_prune("/nonexistent/dir", 1, 0), -1);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}
