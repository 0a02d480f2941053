#include "unit.h"

#include <sys/stat.h>
#include <unistd.h>

#include "record/cpus.h"
#include "base/outfile.h"
#include "record/record_args.h"
#include "archive/report_args.h"

static void redirect(void)
{
	cr_redirect_stderr();
	cr_redirect_stdout();
}

#define PARSE(o, ...)                                                 \
	({                                                            \
		char *argv_[] = { "record", __VA_ARGS__, NULL };      \
		record_args__parse(ARRAY_LEN(argv_) - 1, argv_, (o)); \
	})
#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

Test(record_args, defaults)
{
	struct record_opts o;
	char *argv[] = { "record", NULL };

	cr_assert_eq(record_args__parse(1, argv, &o), 0);
	cr_assert(o.all);
	cr_assert_eq(o.freq, 99);
	cr_assert_str_eq(o.output, "pyebpf.folded");
	cr_assert_not(o.filter.no_kernel);
	cr_assert_null(o.cmd);
	cr_assert_eq(o.duration, 0);
	cr_assert_eq(o.processes, PROCESSES_MERGED, "processes of one command are one tree by default");
}

/* record and report take the same --processes; a diff keeps the mode asked
 * for, and by default compares processes by command as everything else does. */
Test(report_args, processes_default_each_and_diff)
{
	struct record_opts ro;
	struct report_opts o;

	cr_assert_eq(PARSE(&ro, "--processes", "each"), 0);
	cr_assert_eq(ro.processes, PROCESSES_EACH);
	char *plain[] = { "report", "in.pb.gz", NULL };
	cr_assert_eq(report_args__parse(2, plain, &o), 0);
	cr_assert_eq(o.processes, PROCESSES_MERGED);
	report_args__free(&o);
	char *diff[] = { "report", "--diff-base", "base.pb.gz", "in.pb.gz", NULL };
	cr_assert_eq(report_args__parse(4, diff, &o), 0);
	cr_assert_eq(o.processes, PROCESSES_MERGED);
	cr_assert(o.filter.functions);
	report_args__free(&o);
	char *diff_each[] = { "report", "--diff-base", "base.pb.gz", "--processes", "each", "in.pb.gz", NULL };
	cr_assert_eq(report_args__parse(6, diff_each, &o), 0);
	cr_assert_eq(o.processes, PROCESSES_EACH);
	report_args__free(&o);
}

Test(record_args, pids_frequency_duration_output_and_command)
{
	struct record_opts o;

	cr_assert_eq(PARSE(&o, "-p", "12,34", "-p", "56", "-F", "999", "-d", "2.5", "-o", "x.txt", "--no-kernel", "-v"),
		     0);
	cr_assert_not(o.all);
	cr_assert_eq(o.npids, 3);
	cr_assert_eq(o.pids[0], 12);
	cr_assert_eq(o.pids[2], 56);
	cr_assert_eq(o.freq, 999);
	cr_assert_float_eq(o.duration, 2.5, 1e-9);
	cr_assert_str_eq(o.output, "x.txt");
	cr_assert(o.filter.no_kernel);
	cr_assert(o.verbose);
	record_args__free(&o);

	/* o.cmd points into argv: keep it alive. */
	char *argv1[] = { "record", "-F", "49", "--", "python3", "-c", "pass", NULL };
	cr_assert_eq(record_args__parse(7, argv1, &o), 0);
	cr_assert_not(o.all);
	cr_assert_str_eq(o.cmd[0], "python3");
	cr_assert_str_eq(o.cmd[1], "-c");
	cr_assert_str_eq(o.cmd[2], "pass");
	cr_assert_null(o.cmd[3]);

	char *argv2[] = { "record", "-a", "--", "sleep", "1", NULL };
	cr_assert_eq(record_args__parse(5, argv2, &o), 0);
	cr_assert(o.all);
	cr_assert_str_eq(o.cmd[0], "sleep");
}

Test(record_args, unknown_long_option, .init = redirect)
{
	struct record_opts o;

	cr_assert_eq(PARSE(&o, "--bogus"), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str("pyebpf: unknown option '--bogus' (see 'pyebpf record --help')\n");
}

Test(record_args, unknown_short_option, .init = redirect)
{
	struct record_opts o;

	cr_assert_eq(PARSE(&o, "-x"), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str("pyebpf: unknown option '-x' (see 'pyebpf record --help')\n");
}

Test(record_args, missing_value, .init = redirect)
{
	struct record_opts o;

	cr_assert_eq(PARSE(&o, "-p"), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str("pyebpf: option '-p' needs a value (see 'pyebpf record --help')\n");
}

Test(record_args, bad_pid, .init = redirect)
{
	struct record_opts o;

	cr_assert_eq(PARSE(&o, "-p", "12,abc"), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str("pyebpf: invalid pid 'abc' (expected PID[,PID...])\n");
}

Test(record_args, bad_frequency_and_duration, .init = redirect)
{
	struct record_opts o;

	cr_assert_eq(PARSE(&o, "-F", "0"), -1);
	cr_assert_eq(PARSE(&o, "-F", "10001"), -1);
	cr_assert_eq(PARSE(&o, "-F", "10000"), 0);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "-d", "-3"), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str("pyebpf: invalid frequency '0' for -F (1 to 10000 Hz: each sample costs the profiled "
				"CPU 3-30 us)\n"
				"pyebpf: invalid frequency '10001' for -F (1 to 10000 Hz: each sample costs the "
				"profiled CPU 3-30 us)\n"
				"pyebpf: invalid duration '-3' for -d (seconds, greater than 0)\n");
}

Test(record_args, native_and_stack_size, .init = redirect)
{
	struct record_opts o;

	cr_assert_eq(PARSE(&o, "--native"), 0);
	cr_assert(o.native);
	cr_assert_eq(o.stack_size, 32768);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "--native", "--stack-size", "64K"), 0);
	cr_assert_eq(o.stack_size, 65536);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "--native", "--stack-size", "4096"), 0);
	cr_assert_eq(o.stack_size, 4096);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "--stack-size", "16K"), -1);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "--native", "--stack-size", "65537"), -1);
	cr_assert_eq(PARSE(&o, "--native", "--stack-size", "512"), -1);
	cr_assert_eq(PARSE(&o, "--native", "--stack-size", "lots"), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str("pyebpf: --stack-size needs --native\n"
				"pyebpf: invalid size '65537' for --stack-size (1K to 64K)\n"
				"pyebpf: invalid size '512' for --stack-size (1K to 64K)\n"
				"pyebpf: invalid size 'lots' for --stack-size (1K to 64K)\n");
}

Test(record_args, tasks_writes_task_time_alone_where_it_can, .init = redirect)
{
	struct record_opts o;

	cr_assert_eq(PARSE(&o, "--mode", "wall", "--tasks", "-o", "t.svg"), 0);
	cr_assert(o.tasks);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "--mode", "wall", "-o", "t.svg"), 0);
	cr_assert_not(o.tasks);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "--tasks", "-o", "t.svg"), -1);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "--mode", "wall", "--tasks", "--no-tasks", "-o", "t.svg"), -1);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "--mode", "wall", "--tasks", "--continuous", "/tmp"), -1);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "--mode", "wall", "--tasks", "-o", "t.pb.gz"), -1);
	record_args__free(&o);
	fflush(stderr);
	cr_assert_stderr_eq_str(
		"pyebpf: --tasks needs --mode wall: asyncio task time is sampled in wall mode\n"
		"pyebpf: --tasks and --no-tasks exclude each other\n"
		"pyebpf: --continuous writes pprof files, which keep asyncio task time apart already: "
		"--tasks does not apply\n"
		"pyebpf: pprof keeps asyncio task time apart already (sample type task_wall): --tasks is "
		"for the other outputs\n");
}

Test(record_args, debug_dirs_repeat_and_must_exist, .init = redirect)
{
	struct record_opts o;

	cr_assert_eq(PARSE(&o, "-a"), 0);
	cr_assert_null(o.debug_dirs); /* the recorder's default: /usr/lib/debug */
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "--debug-dir", "/tmp", "--debug-dir", "/"), 0);
	cr_assert_eq(o.ndebug_dirs, 2);
	cr_assert_str_eq(o.debug_dirs[0], "/tmp");
	cr_assert_str_eq(o.debug_dirs[1], "/");
	cr_assert_null(o.debug_dirs[2]);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "--debug-dir", "/nonexistent"), -1);
	cr_assert_eq(PARSE(&o, "--debug-dir", "/etc/hostname"), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str("pyebpf: no directory '/nonexistent' for --debug-dir\n"
				"pyebpf: no directory '/etc/hostname' for --debug-dir\n");
}

Test(record_args, conflicting_targets, .init = redirect)
{
	struct record_opts o;

	cr_assert_eq(PARSE(&o, "-a", "-p", "1"), -1);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "-p", "1", "--", "true"), -1);
	record_args__free(&o);
	fflush(stderr);
	cr_assert_stderr_eq_str("pyebpf: -a and -p cannot be combined\n"
				"pyebpf: -p and a command cannot be combined\n");
}

Test(record_args, output_format_by_extension, .init = redirect)
{
	enum output_format f;

	cr_assert_eq(output_format_from_path("a.folded", &f), 0);
	cr_assert_eq(output_format_from_path("dir/a.txt", &f), 0);
	cr_assert_eq(output_format_from_path("profile", &f), 0);
	cr_assert_eq(f, FORMAT_FOLDED);
	cr_assert_eq(output_format_from_path("a.pb.gz", &f), 0);
	cr_assert_eq(f, FORMAT_PPROF);
	cr_assert_eq(output_format_from_path("a.svgz", &f), -1);
	fflush(stderr);
	cr_assert_eq(output_format_from_path("a.speedscope.json", &f), 0);
	cr_assert_eq(f, FORMAT_SPEEDSCOPE);
	cr_assert_eq(output_format_from_path("x/flame.svg", &f), 0);
	cr_assert_eq(f, FORMAT_SVG);
	cr_assert_eq(output_format_from_path("trace.json", &f), 0);
	cr_assert_eq(f, FORMAT_TRACE);
	cr_assert_eq(output_format_from_path("trace.json.gz", &f), 0);
	cr_assert_eq(f, FORMAT_TRACE_GZ);
	cr_assert_eq(output_format_from_name("trace.gz", &f), 0);
	cr_assert_eq(f, FORMAT_TRACE_GZ);
	cr_assert_stderr_eq_str("pyebpf: cannot tell the output format of 'a.svgz' (known extensions: .folded, .txt, "
				".pb.gz, .pprof, .speedscope.json, .gecko.json, .heatmap.html, .svg, .json, .json.gz; "
				"or give --format)\n");
}

Test(record_args, help_goes_to_stdout, .init = redirect)
{
	struct record_opts o;

	cr_assert_eq(PARSE(&o, "--help"), 1);
	fflush(stdout);
	FILE *out = cr_get_redirected_stdout();
	char buf[256] = { 0 };
	cr_assert(fgets(buf, sizeof(buf), out));
	cr_assert_str_eq(buf, "Usage: pyebpf record [OPTIONS] [-- CMD [ARGS...]]\n");
}

Test(cpus, parses_cpu_lists)
{
	bool f[16];

	cr_assert_eq(cpulist__parse("0-3,8,10-11\n", f, 16), 0);
	bool want[16] = { 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1, 1 };
	cr_assert_arr_eq(f, want, sizeof(want));
	cr_assert_eq(cpulist__parse("0", f, 16), 0);
	cr_assert(f[0] && !f[1]);
	cr_assert_eq(cpulist__parse("3-1", f, 16), -1);
	cr_assert_eq(cpulist__parse("a", f, 16), -1);
	cr_assert_eq(cpulist__parse("1;2", f, 16), -1);
}

Test(outfile, commit_renames_abort_removes, .init = redirect)
{
	char dir[] = "/tmp/pyebpf-out-XXXXXX", path[128];
	struct outfile o;
	struct stat st;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.folded", dir);
	cr_assert_eq(outfile__open(&o, path), 0);
	cr_assert_neq(stat(path, &st), 0, "nothing at the final path before commit");
	fputs("a;b 1\n", o.f);
	cr_assert_eq(outfile__commit(&o), 0);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_size, 6);

	cr_assert_eq(outfile__open(&o, path), 0);
	char tmp[sizeof(o.tmp)];
	strcpy(tmp, o.tmp);
	fputs("partial", o.f);
	outfile__abort(&o);
	cr_assert_neq(stat(tmp, &st), 0, "temporary removed");
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_size, 6, "old file untouched");
	unlink(path);
	rmdir(dir);
}

Test(outfile, unwritable_paths, .init = redirect)
{
	struct outfile o;

	cr_assert_eq(outfile__open(&o, "/nonexistent-dir/p.folded"), -1);
	cr_assert_eq(outfile__open(&o, "/tmp"), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str("pyebpf: cannot write '/nonexistent-dir/p.folded': No such file or directory\n"
				"pyebpf: cannot write '/tmp': it is a directory\n");
}

Test(record_args, empty_items_in_pid_lists, .init = redirect)
{
	struct record_opts o;

	cr_assert_eq(PARSE(&o, "-p", "1,,2"), -1);
	cr_assert_eq(PARSE(&o, "-p", "1,"), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str("pyebpf: invalid pid list '1,,2' (expected PID[,PID...])\n"
				"pyebpf: invalid pid list '1,' (expected PID[,PID...])\n");
}

Test(record_args, comm_names_the_targets_and_children_follow_by_default)
{
	struct record_opts o;

	/* --comm alone: those names are the targets, not the whole machine. */
	cr_assert_eq(PARSE(&o, "--comm", "gunicorn"), 0);
	cr_assert_not(o.all);
	cr_assert_eq(o.filter.ncomms, 1);
	cr_assert_not(o.no_children);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "-p", "12", "--no-children"), 0);
	cr_assert(o.no_children);
	record_args__free(&o);
}

Test(record_args, no_children_without_p_and_long_comm_are_one_line, .init = redirect)
{
	struct record_opts o;

	cr_assert_eq(PARSE(&o, "--no-children"), -1);
	cr_assert_eq(PARSE(&o, "--comm", "gunicorn-worker-longer"), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str("pyebpf: --no-children applies to -p or a command\n"
				"pyebpf: --comm 'gunicorn-worker-longer' is longer than a process name can be (15 "
				"bytes): the kernel calls it 'gunicorn-worker'\n");
}

/* --mode memory: its rate in bytes, its one value for the outputs that show one; what does not apply, refused. */
Test(record_args, memory_mode_options, .init = redirect)
{
	struct record_opts o;

	cr_assert_eq(PARSE(&o, "--mode", "memory", "-o", "m.svg"), 0);
	cr_assert_eq(o.mode, MODE_MEMORY);
	cr_assert_eq(o.mem_sample_bytes, 512 * 1024);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "--mode", "memory", "--sample-bytes", "64K", "--sample-type", "alloc_space", "-o",
			   "m.folded"),
		     0);
	cr_assert_eq(o.mem_sample_bytes, 64 * 1024);
	cr_assert_eq(o.sample_type, 1 /* MEM_ALLOC_SPACE */);
	record_args__free(&o);
	cr_assert_eq(PARSE(&o, "--mode", "memory", "-F", "99"), -1);
	cr_assert_eq(PARSE(&o, "--mode", "memory", "--sample-bytes", "1K"), -1);
	cr_assert_eq(PARSE(&o, "--sample-bytes", "1M"), -1);
	cr_assert_eq(PARSE(&o, "--mode", "memory", "--sample-type", "heap"), -1);
	cr_assert_eq(PARSE(&o, "--mode", "memory", "-o", "m.json"), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str(
		"pyebpf: --mode memory samples by bytes of growth, not by time: -F and --rate-limit do not apply "
		"(--sample-bytes sets its rate)\n"
		"pyebpf: invalid size '1K' for --sample-bytes (4K to 1G)\n"
		"pyebpf: --sample-bytes and --sample-type need --mode memory\n"
		"pyebpf: invalid type 'heap' for --sample-type (inuse_space, alloc_space, peak_space, "
		"inuse_objects, alloc_objects or peak_objects)\n"
		"pyebpf: --mode memory writes pprof, folded, SVG or speedscope: timelines and heat maps are of time\n");
}
