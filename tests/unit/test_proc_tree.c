/* user/system/proc_tree.c: -p's children and --comm's names found in a made-up /proc. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "system/proc_tree.h"

static char root[] = "/tmp/pyebpf-proc-XXXXXX";

/* root/PID/stat holding "PID (COMM) STATE PPID 1 1 ...". */
static void proc(uint32_t pid, const char *comm, char state, uint32_t ppid)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", root, pid);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%u/stat", root, pid);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fprintf(f, "%u (%s) %c %u 1 1 0 -1 4194560 100 0 0 0 5 3\n", pid, comm, state, ppid);
	fclose(f);
}

static void make_root(void)
{
	cr_assert_not_null(mkdtemp(root));
	/* 1 ─ 10 gunicorn (master) ─ 11 gunicorn, 12 gunicorn ─ 13 sh (zombie)
	 *   ─ 20 python3 ─ 21 "a) b" (a name with ") " in it) ─ 22 worker
	 *   ─ 30 gunicorn (another master) */
	proc(1, "systemd", 'S', 0);
	proc(10, "gunicorn", 'S', 1);
	proc(11, "gunicorn", 'R', 10);
	proc(12, "gunicorn", 'S', 10);
	proc(13, "sh", 'Z', 12);
	proc(20, "python3", 'S', 1);
	proc(22, "worker", 'S', 21); /* listed before its parent */
	proc(21, "a) b", 'S', 20);
	proc(30, "gunicorn", 'S', 1);
	cr_assert_eq(mkdir(strcat(strcpy((char[300]){ 0 }, root), "/self"), 0755), 0); /* not a pid */
}

static void remove_root(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(proc_tree, .init = make_root, .fini = remove_root);

static void expect(const uint32_t *got, size_t n, const uint32_t *want, size_t nwant)
{
	cr_assert_eq(n, nwant, "%zu processes found, %zu expected", n, nwant);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(got[i], want[i], "process %zu is %u, %u expected", i, got[i], want[i]);
}

Test(proc_tree, a_pids_descendants_at_every_depth_not_itself_nor_zombies)
{
	uint32_t roots[] = { 20 }, *out, want[] = { 21, 22 };
	size_t n;

	cr_assert_eq(proc_tree__find(root, roots, 1, NULL, 0, true, &out, &n), 0);
	expect(out, n, want, 2);
	free(out);
	/* --no-children: nothing beyond the pids given. */
	cr_assert_eq(proc_tree__find(root, roots, 1, NULL, 0, false, &out, &n), 0);
	cr_assert_eq(n, 0);
	free(out);
}

Test(proc_tree, names_as_the_kernel_keeps_them_and_their_children)
{
	const char *names[] = { "gunicorn" }, *long_name[] = { "a) b-and-more-than-15" };
	uint32_t *out, want[] = { 10, 11, 12, 30 }, want_long[] = { 21 };
	size_t n;

	cr_assert_eq(proc_tree__find(root, NULL, 0, names, 1, true, &out, &n), 0);
	expect(out, n, want, 4); /* 13 is a zombie */
	free(out);
	cr_assert_eq(proc_tree__find(root, NULL, 0, long_name, 1, false, &out, &n), 0);
	cr_assert_eq(n, 0, "'a) b' is not the first 15 bytes of the name");
	free(out);
	const char *first15[] = { "a) b" };
	cr_assert_eq(proc_tree__find(root, NULL, 0, first15, 1, false, &out, &n), 0);
	expect(out, n, want_long, 1);
	free(out);
}

Test(proc_tree, stat_lines_parse_or_are_refused)
{
	struct proc_stat st;
	const char *ok = "42 (a (b) c) R 7 1 1";

	cr_assert_eq(proc_stat__parse(ok, strlen(ok), &st), 0);
	cr_assert_eq(st.pid, 42);
	cr_assert_eq(st.ppid, 7);
	cr_assert_eq(st.state, 'R');
	cr_assert_str_eq(st.comm, "a (b) c");
	static const char *const bad[] = {
		"",          "42",        "42 (x", "x (y) R 1", "42 (y) R", "42 (y)R 1", "42 (0123456789abcdefg) R 1",
		"0 (y) R 1", "42 (y) R x"
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(proc_stat__parse(bad[i], strlen(bad[i]), &st), -1, "'%s' parsed", bad[i]);
}

Test(proc_tree, an_unlistable_root_is_an_error)
{
	uint32_t *out;
	size_t n;

	cr_assert_eq(proc_tree__find("/nonexistent-proc", NULL, 0, NULL, 0, true, &out, &n), -1);
}
