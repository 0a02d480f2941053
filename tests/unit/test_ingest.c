/*
 * The ingest path with synthetic samples of this very process: its user
 * addresses are named from the unit-test binary's symbols, kernel addresses
 * from a kallsyms file written here; no BPF anywhere.
 */
#include "unit.h"

#include "record/counters.h"
#include "record/ingest.h"
#include "samples.h"
#include "record/summary.h"
#include "base/util.h"

__attribute__((noinline)) void ingest_leaf_fn(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void ingest_caller_fn(void)
{
	ingest_leaf_fn();
	__asm__ volatile("" ::: "memory");
}

static struct sample_rec rec;
static unsigned forgot, forgot_pid;

static void on_forget(void *ctx, uint32_t pid)
{
	(void)ctx;
	forgot++;
	forgot_pid = pid;
}

static const char *ksyms_file(void)
{
	return write_temp("ffffffff81000000 T entry_SYSCALL_64\n"
			  "ffffffff81000100 T do_syscall_64\n"
			  "ffffffff81000200 T ksys_read\n");
}

struct rig {
	struct profile *prof;
	struct ingest *in;
	struct filter filter;
	char kpath[64];
};

static void rig_up(struct rig *g, bool native)
{
	struct ingest_hooks hooks = { .forget_pid = on_forget };
	struct ingest_config c = { .filter = &g->filter, .native = native };

	filter__init(&g->filter);
	snprintf(g->kpath, sizeof(g->kpath), "%s", ksyms_file());
	c.kallsyms = g->kpath;
	g->prof = profile__new();
	g->in = ingest__new(g->prof, &c, &hooks);
	forgot = forgot_pid = 0;
}

static void rig_down(struct rig *g)
{
	ingest__free(g->in);
	profile__free(g->prof);
	filter__free(&g->filter);
	unlink(g->kpath);
}

static const char *name_of(const struct profile *p, uint32_t frame)
{
	return profile__str_at(p, profile__frame_at(p, frame)->name);
}

/* kernel: read ← do_syscall_64 ← entry; user: leaf ← caller, all leaf first. */
static size_t syscall_sample(struct pyebpf_sample **out, uint64_t ts)
{
	uint64_t k[] = { 0xffffffff81000210ULL, 0xffffffff81000104ULL, 0xffffffff81000008ULL };
	uint64_t u[] = { (uint64_t)(uintptr_t)ingest_leaf_fn, (uint64_t)(uintptr_t)ingest_caller_fn + 5 };
	struct pyebpf_sample *s = sample_init(&rec, (uint32_t)getpid(), (uint32_t)getpid(), ts);

	*out = s;
	return sample_native(s, k, 3, u, 2);
}

Test(ingest, native_sample_becomes_named_frames_root_first)
{
	struct rig g;
	struct pyebpf_sample *s;
	size_t size;
	struct profile_entry e;

	rig_up(&g, false);
	ingest__set_time_base(g.in, 1000);
	size = syscall_sample(&s, 1000 + 500250);
	cr_assert_eq(ingest__event(g.in, s, size), 0);
	cr_assert_eq(ingest__stats(g.in)->samples, 1);
	cr_assert_eq(ingest__stats(g.in)->bad, 0);
	cr_assert_eq(profile__nstacks(g.prof), 1);
	profile__entry(g.prof, 0, &e);
	cr_assert_eq(e.nframes, 5);
	cr_assert_str_eq(name_of(g.prof, e.frames[0]), "ingest_caller_fn");
	cr_assert_str_eq(name_of(g.prof, e.frames[1]), "ingest_leaf_fn");
	cr_assert_str_eq(name_of(g.prof, e.frames[2]), "entry_SYSCALL_64");
	cr_assert_str_eq(name_of(g.prof, e.frames[3]), "do_syscall_64");
	cr_assert_str_eq(name_of(g.prof, e.frames[4]), "ksys_read");
	cr_assert_eq(profile__frame_at(g.prof, e.frames[4])->kind, FRAME_KERNEL);
	cr_assert_eq(e.labels.pid, (uint32_t)getpid());
	cr_assert_str_eq(profile__str_at(g.prof, e.labels.comm), "unit-comm");
	/* Times are relative to the time base, kept to the microsecond. */
	struct profile_event_cursor c = { 0 };
	struct profile_event ev;
	cr_assert_eq(profile__nevents(g.prof), 1);
	cr_assert(profile__next_event(g.prof, &c, &ev));
	cr_assert_eq(ev.time_ns, 500000);
	cr_assert_not(profile__next_event(g.prof, &c, &ev));
	cr_assert_eq(ingest__processes(g.in), 1);
	cr_assert_null(ingest__native_stats(g.in));
	rig_down(&g);
}

Test(ingest, full_kernel_user_stack_is_marked_truncated_at_its_root)
{
	struct rig g;
	struct pyebpf_sample *s = sample_init(&rec, (uint32_t)getpid(), (uint32_t)getpid(), 1);
	uint64_t u[PYEBPF_MAX_STACK];
	struct profile_entry e;
	size_t size;

	for (int i = 0; i < PYEBPF_MAX_STACK; i++)
		u[i] = (uint64_t)(uintptr_t)ingest_caller_fn + 5;
	rig_up(&g, false);
	size = sample_native(s, NULL, 0, u, PYEBPF_MAX_STACK);
	ingest__event(g.in, s, size);
	profile__entry(g.prof, 0, &e);
	cr_assert_eq(e.nframes, PYEBPF_MAX_STACK + 1);
	cr_assert_str_eq(name_of(g.prof, e.frames[0]), "[truncated]");
	cr_assert_eq(profile__frame_at(g.prof, e.frames[0])->kind, FRAME_MARK);
	rig_down(&g);
}

Test(ingest, malformed_events_are_counted_and_add_nothing)
{
	struct rig g;
	struct pyebpf_sample *s;
	size_t size;

	rig_up(&g, false);
	size = syscall_sample(&s, 1);
	ingest__event(g.in, s, 10);       /* shorter than the header */
	ingest__event(g.in, s, size - 8); /* the last user frame cut */
	s->kstack_len = 1000;
	ingest__event(g.in, s, size);
	s->kstack_len = 3;
	s->h.type = 99;
	ingest__event(g.in, s, size);
	s->h.type = PYEBPF_EVENT_SAMPLE;
	/* Registers and a stack copy, but --native is off. */
	s->flags = PYEBPF_SAMPLE_UREGS;
	ingest__event(g.in, s, sizeof(rec));
	cr_assert_eq(ingest__stats(g.in)->bad, 5);
	cr_assert_eq(ingest__stats(g.in)->samples, 3);
	cr_assert_eq(profile__total(g.prof), 0);
	rig_down(&g);
}

/* One rig per filter: an ingest names each raw stack once, under its filter. */
Test(ingest, filters_count_what_they_leave_out)
{
	struct rig g;
	struct pyebpf_sample *s;
	size_t size;
	uint32_t other = 1;
	struct profile_entry e;

	rig_up(&g, false);
	g.filter.pids = &other; /* --pid 1: not us */
	g.filter.npids = 1;
	size = syscall_sample(&s, 1);
	ingest__event(g.in, s, size);
	cr_assert_eq(ingest__stats(g.in)->filtered, 1);
	g.filter.npids = 0; /* not ours to free */
	g.filter.pids = NULL;
	rig_down(&g);

	rig_up(&g, false);
	g.filter.python_only = true; /* no Python frames: the sample goes */
	ingest__event(g.in, s, size);
	ingest__event(g.in, s, size); /* the second time from the stack cache */
	cr_assert_eq(ingest__stats(g.in)->filtered, 2);
	cr_assert_eq(profile__total(g.prof), 0);
	rig_down(&g);

	rig_up(&g, false);
	g.filter.no_kernel = true;
	ingest__event(g.in, s, size);
	ingest__event(g.in, s, size);
	cr_assert_eq(profile__total(g.prof), 2);
	cr_assert_eq(profile__nstacks(g.prof), 1);
	profile__entry(g.prof, 0, &e);
	cr_assert_eq(e.nframes, 2);
	rig_down(&g);
}

Test(ingest, a_stack_seen_before_comes_from_the_cache_until_the_process_execs)
{
	struct rig g;
	struct pyebpf_sample *s;
	struct pyebpf_event_header h = { .type = PYEBPF_EVENT_EXEC, .pid = (uint32_t)getpid() };
	struct profile_entry e;
	size_t size;
	uint64_t named, cached;

	rig_up(&g, false);
	size = syscall_sample(&s, 1);
	ingest__event(g.in, s, size);
	ingest__event(g.in, s, size);
	ingest__stack_cache_counts(g.in, &named, &cached);
	cr_assert_eq(named, 1);
	cr_assert_eq(cached, 1);
	s->stack[0]++; /* another kernel leaf: another stack */
	ingest__event(g.in, s, size);
	s->stack[0]--;
	ingest__event(g.in, &h, sizeof(h)); /* a new image: named again */
	ingest__event(g.in, s, size);
	ingest__stack_cache_counts(g.in, &named, &cached);
	cr_assert_eq(named, 3);
	cr_assert_eq(cached, 1);
	cr_assert_eq(profile__total(g.prof), 4);
	profile__entry(g.prof, 0, &e);
	cr_assert_eq(profile__nstacks(g.prof), 1);
	cr_assert_eq(e.count, 4, "raw stacks named alike, cached or named again, are one entry");
	rig_down(&g);
}

Test(ingest, exec_and_exit_forget_the_process_in_bpf_too)
{
	struct rig g;
	struct pyebpf_event_header h = { .type = PYEBPF_EVENT_EXEC, .pid = (uint32_t)getpid() };
	struct pyebpf_sample *s;
	size_t size;

	rig_up(&g, false);
	size = syscall_sample(&s, 1);
	ingest__event(g.in, s, size);
	ingest__event(g.in, &h, sizeof(h));
	cr_assert_eq(forgot, 1);
	cr_assert_eq(forgot_pid, (uint32_t)getpid());
	h.type = PYEBPF_EVENT_EXIT;
	ingest__event(g.in, &h, sizeof(h));
	ingest__gc(g.in, now_ns()); /* within the grace period: kept for late samples */
	cr_assert_eq(forgot, 1);
	ingest__gc(g.in, now_ns() + 10 * 1000000000ULL);
	cr_assert_eq(forgot, 2);
	rig_down(&g);
}

Test(ingest, summary_names_every_counter)
{
	struct rig g;
	uint64_t counters[PYEBPF_CNT__COUNT] = { 0 };
	struct record_summary sum = { .elapsed_ns = 2000000000ULL,
				      .freq = 99,
				      .ncpus = 2,
				      .counters = counters,
				      .timer_stats = true,
				      .timer_runs = 10,
				      .timer_run_ns = 40000000 };
	struct pyebpf_sample *s;
	char *buf = NULL;
	size_t len = 0, size;
	FILE *f = open_memstream(&buf, &len);

	for (int i = 0; i < PYEBPF_CNT__COUNT; i++)
		cr_assert_str_neq(counter_name((enum pyebpf_counter)i), "unnamed counter", "counter %d", i);
	rig_up(&g, false);
	size = syscall_sample(&s, 1);
	ingest__event(g.in, s, size);
	ingest__event(g.in, s, 3);
	counters[PYEBPF_CNT_RB_FULL] = 4;
	counters[PYEBPF_CNT_PY_TRUNCATED] = 2;
	/* 2 samples taken in 7 us of BPF; 40 ms of the timer program in 2 s on 2 CPUs: 1%. */
	counters[PYEBPF_CNT_TAKEN] = 2;
	counters[PYEBPF_CNT_TAKEN_NS] = 7000;
	sum.ingest = g.in;
	summary_print(f, &sum);
	fclose(f);
	cr_assert(strstr(buf, "pyebpf: 1 samples from 1 process (0 Python) in 2.0 s (99 Hz on 2 CPUs), 4 lost\n"), "%s",
		  buf);
	cr_assert(strstr(buf, ", BPF 3.50 us per sample taken (timer program 1.000% of the CPUs, 10 runs)\n"), "%s",
		  buf);
	cr_assert_null(strstr(buf, "timer samples taken"), "a sum printed as a counter: %s", buf);
	cr_assert(strstr(buf, "pyebpf: Python stacks deeper than 1024 frames (marked [truncated]): 2\n"), "%s", buf);
	cr_assert(strstr(buf, "pyebpf: malformed events ignored: 1\n"), "%s", buf);
	free(buf);
	rig_down(&g);
}

static struct pyebpf_pyframe pf(uint64_t code, int32_t lasti)
{
	return (struct pyebpf_pyframe){ .code = code, .globals = 0x9000, .lasti = lasti };
}

/* leaf a, b, then the loop c -> d -> e -> c ...: kept through one turn. */
Test(ingest, a_looping_chain_is_kept_for_one_turn)
{
	struct pyebpf_pyframe f[11] = { pf(1, 0), pf(2, 4) };
	uint64_t loop[] = { 3, 4, 5 };

	for (int i = 2; i < 11; i++)
		f[i] = pf(loop[(i - 2) % 3], 8);
	cr_assert_eq(ingest_frames_before_loop(f, 11, 3), 5);
	/* The loop from the leaf on: one turn. */
	for (int i = 0; i < 11; i++)
		f[i] = pf(loop[i % 3], 8);
	cr_assert_eq(ingest_frames_before_loop(f, 11, 3), 3);
	/* No length given, or longer than what was read: everything stays. */
	cr_assert_eq(ingest_frames_before_loop(f, 11, 0), 11);
	cr_assert_eq(ingest_frames_before_loop(f, 11, 11), 11);
}

/* A frame-pointer chain that leaves the mapped files (code without frame
 * pointers) ends there, marked once, and the summary counts it. */
Test(ingest, frame_pointer_chain_into_nowhere_is_cut_and_counted)
{
	struct rig g;
	struct pyebpf_sample *s = sample_init(&rec, (uint32_t)getpid(), (uint32_t)getpid(), 1);
	uint64_t u[6] = {
		(uint64_t)(uintptr_t)ingest_leaf_fn, (uint64_t)(uintptr_t)ingest_caller_fn + 5, 0x10, 0x20, 0x30, 0x40
	};
	struct profile_entry e;
	size_t size, nmods;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	uint64_t counters[PYEBPF_CNT__COUNT] = { 0 };
	struct record_summary sum = { .counters = counters };

	rig_up(&g, false);
	size = sample_native(s, NULL, 0, u, 6);
	ingest__event(g.in, s, size);
	ingest__event(g.in, s, size);
	profile__entry(g.prof, 0, &e);
	cr_assert_eq(e.nframes, 3, "the caller, the leaf and one mark: %u", e.nframes);
	cr_assert_str_eq(name_of(g.prof, e.frames[0]), "[no frame pointers]");
	cr_assert_str_eq(name_of(g.prof, e.frames[1]), "ingest_caller_fn");
	cr_assert_eq(ingest__stats(g.in)->fp_cut, 2);
	cr_assert_eq(ingest__stats(g.in)->no_symbol, 0);
	const struct profile_module *m = profile__modules(g.prof, &nmods);
	cr_assert_geq(nmods, 1);
	/* Its file is noted with its extent, but not as the executable: that
	 * is this very program, and pyebpf never profiles itself. */
	cr_assert(!m[0].exe && m[0].limit > m[0].start, "exe %d, [%#lx, %#lx)", m[0].exe, m[0].start, m[0].limit);
	sum.ingest = g.in;
	summary_print(f, &sum);
	fclose(f);
	cr_assert(strstr(buf, "pyebpf: native stacks cut where frame pointers end (marked [no frame pointers]): 2; "
			      "--native unwinds past them\n"),
		  "%s", buf);
	free(buf);
	rig_down(&g);
}
