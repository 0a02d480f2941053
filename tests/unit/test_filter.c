/* Filters: which samples and frames stay, the same for record and report. */
#include "unit.h"

#include "profile/containers_seen.h"
#include "profile/filter.h"
#include "profile/filter_args.h"
#include "profile/filter_idle.h"
#include "profile/offcpu.h"
#include "frames.h"
#include "profile/profile.h"
#include "write/folded.h"

static char *folded(const struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct folded_opts o = { .threads = 1 };

	cr_assert_eq(folded__write(p, &o, f), 0);
	fclose(f);
	return buf;
}

/* Two processes, three threads, Python, native and kernel frames, over 3 s. */
static struct profile *recording(void)
{
	struct profile *p = profile__new();
	uint32_t mod = frame(p, FRAME_PYTHON, "<module>", "/a.py", 1, 1);
	uint32_t run = frame(p, FRAME_PYTHON, "run", "/a.py", 5, 4);
	uint32_t mul = frame(p, FRAME_NATIVE, "Matrix::multiply()", "/lib/m.so", 0, 0);
	uint32_t sys = frame(p, FRAME_KERNEL, "do_syscall_64", "", 0, 0);
	uint32_t main_ = frame(p, FRAME_NATIVE, "main", "/bin/busy", 0, 0);
	struct sample_labels a = { .pid = 10,
				   .tid = 10,
				   .comm = profile__str(p, "python3"),
				   .thread = profile__str(p, "MainThread"),
				   .flags = LABEL_GIL_KNOWN | LABEL_GIL_HELD };
	struct sample_labels b = a, c = {
		.pid = 20, .tid = 20, .comm = profile__str(p, "busy"), .thread = profile__str(p, "busy")
	};
	uint32_t s1[] = { mod, run }, s2[] = { mod, run, mul, sys }, s3[] = { main_, sys };

	b.tid = 11;
	b.thread = profile__str(p, "monitor");
	b.flags = LABEL_GIL_KNOWN;
	profile__add_at(p, &a, s1, 2, 1, 500000000ULL);
	profile__add_at(p, &a, s2, 4, 1, 1500000000ULL);
	profile__add_at(p, &b, s2, 4, 2, 2500000000ULL);
	profile__add_at(p, &c, s3, 2, 3, 1000000000ULL);
	return p;
}

static char *filtered(const char *const *args, uint64_t *dropped)
{
	struct filter f;
	struct profile *p = recording(), *q;
	char *out;

	filter__init(&f);
	for (int i = 0; args[i]; i += 2) {
		int opt = !strcmp(args[i], "--tid")              ? OPT_FILTER_TID
			  : !strcmp(args[i], "--thread")         ? OPT_FILTER_THREAD
			  : !strcmp(args[i], "--exclude-thread") ? OPT_FILTER_EXCLUDE_THREAD
			  : !strcmp(args[i], "--comm")           ? OPT_FILTER_COMM
			  : !strcmp(args[i], "--since")          ? OPT_FILTER_SINCE
			  : !strcmp(args[i], "--until")          ? OPT_FILTER_UNTIL
			  : !strcmp(args[i], "--gil")            ? OPT_FILTER_GIL
			  : !strcmp(args[i], "--no-kernel")      ? OPT_FILTER_NO_KERNEL
			  : !strcmp(args[i], "--python-only")    ? OPT_FILTER_PYTHON_ONLY
			  : !strcmp(args[i], "--functions")      ? OPT_FILTER_FUNCTIONS
								 : -1;
		if (!strcmp(args[i], "--pid"))
			cr_assert_eq(filter_args__pids(&f, args[i + 1], "--pid"), 0);
		else
			cr_assert_eq(filter_args__option(&f, opt, args[i + 1]), 1, "%s", args[i]);
	}
	q = filter__apply(&f, p, dropped);
	out = folded(q);
	profile__free(p);
	profile__free(q);
	filter__free(&f);
	return out;
}

#define CHECK(want_dropped, want, ...)                                                            \
	do {                                                                                      \
		const char *args[] = { __VA_ARGS__, NULL };                                       \
		uint64_t dropped;                                                                 \
		char *got = filtered(args, &dropped);                                             \
		cr_assert_str_eq(got, want);                                                      \
		cr_assert_eq(dropped, want_dropped, "dropped %llu", (unsigned long long)dropped); \
		free(got);                                                                        \
	} while (0)

#define PY_MAIN "python3;MainThread [tid 10];<module> (/a.py:1);run (/a.py:5)"
#define PY_MON "python3;monitor [tid 11];<module> (/a.py:1);run (/a.py:5)"

Test(filter, by_process_thread_and_name)
{
	CHECK(3,
	      PY_MAIN " 1\n" PY_MAIN ";Matrix::multiply();do_syscall_64_[k] 1\n" PY_MON
		      ";Matrix::multiply();do_syscall_64_[k] 2\n",
	      "--pid", "10");
	CHECK(5, PY_MON ";Matrix::multiply();do_syscall_64_[k] 2\n", "--tid", "11");
	CHECK(5, PY_MON ";Matrix::multiply();do_syscall_64_[k] 2\n", "--thread", "monitor");
	CHECK(2,
	      "busy;busy [tid 20];main;do_syscall_64_[k] 3\n" PY_MAIN " 1\n" PY_MAIN
	      ";Matrix::multiply();do_syscall_64_[k] 1\n",
	      "--exclude-thread", "monitor");
	CHECK(2,
	      "busy;busy [tid 20];main;do_syscall_64_[k] 3\n" PY_MAIN " 1\n" PY_MAIN
	      ";Matrix::multiply();do_syscall_64_[k] 1\n",
	      "--exclude-thread", "11");
	CHECK(4, "busy;busy [tid 20];main;do_syscall_64_[k] 3\n", "--comm", "busy");
	CHECK(5, PY_MAIN " 1\n" PY_MAIN ";Matrix::multiply();do_syscall_64_[k] 1\n", "--gil", "");
}

Test(filter, by_time)
{
	CHECK(4, PY_MAIN ";Matrix::multiply();do_syscall_64_[k] 1\n" PY_MON ";Matrix::multiply();do_syscall_64_[k] 2\n",
	      "--since", "1.2");
	CHECK(3, "busy;busy [tid 20];main;do_syscall_64_[k] 3\n" PY_MAIN " 1\n", "--until", "1.1");
	/* A window is half-open: --until's own moment belongs to the next one. */
	CHECK(6, PY_MAIN " 1\n", "--until", "1");
	CHECK(4, "busy;busy [tid 20];main;do_syscall_64_[k] 3\n", "--since", "1", "--until", "1.5");
	CHECK(4, "busy;busy [tid 20];main;do_syscall_64_[k] 3\n", "--since", "0.9", "--until", "1.1");
}

Test(filter, frames_by_kind)
{
	CHECK(0,
	      "busy;busy [tid 20];main 3\n" PY_MAIN " 1\n" PY_MAIN ";Matrix::multiply() 1\n" PY_MON
	      ";Matrix::multiply() 2\n",
	      "--no-kernel", "");
	/* Python frames only; the native process has none and goes. */
	CHECK(3, PY_MAIN " 2\n" PY_MON " 2\n", "--python-only", "");
	/* One frame per Python function: lines merge (py-spy's --nolineno). */
	CHECK(0,
	      "busy;busy [tid 20];main;do_syscall_64_[k] 3\n"
	      "python3;MainThread [tid 10];<module> (/a.py);run (/a.py) 1\n"
	      "python3;MainThread [tid 10];<module> (/a.py);run (/a.py);Matrix::multiply();do_syscall_64_[k] 1\n"
	      "python3;monitor [tid 11];<module> (/a.py);run (/a.py);Matrix::multiply();do_syscall_64_[k] 2\n",
	      "--functions", "");
}

/* --functions as record applies it: two lines of one function are one frame. */
Test(filter, functions_merge_the_lines_of_a_function)
{
	struct filter f;
	struct profile *p = profile__new();
	uint32_t a = frame(p, FRAME_PYTHON, "run", "/a.py", 5, 4), b = frame(p, FRAME_PYTHON, "run", "/a.py", 9, 4);
	uint32_t n = frame(p, FRAME_NATIVE, "main", "/bin/x", 0, 0), v[3] = { n, a, b };

	filter__init(&f);
	cr_assert_eq(filter_args__option(&f, OPT_FILTER_FUNCTIONS, NULL), 1);
	filter__functions(&f, p, v, 3);
	cr_assert_eq(v[0], n, "native frames stay");
	cr_assert_eq(v[1], v[2], "one frame for both lines");
	cr_assert_eq(profile__frame_at(p, v[1])->line, 0);
	cr_assert_eq(profile__frame_at(p, v[1])->start_line, 4);
	filter__free(&f);
	profile__free(p);
}

Test(filter, bad_values)
{
	struct filter f;

	filter__init(&f);
	cr_redirect_stderr();
	cr_assert_eq(filter_args__option(&f, OPT_FILTER_SINCE, "soon"), -1);
	cr_assert_eq(filter_args__option(&f, OPT_FILTER_TID, "1,x"), -1);
	cr_assert_eq(filter_args__option(&f, OPT_FILTER_THREAD, ""), -1);
	cr_assert_eq(filter_args__option(&f, OPT_FILTER_SINCE, "5"), 1);
	cr_assert_eq(filter_args__option(&f, OPT_FILTER_UNTIL, "2"), 1);
	cr_assert_eq(filter_args__check(&f), -1);
	cr_assert_eq(filter_args__option(&f, 'x', NULL), 0, "not a filter option");
	filter__free(&f);
	fflush(stderr);
	cr_assert_stderr_eq_str(
		"pyebpf: invalid time 'soon' for --since (seconds into the recording, or a time: 14:20, "
		"2026-11-23T14:00:05, with Z for UTC)\n"
		"pyebpf: invalid TID 'x' for --tid (expected TID[,TID...])\n"
		"pyebpf: empty value for --thread\n"
		"pyebpf: --until 2.000 is before --since 5.000\n");
}

/* --exclude-idle: a thread ran if it was on a CPU, or if one of its waits
 * ended in the window (it woke); one asleep to the end did not. */
Test(filter, exclude_idle_keeps_threads_that_ran_or_woke)
{
	struct profile *p = profile__new(), *q;
	struct idle_stats st;
	uint32_t fn = frame(p, FRAME_PYTHON, "handler", "/a.py", 1, 1);
	struct sample_labels cpu = { .pid = 10, .tid = 10, .comm = profile__str(p, "python3") }, woke = cpu,
			     asleep = cpu;

	profile__meta(p)->period_ns = 10000000;     /* 100 Hz */
	profile__meta(p)->duration_ns = 4000000000; /* 4 s */
	profile__meta(p)->wall = 1;
	woke.tid = 11;
	woke.offcpu = OFFCPU_SLEEP;
	asleep.tid = 12;
	asleep.offcpu = OFFCPU_SLEEP;
	profile__add_at(p, &cpu, &fn, 1, 1, 1000000000ULL);   /* on a CPU at 1 s */
	profile__add_at(p, &woke, &fn, 1, 15, 1000000000ULL); /* 150 ms from 1 s: it woke */
	profile__add_at(p, &woke, &fn, 1, 15, 3800000000ULL); /* ...and one still going at the stop */
	profile__add_at(p, &asleep, &fn, 1, 400, 0);          /* asleep from 0 to the end */
	q = filter__without_idle(p, &st);
	cr_assert_eq(st.threads, 1);
	cr_assert_eq(st.samples, 400);
	cr_assert_eq(profile__total(q), 31);
	profile__free(q);
	profile__free(p);
}

/*
 * What report --container says it holds when a name kept nothing: each
 * container once, in order of first sample, named where a name was
 * recorded, escaped, cut after the first few.
 */
Test(filter, containers_seen_for_a_miss)
{
	struct profile *p = profile__new();
	uint32_t mod = frame(p, FRAME_PYTHON, "<module>", "/a.py", 1, 1);
	char line[256];

	cr_assert_eq(containers_seen(p, 8, line, sizeof(line)), 0);
	cr_assert_str_eq(line, "");
	const char *ids[] = { "3f2a9c1b7e4d", "9b1e0c2d4f6a", "3f2a9c1b7e4d", "0123456789ab", "aaaaaaaaaaaa" };
	const char *names[] = { "web", "api\x1b[2J", "web", NULL, NULL };
	for (int i = 0; i < 5; i++) {
		struct sample_labels l = { .pid = 10u + (uint32_t)i,
					   .tid = 10u + (uint32_t)i,
					   .container = profile__str(p, ids[i]),
					   .container_name = names[i] ? profile__str(p, names[i]) : 0 };

		profile__add(p, &l, &mod, 1, 1);
	}
	struct sample_labels host = { .pid = 1, .tid = 1 };
	profile__add(p, &host, &mod, 1, 1);
	cr_assert_eq(containers_seen(p, 8, line, sizeof(line)), 4);
	cr_assert_str_eq(line, "web (3f2a9c1b7e4d), api\\x1b[2J (9b1e0c2d4f6a), 0123456789ab, aaaaaaaaaaaa");
	cr_assert_eq(containers_seen(p, 2, line, sizeof(line)), 4);
	cr_assert_str_eq(line, "web (3f2a9c1b7e4d), api\\x1b[2J (9b1e0c2d4f6a) and 2 more");
	/* A short buffer: cut, still a string. */
	cr_assert_eq(containers_seen(p, 8, line, 10), 4);
	cr_assert_str_eq(line, "web (3f2a");
	profile__free(p);
}
