#include "unit.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "python/version.h"
#include "symbols/elf_lookup.h"

/* What .rodata holds: strings one after another, each NUL-terminated. */
#define RO(s) s, sizeof(s) - 1

Test(py_version, the_tail_of_a_merged_string_names_the_patch_level)
{
	/* pyenv's libpython2.7: PY_VERSION merged into its prefix's path. */
	static const char ro[] = "GLIBC_2.2.5\0/root/.pyenv/versions/2.7.18\0 SRE 2.2.2 Copyright\0lib/python2.7\0";

	cr_assert_eq(py_version_in_strings(RO(ro), 2, 7), 0x020712f0);
	/* The literal alone, as an unmerged build keeps it. */
	cr_assert_eq(py_version_in_strings(RO("x\0003.8.18\0y"), 3, 8), 0x030812f0);
	cr_assert_eq(py_version_in_strings(RO("Python-3.10.13\0"), 3, 10), 0x030a0df0);
}

Test(py_version, pre_releases_and_builds_between_them)
{
	cr_assert_eq(py_version_in_strings(RO("\0003.15.0a2\0"), 3, 15), 0x030f00a2);
	cr_assert_eq(py_version_in_strings(RO("\0003.14.0b3\0"), 3, 14), 0x030e00b3);
	cr_assert_eq(py_version_in_strings(RO("\0003.13.0rc1\0"), 3, 13), 0x030d00c1);
	cr_assert_eq(py_version_in_strings(RO("\0003.12.4+\0"), 3, 12), 0x030c04f0);
}

Test(py_version, what_is_not_one_version_says_nothing)
{
	/* Another minor, a longer number, inside a string, not at its end. */
	cr_assert_eq(py_version_in_strings(RO("\0003.8.18\0"), 3, 9), 0);
	cr_assert_eq(py_version_in_strings(RO("\00013.8.18\0"), 3, 8), 0);
	cr_assert_eq(py_version_in_strings(RO("\0001.3.8.18\0"), 3, 8), 0);
	cr_assert_eq(py_version_in_strings(RO("\0003.8.18 (default)\0"), 3, 8), 0);
	cr_assert_eq(py_version_in_strings(RO("\0003.8.1234\0"), 3, 8), 0);
	cr_assert_eq(py_version_in_strings(RO("\0003.8.\0"), 3, 8), 0);
	cr_assert_eq(py_version_in_strings(RO("\0003.8.1x\0"), 3, 8), 0);
	cr_assert_eq(py_version_in_strings(RO("\0003.8.1a\0"), 3, 8), 0);
	/* Unterminated at the end of the data: not a string. */
	cr_assert_eq(py_version_in_strings("\0003.8.18", 7, 3, 8), 0);
	/* Two different versions: neither is trusted; the same one twice is one. */
	cr_assert_eq(py_version_in_strings(RO("a/3.8.18\0b/3.8.17\0"), 3, 8), 0);
	cr_assert_eq(py_version_in_strings(RO("a/3.8.18\0b/3.8.18\0"), 3, 8), 0x030812f0);
	cr_assert_eq(py_version_in_strings(RO(""), 3, 8), 0);
}

Test(py_version, format)
{
	char v[24];

	py_version_format(0x020712f0, v, sizeof(v));
	cr_assert_str_eq(v, "2.7.18");
	py_version_format(0x030f00a2, v, sizeof(v));
	cr_assert_str_eq(v, "3.15.0a2");
	py_version_format(0x030d00c1, v, sizeof(v));
	cr_assert_str_eq(v, "3.13.0rc1");
	py_version_format(0x030e0af0, v, sizeof(v));
	cr_assert_str_eq(v, "3.14.10");
}

/* A version in this very binary's .rodata, found through the ELF reader. */
const char *volatile py_version_planted = "/opt/python/3.97.5";

Test(py_version, read_from_an_elf_files_rodata)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	size_t len;
	char *ro;

	cr_assert_geq(fd, 0);
	ro = elf_section_copy(fd, ".rodata", 64u << 20, &len);
	cr_assert(ro && len > 0, ".rodata of the unit tests unreadable");
	cr_assert_eq(py_version_in_strings(ro, len, 3, 97), 0x036105f0, "%s", py_version_planted);
	free(ro);
	cr_assert_null(elf_section_copy(fd, ".rodata", 16, &len), "a section over max is not copied");
	cr_assert_null(elf_section_copy(fd, ".no-such-section", 64u << 20, &len));
	close(fd);
}
