/* --mode wall/off-cpu: the interval weighting, the reason classification,
 * and an off-CPU sample through ingest into the writers. */
#include "unit.h"

#include "record/ingest.h"
#include "profile/offcpu.h"
#include "offcpu_weight.h"
#include "read/pprof.h"
#include "samples.h"
#include "write/top.h"
#include "write/pprof.h"

/* The mean weight over rand32 spread evenly over its range. */
static double mean_weight(uint64_t d_ns, uint32_t freq)
{
	const uint32_t steps = 1 << 16;
	double sum = 0;

	for (uint32_t i = 0; i < steps; i++)
		sum += offcpu_weight(d_ns, freq, i * (uint32_t)(UINT32_MAX / steps) + 7);
	return sum / steps;
}

Test(offcpu_weight, the_expected_weight_is_d_times_f)
{
	static const struct {
		uint64_t d_ns;
		uint32_t freq;
	} cases[] = { { 1000, 99 },          { 50000, 99 },       { 3000000, 99 }, { 10101010, 99 },
		      { 25 * 1000000, 999 }, { 123456789, 1000 }, { 7777, 10000 }, { 2500000000ULL, 97 } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double want = (double)cases[i].d_ns * cases[i].freq / 1e9,
		       got = mean_weight(cases[i].d_ns, cases[i].freq);

		cr_assert(got > want - 1e-3 - want * 1e-4 && got < want + 1e-3 + want * 1e-4,
			  "d=%llu ns F=%u: mean weight %.6f, want %.6f", (unsigned long long)cases[i].d_ns,
			  cases[i].freq, got, want);
	}
}

Test(offcpu_weight, whole_ticks_always_count_and_the_rest_at_most_once)
{
	/* 2.5 ticks: 2 or 3, never anything else; a zero-length wait weighs nothing. */
	cr_assert_eq(offcpu_weight(25000000, 100, 0), 3);
	cr_assert_eq(offcpu_weight(25000000, 100, UINT32_MAX), 2);
	cr_assert_eq(offcpu_weight(0, 100, 0), 0);
	cr_assert_eq(offcpu_weight(20000000, 100, UINT32_MAX), 2);
	/* An interval beyond the clip does not overflow. */
	cr_assert_eq(offcpu_weight(UINT64_MAX, 1000, UINT32_MAX), (uint32_t)(OFFCPU_MAX_NS / 1000000000ULL * 1000));
	cr_assert_eq(offcpu_weight(UINT64_MAX, 10000, UINT32_MAX), UINT32_MAX);
}

static enum offcpu_reason why(uint32_t state, int32_t nr, uint64_t arg, uint32_t flags)
{
	struct pyebpf_offcpu o = { .state = state, .syscall = nr, .wait_arg = arg, .flags = flags };
	struct gil_range gil = { 0x7000, 0x7000 + 208 };

	return offcpu_classify(&o, &gil);
}

Test(offcpu_reason, classification_from_state_syscall_and_gil)
{
	/* Preempted: whatever syscall it was in. */
	cr_assert_eq(why(0, PYEBPF_NR_futex, 0x7000, 0), OFFCPU_RUNQUEUE);
	cr_assert_eq(why(0, -1, 0, 0), OFFCPU_RUNQUEUE);
	/* Sleeps: nanosleep, clock_nanosleep, select/poll with no descriptor (time.sleep before 3.11). */
	cr_assert_eq(why(1, PYEBPF_NR_nanosleep, 0, 0), OFFCPU_SLEEP);
	cr_assert_eq(why(1, PYEBPF_NR_clock_nanosleep, 0, 0), OFFCPU_SLEEP);
	cr_assert_eq(why(1, PYEBPF_NR_pselect6, 0, 0), OFFCPU_SLEEP);
	cr_assert_eq(why(1, PYEBPF_NR_ppoll, 0, 0), OFFCPU_SLEEP);
	cr_assert_eq(why(1, PYEBPF_NR_select, 0, 0), OFFCPU_SLEEP); /* x86-64's: arm64 has none */
	cr_assert_eq(why(1, PYEBPF_NR_poll, 0, 0), OFFCPU_SLEEP);
	/* I/O: read, recvfrom, accept4, epoll_wait, select on descriptors, fsync; D state too. */
	cr_assert_eq(why(1, PYEBPF_NR_read, 3, 0), OFFCPU_IO);
	cr_assert_eq(why(1, PYEBPF_NR_recvfrom, 3, 0), OFFCPU_IO);
	cr_assert_eq(why(1, PYEBPF_NR_accept4, 3, 0), OFFCPU_IO);
	cr_assert_eq(why(1, PYEBPF_NR_epoll_pwait, 3, 0), OFFCPU_IO);
	cr_assert_eq(why(1, PYEBPF_NR_pselect6, 4, 0), OFFCPU_IO);
	cr_assert_eq(why(2, PYEBPF_NR_fsync, 3, 0), OFFCPU_IO);
	/* Futexes: the GIL's are the GIL, every other one a lock. */
	cr_assert_eq(why(1, PYEBPF_NR_futex, 0x7000, 0), OFFCPU_GIL);
	cr_assert_eq(why(1, PYEBPF_NR_futex, 0x7000 + 207, 0), OFFCPU_GIL);
	cr_assert_eq(why(1, PYEBPF_NR_futex, 0x7000 + 208, 0), OFFCPU_LOCK);
	cr_assert_eq(why(1, PYEBPF_NR_futex, 0x6fff, 0), OFFCPU_LOCK);
	cr_assert_eq(why(1, PYEBPF_NR_flock, 3, 0), OFFCPU_LOCK);
	/* Anything else, and no syscall at all (a page fault). */
	cr_assert_eq(why(1, 999, 0, 0), OFFCPU_OTHER);
	cr_assert_eq(why(2, -1, 0, 0), OFFCPU_OTHER);
	/* Off the CPU since before the recording: the state was not seen, the syscall tells. */
	cr_assert_eq(why(0, PYEBPF_NR_epoll_pwait, 3, PYEBPF_OFFCPU_STATE_UNKNOWN), OFFCPU_IO);
	cr_assert_eq(why(0, -1, 0, PYEBPF_OFFCPU_STATE_UNKNOWN), OFFCPU_OTHER);
	/* Without a GIL range (2.7, 3.6) a futex is a lock. */
	struct pyebpf_offcpu o = { .state = 1, .syscall = PYEBPF_NR_futex, .wait_arg = 0x7000 };
	cr_assert_eq(offcpu_classify(&o, NULL), OFFCPU_LOCK);
}

Test(offcpu_reason, names_frames_and_native_gil_functions)
{
	for (int r = OFFCPU_RUNQUEUE; r < OFFCPU__COUNT; r++) {
		char frame[64];

		cr_assert_eq(offcpu_reason_parse(offcpu_reason_name((enum offcpu_reason)r)), (enum offcpu_reason)r);
		snprintf(frame, sizeof(frame), "[off-cpu: %s]", offcpu_reason_name((enum offcpu_reason)r));
		cr_assert_str_eq(offcpu_reason_frame((enum offcpu_reason)r), frame);
	}
	cr_assert_eq(offcpu_reason_parse("cpu"), OFFCPU_NONE);
	cr_assert(offcpu_gil_call("drop_gil", false, "take_gil"));
	cr_assert(offcpu_gil_call("time_sleep", false, "PyEval_RestoreThread"));
	/* 2.7: the evaluation loop (a Python frame once merged) takes the GIL itself. */
	cr_assert(offcpu_gil_call("spin", true, "PyThread_acquire_lock"));
	cr_assert(offcpu_gil_call("PyEval_EvalFrameEx", false, "PyThread_acquire_lock"));
	/* threading.Lock.acquire is a lock. */
	cr_assert_not(offcpu_gil_call("lock_PyThread_acquire_lock", false, "PyThread_acquire_lock"));
	cr_assert_not(offcpu_gil_call("acquire_timed", false, "PyThread_acquire_lock_timed"));
	cr_assert(offcpu_scheduler_function("finish_task_switch.isra.0"));
	cr_assert(offcpu_scheduler_function("__schedule"));
	cr_assert_not(offcpu_scheduler_function("schedule_hrtimeout_range"));
}

/* An off-CPU sample of this process: weight 7, in read(2), its kernel stack
 * starting with the scheduler. */
static size_t offcpu_sample(struct sample_rec *r, uint64_t since, uint64_t until)
{
	struct pyebpf_sample *s = sample_init(r, (uint32_t)getpid(), (uint32_t)getpid(), until);
	uint64_t k[] = { 0xffffffff81000310ULL, 0xffffffff81000304ULL, 0xffffffff81000210ULL, 0xffffffff81000104ULL };

	s->flags = PYEBPF_SAMPLE_OFFCPU;
	s->off = (struct pyebpf_offcpu){
		.since_ns = since, .weight = 7, .syscall = PYEBPF_NR_read, .state = 1, .wait_arg = 3
	};
	return sample_native(s, k, 4, NULL, 0);
}

Test(offcpu_ingest, a_sample_weighs_its_ticks_ends_in_its_reason_and_skips_the_scheduler)
{
	static struct sample_rec rec;
	const char *ks = write_temp("ffffffff81000100 T do_syscall_64\n"
				    "ffffffff81000200 T ksys_read\n"
				    "ffffffff81000300 T __schedule\n"
				    "ffffffff81000308 T schedule\n");
	char kpath[64];
	struct filter f;
	struct ingest_config c = { .filter = &f };
	struct ingest_hooks h = { 0 };
	struct profile *p = profile__new(), *back;
	struct ingest *in;
	struct profile_entry e;
	struct profile_event_cursor cur = { 0 };
	struct profile_event ev;
	size_t n;
	char why_read[128];
	struct top_row *rows;
	FILE *tmp;

	snprintf(kpath, sizeof(kpath), "%s", ks);
	filter__init(&f);
	c.kallsyms = kpath;
	in = ingest__new(p, &c, &h);
	profile__meta(p)->wall = 1;
	profile__meta(p)->period_ns = 10000000;
	ingest__set_time_base(in, 1000);
	ingest__event(in, rec.words, offcpu_sample(&rec, 5000, 80005000));
	cr_assert_eq(profile__nstacks(p), 1);
	profile__entry(p, 0, &e);
	cr_assert_eq(e.count, 7);
	cr_assert_eq(e.labels.offcpu, OFFCPU_IO);
	cr_assert_eq(e.nframes, 3); /* do_syscall_64, ksys_read, [off-cpu: io]: no scheduler */
	cr_assert_str_eq(profile__str_at(p, profile__frame_at(p, e.frames[0])->name), "do_syscall_64");
	cr_assert_str_eq(profile__str_at(p, profile__frame_at(p, e.frames[1])->name), "ksys_read");
	cr_assert_str_eq(profile__str_at(p, profile__frame_at(p, e.frames[2])->name), "[off-cpu: io]");
	cr_assert_eq(profile__frame_at(p, e.frames[2])->kind, FRAME_MARK);
	/* Timed at the interval's start, for timelines. */
	cr_assert_eq(profile__nevents(p), 1);
	cr_assert(profile__next_event(p, &cur, &ev));
	cr_assert_eq(ev.time_ns, 4000);
	cr_assert_eq(ingest__stats(in)->offcpu_ticks, 7);

	/* The top table's split, and the self time goes to the waiting function. */
	rows = top__rows(p, &n);
	cr_assert_str_eq(rows[0].name, "ksys_read_[k]");
	cr_assert_eq(rows[0].self, 7);
	cr_assert_eq(rows[0].by_reason[OFFCPU_IO], 7);
	cr_assert_eq(rows[0].by_reason[OFFCPU_NONE], 0);
	top__free(rows, n);

	/* pprof: wall/nanoseconds, no CPU time, the reason as a label; read back the same. */
	{
		char *data = NULL;
		size_t len = 0;

		tmp = open_memstream(&data, &len);
		cr_assert_eq(pprof__write(p, tmp), 0);
		fclose(tmp);
		back = pprof__read((const uint8_t *)data, len, why_read, sizeof(why_read));
		free(data);
	}
	cr_assert_not_null(back, "%s", why_read);
	cr_assert(profile__meta_of(back)->wall);
	profile__entry(back, 0, &e);
	cr_assert_eq(e.count, 7);
	cr_assert_eq(e.labels.offcpu, OFFCPU_IO);
	profile__free(back);

	ingest__free(in);
	profile__free(p);
	filter__free(&f);
	unlink(kpath);
}
