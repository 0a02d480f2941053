/* `pyebpf top`'s options: record's targets and sampling, its own, and what it refuses. */
#include "unit.h"

#include "live/live_top_args.h"

#define TOP(o, ...)                                                     \
	({                                                              \
		char *argv_[] = { "top", __VA_ARGS__, NULL };           \
		live_top_args__parse(ARRAY_LEN(argv_) - 1, argv_, (o)); \
	})
#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

Test(live_top_args, targets_sampling_and_own_options)
{
	struct live_top_opts o;
	char *none[] = { "top", NULL };

	cr_assert_eq(live_top_args__parse(1, none, &o), 0);
	cr_assert(o.rec.all);
	cr_assert_not(o.once);
	cr_assert_eq(o.rows, LIVE_TOP_DEFAULT_ROWS);
	live_top_args__free(&o);

	cr_assert_eq(TOP(&o, "-p", "12,13", "--mode", "wall", "-F", "499", "--once", "-d", "2", "-n", "5",
			 "--exclude-thread", "monitor"),
		     0);
	cr_assert_not(o.rec.all);
	cr_assert_eq(o.rec.npids, 2);
	cr_assert_eq(o.rec.pids[1], 13);
	cr_assert_eq(o.rec.mode, MODE_WALL);
	cr_assert_eq(o.rec.freq, 499);
	cr_assert(o.once);
	cr_assert_eq(o.rec.duration, 2);
	cr_assert_eq(o.rows, 5);
	cr_assert_eq(o.rec.filter.nexclude, 1);
	live_top_args__free(&o);

	/* --comm alone: those processes are the targets. */
	cr_assert_eq(TOP(&o, "--comm", "gunicorn", "--container", "3f2a"), 0);
	cr_assert_not(o.rec.all);
	cr_assert_eq(o.rec.ncontainers, 1);
	live_top_args__free(&o);
}

Test(live_top_args, refused, .init = cr_redirect_stderr)
{
	struct live_top_opts o;

	cr_assert_eq(TOP(&o, "-a", "-p", "1"), -1);
	cr_assert_eq(TOP(&o, "--since", "10"), -1);
	cr_assert_eq(TOP(&o, "-o", "x.svg"), -1);
	cr_assert_eq(TOP(&o, "-n", "0"), -1);
	cr_assert_eq(TOP(&o, "--", "python3", "x.py"), -1);
	cr_assert_eq(TOP(&o, "--mode", "idle"), -1);
	fflush(stderr);
	cr_assert_stderr_eq_str("pyebpf: -a and -p cannot be combined\n"
				"pyebpf: top shows the last second and everything since its start: --since and "
				"--until are for record and report\n"
				"pyebpf: unknown option '-o' (see 'pyebpf top --help')\n"
				"pyebpf: invalid count '0' for --rows (1 or more)\n"
				"pyebpf: top takes no command (start it, then: pyebpf top -p PID)\n"
				"pyebpf: invalid mode 'idle' for --mode (cpu, wall, off-cpu or memory)\n");
}
