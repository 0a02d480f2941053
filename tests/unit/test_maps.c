#include "unit.h"

#include "symbols/maps.h"

Test(maps, parses_file_backed_line)
{
	struct mapping m;

	cr_assert_eq(maps__parse_line("7f1c2a400000-7f1c2a5b5000 r-xp 00028000 fe:01 1838253    "
				      "/usr/lib/x86_64-linux-gnu/libc.so.6\n",
				      &m),
		     0);
	cr_assert_eq(m.start, 0x7f1c2a400000ULL);
	cr_assert_eq(m.end, 0x7f1c2a5b5000ULL);
	cr_assert_eq(m.pgoff, 0x28000);
	cr_assert_eq(m.dev_major, 0xfe);
	cr_assert_eq(m.dev_minor, 1);
	cr_assert_eq(m.inode, 1838253);
	cr_assert_str_eq(m.perms, "r-xp");
	cr_assert_str_eq(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	cr_assert_not(m.deleted);
	free(m.path);
}

Test(maps, paths_with_spaces_deleted_and_anonymous)
{
	struct mapping m;

	cr_assert_eq(maps__parse_line("1000-2000 r-xp 00000000 08:02 77 /opt/my app/lib x.so (deleted)\n", &m), 0);
	cr_assert_str_eq(m.path, "/opt/my app/lib x.so");
	cr_assert(m.deleted);
	free(m.path);
	cr_assert_eq(maps__parse_line("7ffd1000-7ffd3000 r-xp 00000000 00:00 0                  [vdso]", &m), 0);
	cr_assert_str_eq(m.path, "[vdso]");
	free(m.path);
	cr_assert_eq(maps__parse_line("7f0000-7f1000 rw-p 00000000 00:00 0\n", &m), 0);
	cr_assert_str_eq(m.path, "");
	free(m.path);
}

Test(maps, rejects_malformed_lines)
{
	struct mapping m;

	cr_assert_eq(maps__parse_line("", &m), -1);
	cr_assert_eq(maps__parse_line("hello world", &m), -1);
	cr_assert_eq(maps__parse_line("2000-1000 r-xp 0 08:02 1 /x", &m), -1);
	cr_assert_eq(maps__parse_line("1000-2000 r-xp 0 08:02", &m), -1);
}

Test(maps, reads_exec_mappings_sorted_and_finds_addresses)
{
	const char *path = write_temp("5000-6000 r-xp 00001000 08:02 9 /b\n"
				      "1000-2000 r--p 00000000 08:02 9 /b\n"
				      "garbage line\n"
				      "3000-4000 r-xp 00000000 08:02 8 /a\n");
	struct mapping *m;
	size_t n;

	cr_assert_eq(maps__read_file(path, true, &m, &n), 0);
	unlink(path);
	cr_assert_eq(n, 2);
	cr_assert_eq(m[0].start, 0x3000);
	cr_assert_eq(m[1].start, 0x5000);
	cr_assert_eq(maps__find(m, n, 0x3000), &m[0]);
	cr_assert_eq(maps__find(m, n, 0x3fff), &m[0]);
	cr_assert_null(maps__find(m, n, 0x4000));
	cr_assert_eq(maps__find(m, n, 0x5abc), &m[1]);
	cr_assert_null(maps__find(m, n, 0x10));
	maps__free(m, n);
}

Test(maps, missing_file_is_an_error)
{
	struct mapping *m;
	size_t n;

	cr_assert_eq(maps__read_file("/nonexistent/maps", true, &m, &n), -ENOENT);
	cr_assert_eq(maps__read(0x3ffffff0, true, &m, &n), -ENOENT);
}
