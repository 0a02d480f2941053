/* Bad input: one clear line on stderr, a non-zero exit, no output file. */
#include "integ.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void expect_error(const char *const argv[], int status, const char *line, const char *out)
{
	struct run_result r;

	run(argv, 20, &r);
	cr_assert_eq(r.status, status, "exit %d, stderr: %s", r.status, r.err);
	cr_assert_str_eq(r.err, line);
	if (out)
		cr_assert_neq(access(out, F_OK), 0, "output file %s was written", out);
	run_result_free(&r);
}

Test(errors, not_root, .timeout = 30)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "x.folded");
	const char *argv[] = {
		"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", PYEBPF, "record", "-d", "1", "-o", out,
		NULL
	};

	expect_error(argv, 1, "pyebpf: needs root, or CAP_BPF and CAP_PERFMON (try: sudo pyebpf record ...)\n", out);
	cr_assert_eq(dot_files(dir), 0);
}

Test(errors, no_such_pid, .timeout = 30)
{
	const char *argv[] = { PYEBPF, "record", "-p", "1073741000", "-o", "/tmp/pyebpf-never.folded", NULL };

	expect_error(argv, 1, "pyebpf: no process with pid 1073741000\n", "/tmp/pyebpf-never.folded");
}

Test(errors, thread_id_instead_of_pid, .timeout = 30)
{
	/* Any thread that is not its process's main thread. */
	char line[256], path[128];
	FILE *f = popen("ps -eLo pid=,lwp= | awk '$1 != $2 {print $1, $2; exit}'", "r");
	int pid = 0, tid = 0;

	cr_assert(f);
	if (!fgets(line, sizeof(line), f) || sscanf(line, "%d %d", &pid, &tid) != 2) {
		pclose(f);
		cr_skip_test("no multi-threaded process on the machine");
	}
	pclose(f);
	snprintf(path, sizeof(path), "%d", tid);
	const char *argv[] = { PYEBPF, "record", "-p", path, "-o", "/tmp/pyebpf-never.folded", NULL };
	char want[128];
	snprintf(want, sizeof(want), "pyebpf: pid %d is a thread of process %d: use -p %d\n", tid, pid, pid);
	expect_error(argv, 1, want, "/tmp/pyebpf-never.folded");
}

Test(errors, unwritable_output, .timeout = 30)
{
	const char *argv[] = { PYEBPF, "record", "-d", "1", "-o", "/nonexistent-dir/x.folded", NULL };

	expect_error(argv, 1, "pyebpf: cannot write '/nonexistent-dir/x.folded': No such file or directory\n", NULL);
}

Test(errors, unknown_option, .timeout = 30)
{
	const char *argv[] = { PYEBPF, "record", "--frequency", "99", NULL };

	expect_error(argv, 2, "pyebpf: unknown option '--frequency' (see 'pyebpf record --help')\n", NULL);
}

Test(errors, unknown_command, .timeout = 30)
{
	const char *argv[] = { PYEBPF, "recrod", NULL };

	expect_error(argv, 2, "pyebpf: unknown command 'recrod' (see 'pyebpf --help')\n", NULL);
}

Test(errors, command_that_cannot_run, .timeout = 30)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "x.folded");
	const char *argv[] = { PYEBPF, "record", "-o", out, "--", "/nonexistent/cmd", NULL };

	expect_error(argv, 1, "pyebpf: cannot run '/nonexistent/cmd': No such file or directory\n", out);
	cr_assert_eq(dot_files(dir), 0);
}

Test(errors, bpf_load_failure_in_a_user_namespace, .timeout = 30)
{
	/* Root inside a user namespace looks privileged but may not load BPF: a real load failure. */
	const char *dir = temp_dir();
	char *out = temp_path(dir, "x.folded");
	const char *argv[] = { "unshare", "--user", "--map-root-user", PYEBPF, "record", "-d", "1", "-o", out, NULL };
	const char *verbose[] = { "unshare", "--user", "--map-root-user", PYEBPF, "record", "-v", "-d", "1", "-o",
				  out,       NULL };
	struct run_result r;

	expect_error(
		argv, 1,
		"pyebpf: cannot load the BPF sampler: Operation not permitted (run with -v for the verifier log)\n",
		out);
	cr_assert_eq(dot_files(dir), 0);
	run(verbose, 20, &r);
	cr_assert_eq(r.status, 1);
	cr_assert(strstr(r.err, "libbpf: "), "-v shows libbpf's log: %s", r.err);
	cr_assert(strstr(r.err, "pyebpf: cannot load the BPF sampler: Operation not permitted\n"), "%s", r.err);
	run_result_free(&r);
}

Test(errors, unknown_format, .timeout = 30)
{
	const char *argv[] = { PYEBPF, "record", "--format", "png", NULL };

	expect_error(argv, 2,
		     "pyebpf: unknown format 'png' for --format (folded, pprof, speedscope, svg, trace, trace.gz, "
		     "gecko, heatmap)\n",
		     NULL);
}
