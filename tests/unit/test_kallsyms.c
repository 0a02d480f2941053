#include "unit.h"

#include <errno.h>
#include <unistd.h>

#include "symbols/kallsyms.h"

Test(kallsyms, looks_up_text_symbols)
{
	const char *path = write_temp("ffffffff81000000 T _stext\n"
				      "ffffffff81000100 t helper\n"
				      "ffffffff81000200 D some_data\n"
				      "ffffffff81000300 T do_work\t[mymod]\n"
				      "ffffffff81000050 W weak_fn\n");
	struct kallsyms *k = kallsyms__load(path);
	uint64_t off;

	unlink(path);
	cr_assert(k);
	cr_assert_null(kallsyms__lookup(k, 0xffffffff80ffffffULL, &off));
	cr_assert_str_eq(kallsyms__lookup(k, 0xffffffff81000000ULL, &off), "_stext");
	cr_assert_eq(off, 0);
	cr_assert_str_eq(kallsyms__lookup(k, 0xffffffff81000060ULL, &off), "weak_fn");
	cr_assert_eq(off, 0x10);
	/* Data symbols are not functions: the address stays in helper. */
	cr_assert_str_eq(kallsyms__lookup(k, 0xffffffff81000250ULL, &off), "helper");
	cr_assert_str_eq(kallsyms__lookup(k, 0xffffffff81000301ULL, &off), "do_work");
	kallsyms__free(k);
}

Test(kallsyms, hidden_addresses_are_an_error)
{
	const char *path = write_temp("0000000000000000 T _stext\n0000000000000000 T schedule\n");

	cr_assert_null(kallsyms__load(path));
	cr_assert_eq(errno, EPERM);
	unlink(path);
}

Test(kallsyms, live_kernel_symbol_resolves_to_itself)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type;
	unsigned long long addr = 0, a;

	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && !strcmp(name, "schedule") && type == 'T') {
			addr = a;
			break;
		}
	fclose(f);
	if (!addr)
		cr_skip_test("schedule not in /proc/kallsyms (addresses hidden: not root?)");
	struct kallsyms *k = kallsyms__load("/proc/kallsyms");
	cr_assert(k);
	cr_assert_str_eq(kallsyms__lookup(k, addr + 4, NULL), "schedule");
	kallsyms__free(k);
}

Test(kallsyms, lines_the_parser_takes_and_leaves)
{
	/* Sorted as the kernel's own text comes; a module's names, odd lines
	 * and a last line without its newline. */
	const char *path = write_temp("ffffffff81000000 T _stext\n"
				      "\n"
				      "garbage\n"
				      "ffffffff81000010\n"
				      "ffffffff81000020 T\n"
				      "fffffffff81000000000 T too_long_an_address\n"
				      "ffffffff81000100 t mod_fn\t[xfs]\n"
				      "FFFFFFFF81000200 T upper_hex\n"
				      "ffffffff81000300 T last_fn");
	struct kallsyms *k = kallsyms__load(path);
	uint64_t off;

	unlink(path);
	cr_assert(k);
	cr_assert_str_eq(kallsyms__lookup(k, 0xffffffff81000020ULL, &off), "_stext",
			 "a line without a name is no symbol");
	cr_assert_eq(off, 0x20);
	cr_assert_str_eq(kallsyms__lookup(k, 0xffffffff81000104ULL, NULL), "mod_fn");
	cr_assert_str_eq(kallsyms__lookup(k, 0xffffffff81000200ULL, NULL), "upper_hex");
	cr_assert_str_eq(kallsyms__lookup(k, 0xffffffff81000fffULL, NULL), "last_fn");
	kallsyms__free(k);
	cr_assert_null(kallsyms__load("/nonexistent/kallsyms"));
	cr_assert_eq(errno, ENOENT);
}

/* record reads them in a thread while BPF loads: the same symbols and the
 * same errors as a read at once. */
Test(kallsyms, read_in_a_thread_as_at_once)
{
	char path[64], hidden[64]; /* write_temp's buffer is one */
	struct kallsyms *k;

	snprintf(path, sizeof(path), "%s", write_temp("ffffffff81000000 T _stext\nffffffff81000100 t helper\n"));
	snprintf(hidden, sizeof(hidden), "%s", write_temp("0000000000000000 T _stext\n"));
	k = kallsyms__wait(kallsyms__load_async(path));

	cr_assert(k);
	cr_assert_str_eq(kallsyms__lookup(k, 0xffffffff81000104ULL, NULL), "helper");
	kallsyms__free(k);
	cr_assert_null(kallsyms__wait(kallsyms__load_async(hidden)));
	cr_assert_eq(errno, EPERM);
	cr_assert_null(kallsyms__wait(kallsyms__load_async("/nonexistent/kallsyms")));
	cr_assert_eq(errno, ENOENT);
	kallsyms__free(kallsyms__wait(kallsyms__load_async(path)));
	cr_assert_null(kallsyms__wait(NULL));
	unlink(path);
	unlink(hidden);
}
