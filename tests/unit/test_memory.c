/* --mode memory's pure logic: the ledger of what is held, the one-value views, pprof's heap types both ways. */
#include "unit.h"

#include <inttypes.h>

#include "base/util.h"
#include "profile/mem_view.h"
#include "profile/profile.h"
#include "read/pprof.h"
#include "record/mem_ledger.h"
#include "record/page_set.h"
#include "write/pprof.h"

#define KIB 1024ULL
#define MIB (1024 * KIB)

/* Labels of a process and thread. */
static struct sample_labels labels(uint32_t pid)
{
	return (struct sample_labels){ .pid = pid, .tid = pid };
}

struct held {
	uint64_t by_frame[8]; /* points held by the site whose one frame is i */
	size_t sites;
};

static void collect(void *ctx, const struct sample_labels *l, const uint32_t *frames, uint32_t n, uint64_t points)
{
	struct held *h = ctx;

	(void)l;
	cr_assert_eq(n, 1);
	cr_assert_lt(frames[0], 8);
	h->by_frame[frames[0]] += points;
	h->sites++;
}

static struct held held_of(const struct mem_ledger *m)
{
	struct held h = { 0 };

	mem_ledger__held(m, collect, &h);
	return h;
}

/* munmap, madvise and brk take off the samples in their range, whoever gives it back. */
Test(mem_ledger, given_back_by_range)
{
	struct mem_ledger *m = mem_ledger__new();
	struct sample_labels a = labels(10);
	const uint32_t leak[] = { 1 }, churn[] = { 2 };

	for (uint64_t i = 0; i < 4; i++) /* 4 pages of leak at 1 MiB, 4 of churn at 64 MiB */
		mem_ledger__grow(m, &a, 1 * MIB + i * 4 * KIB, 1, leak, 1);
	for (uint64_t i = 0; i < 4; i++)
		mem_ledger__grow(m, &a, 64 * MIB + i * 4 * KIB + 123 /* inside the page */, 2, churn, 1);
	cr_assert_eq(mem_ledger__held_points(m), 4 + 8);
	mem_ledger__release(m, 10, 64 * MIB, 8 * KIB); /* two of churn's pages */
	cr_assert_eq(held_of(m).by_frame[2], 4);
	mem_ledger__release(m, 11, 1 * MIB, 1 * MIB); /* another process: nothing of ours */
	cr_assert_eq(held_of(m).by_frame[1], 4);
	mem_ledger__release(m, 10, 64 * MIB, UINT64_MAX); /* a length that wraps: to the end */
	struct held h = held_of(m);
	cr_assert_eq(h.by_frame[1], 4);
	cr_assert_eq(h.by_frame[2], 0);
	cr_assert_eq(h.sites, 1, "a site that holds nothing is not listed");

	size_t n;
	const struct mem_proc *p = mem_ledger__procs(m, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(p[0].grown, 12);
	cr_assert_eq(p[0].returned, 8);
	mem_ledger__free(m);
}

/* A range far larger than the samples held is found by going through them, not page by page. */
Test(mem_ledger, huge_range_and_exec)
{
	struct mem_ledger *m = mem_ledger__new();
	struct sample_labels a = labels(10), b = labels(20);
	const uint32_t f[] = { 3 };

	mem_ledger__grow(m, &a, 0x7f0000000000ULL, 1, f, 1);
	mem_ledger__grow(m, &b, 0x7f0000000000ULL, 1, f, 1); /* same address, another process */
	mem_ledger__release(m, 10, 0, 0x7fffffffffffULL);    /* all of 10's address space */
	cr_assert_eq(held_of(m).by_frame[3], 1);
	mem_ledger__forget(m, 20); /* exec: its memory is gone */
	cr_assert_eq(mem_ledger__held_points(m), 0);
	mem_ledger__free(m);
}

/* mremap moves the samples with the memory; a shrink gives back what is cut off. */
Test(mem_ledger, moved_by_mremap)
{
	struct mem_ledger *m = mem_ledger__new();
	struct sample_labels a = labels(10);
	const uint32_t f[] = { 4 };

	for (uint64_t i = 0; i < 4; i++)
		mem_ledger__grow(m, &a, 1 * MIB + i * 4 * KIB, 1, f, 1);
	/* Moved to 2 MiB, and to half its length: two pages go. */
	mem_ledger__move(m, 10, 1 * MIB, 16 * KIB, 2 * MIB, 8 * KIB);
	cr_assert_eq(mem_ledger__held_points(m), 2);
	mem_ledger__release(m, 10, 1 * MIB, 16 * KIB); /* the old place holds nothing now */
	cr_assert_eq(mem_ledger__held_points(m), 2);
	mem_ledger__release(m, 10, 2 * MIB, 8 * KIB);
	cr_assert_eq(mem_ledger__held_points(m), 0);
	mem_ledger__free(m);
}

/* A process that exits keeps what it held at its exit as what is held (until
 * that was read: tidy), and the most it held at once; a page sampled again
 * was given back unseen; its pid used again is another process. */
Test(mem_ledger, exited_keeps_what_it_held_at_its_end_its_pid_another_process)
{
	struct mem_ledger *m = mem_ledger__new();
	struct sample_labels a = labels(10);
	const uint32_t one[] = { 1 }, two[] = { 2 };
	size_t n;

	mem_ledger__grow(m, &a, 1 * MIB, 3, one, 1);
	mem_ledger__grow(m, &a, 1 * MIB, 2, two, 1); /* mapped again at the same page */
	struct held h = held_of(m);
	cr_assert_eq(h.by_frame[1], 0);
	cr_assert_eq(h.by_frame[2], 2);
	mem_ledger__grow(m, &a, 2 * MIB, 4, one, 1);
	mem_ledger__exited(m, 10);
	cr_assert_eq(mem_ledger__held_points(m), 6, "what it held at its exit stays held");
	h = held_of(m);
	cr_assert_eq(h.by_frame[1], 4);
	cr_assert_eq(h.by_frame[2], 2);
	const struct mem_proc *p = mem_ledger__procs(m, &n);
	cr_assert_eq(n, 1);
	cr_assert(p[0].exited);
	cr_assert_eq(p[0].peak, 6, "the most held at once: 2 + 4");
	cr_assert_eq(p[0].grown, 9);
	cr_assert_eq(p[0].returned, 3, "only the page replaced went back");
	/* A new process of that pid gives back a range the ended one held: it grew it unseen, not ours. */
	mem_ledger__release(m, 10, 0, 4 * MIB);
	cr_assert_eq(mem_ledger__held_points(m), 6);
	cr_assert_not(mem_ledger__holds(m, 10, 0, 4 * MIB), "an ended process holds nothing to give back");
	/* ... and grows where the ended one held: a record (and sites) of its own, the ended one's kept. */
	mem_ledger__grow(m, &a, 2 * MIB, 1, one, 1);
	p = mem_ledger__procs(m, &n);
	cr_assert_eq(n, 2);
	cr_assert(p[0].exited);
	cr_assert_eq(p[0].grown, 9);
	cr_assert_eq(p[0].returned, 3);
	cr_assert_eq(p[0].peak, 6);
	cr_assert_not(p[1].exited);
	cr_assert_eq(p[1].pid, 10);
	cr_assert_eq(p[1].grown, 1);
	cr_assert_eq(p[1].peak, 1);
	h = held_of(m);
	cr_assert_eq(h.by_frame[1], 5, "the ended one's 4 and the new one's 1");
	cr_assert_eq(h.sites, 3, "same labels and stack, two processes: two sites");
	mem_ledger__release(m, 10, 2 * MIB, 4096);
	cr_assert_eq(mem_ledger__procs(m, &n)[1].returned, 1);
	cr_assert_eq(mem_ledger__procs(m, &n)[0].returned, 3, "the ended one gave nothing back");
	cr_assert_eq(mem_ledger__held_points(m), 6);
	/* What was held is read: the ended one lets its memory go, its figures stay. */
	mem_ledger__tidy(m);
	cr_assert_eq(mem_ledger__held_points(m), 0);
	p = mem_ledger__procs(m, &n);
	cr_assert_eq(p[0].grown - p[0].returned, 6, "the summary still says it held 6 at its end");
	mem_ledger__free(m);
}

struct by_site {
	uint64_t v[8];
};

static void collect_any(void *ctx, const struct sample_labels *l, const uint32_t *frames, uint32_t n, uint64_t points)
{
	struct by_site *b = ctx;

	(void)l;
	(void)n;
	b->v[frames[0]] += points;
}

static struct by_site peak_of(const struct mem_ledger *m)
{
	struct by_site b = { 0 };

	mem_ledger__peak(m, collect_any, &b);
	return b;
}

/* The peak: each stack's held at the moment its process held most, not each stack's own most. */
Test(mem_ledger, peak_is_the_high_water_mark_by_stack)
{
	struct mem_ledger *m = mem_ledger__new();
	struct sample_labels a = labels(10), b = labels(20);
	const uint32_t one[] = { 1 }, two[] = { 2 }, three[] = { 3 }, four[] = { 4 };
	struct by_site pk;

	mem_ledger__grow(m, &a, 1 * MIB, 3, one, 1);
	mem_ledger__grow(m, &a, 2 * MIB, 4, two, 1); /* 7: the mark */
	mem_ledger__release(m, 10, 1 * MIB, 4096);
	mem_ledger__grow(m, &a, 3 * MIB, 2, three, 1); /* 6: below it */
	pk = peak_of(m);
	cr_assert_eq(pk.v[1], 3);
	cr_assert_eq(pk.v[2], 4);
	cr_assert_eq(pk.v[3], 0, "grew after the mark, below it");
	mem_ledger__grow(m, &a, 4 * MIB, 2, three, 1); /* 8: a new mark */
	pk = peak_of(m);
	cr_assert_eq(pk.v[1], 0, "given back before the new mark");
	cr_assert_eq(pk.v[2], 4);
	cr_assert_eq(pk.v[3], 4);
	/* Another process's mark is its own: its growth and release do not move 10's. */
	mem_ledger__grow(m, &b, 1 * MIB, 5, four, 1);
	mem_ledger__release(m, 20, 0, UINT64_MAX);
	mem_ledger__release(m, 10, 0, UINT64_MAX);
	cr_assert_eq(mem_ledger__held_points(m), 0);
	pk = peak_of(m);
	cr_assert_eq(pk.v[2], 4);
	cr_assert_eq(pk.v[3], 4);
	cr_assert_eq(pk.v[4], 5);
	cr_assert_eq(mem_ledger__procs(m, &(size_t){ 0 })[0].peak, 8);
	/* After what is held was read, a peak starts from what is held then (an interval's is its own). */
	mem_ledger__tidy(m);
	pk = peak_of(m);
	cr_assert_eq(pk.v[2] + pk.v[3] + pk.v[4], 0);
	mem_ledger__grow(m, &a, 5 * MIB, 1, one, 1);
	pk = peak_of(m);
	cr_assert_eq(pk.v[1], 1);
	cr_assert_eq(mem_ledger__procs(m, &(size_t){ 0 })[0].peak, 8, "the summary's most held at once stays");
	mem_ledger__free(m);
}

/* Given back as it ends (an interpreter's teardown): held at its end if it exits; given back after all
 * if it still runs when what is held is read. */
Test(mem_ledger, given_back_as_it_ends)
{
	struct mem_ledger *m = mem_ledger__new();
	struct sample_labels a = labels(10), b = labels(20);
	const uint32_t one[] = { 1 }, two[] = { 2 };
	size_t n;

	for (uint64_t i = 0; i < 4; i++) {
		mem_ledger__grow(m, &a, 1 * MIB + i * 4 * KIB, 1, one, 1);
		mem_ledger__grow(m, &b, 1 * MIB + i * 4 * KIB, 1, two, 1);
	}
	mem_ledger__release(m, 10, 1 * MIB, 4 * KIB); /* before its end: gone */
	cr_assert(mem_ledger__holds(m, 10, 1 * MIB, 8 * KIB));
	cr_assert_not(mem_ledger__holds(m, 10, 1 * MIB, 4 * KIB));
	mem_ledger__release_ending(m, 10, 0, UINT64_MAX);
	mem_ledger__release_ending(m, 20, 1 * MIB, 8 * KIB);
	cr_assert_eq(mem_ledger__held_points(m), 3 + 4, "still held");
	cr_assert_not(mem_ledger__holds(m, 10, 0, UINT64_MAX), "nothing more to give back");
	mem_ledger__exited(m, 10);
	/* 20 still runs: it had not ended; one of its pages is mapped anew meanwhile. */
	mem_ledger__grow(m, &b, 1 * MIB + 4 * KIB, 1, two, 1);
	mem_ledger__settle(m);
	struct held h = held_of(m);
	cr_assert_eq(h.by_frame[1], 3, "10's at its end");
	cr_assert_eq(h.by_frame[2], 3, "20's: two pages not given back, one mapped again (%" PRIu64 ")", h.by_frame[2]);
	const struct mem_proc *p = mem_ledger__procs(m, &n);
	cr_assert_eq(p[0].ending, 3);
	cr_assert_eq(p[0].returned, 1);
	cr_assert_eq(p[1].ending, 0);
	cr_assert_eq(p[1].returned, 2);
	mem_ledger__free(m);
}

/* A memory profile: 3 points grown under "leak" (2 still held), 5 under "churn" (none held); at the
 * peak, 3 under leak and 2 under churn. */
static struct profile *memory_profile(void)
{
	struct profile *p = profile__new();
	struct sample_labels l = labels(7);
	struct frame leak = { .kind = FRAME_PYTHON, .name = profile__str(p, "leak"), .line = 3 },
		     churn = { .kind = FRAME_PYTHON, .name = profile__str(p, "churn"), .line = 9 };
	uint32_t fl[] = { profile__frame(p, &leak) }, fc[] = { profile__frame(p, &churn) };

	l.comm = profile__str(p, "python3");
	profile__meta(p)->mem_sample_bytes = 512 * KIB;
	profile__add_at(p, &l, fl, 1, 3, 1000);
	profile__add_at(p, &l, fc, 1, 5, 2000);
	l.flags |= LABEL_MEM_HELD;
	profile__add(p, &l, fl, 1, 2);
	l.flags ^= LABEL_MEM_HELD | LABEL_MEM_PEAK;
	profile__add(p, &l, fl, 1, 3);
	profile__add(p, &l, fc, 1, 2);
	return p;
}

static uint64_t total_of(const struct profile *p, const char *name)
{
	struct profile_entry e;
	size_t pos = 0;
	uint64_t n = 0;

	while (profile__next(p, &pos, &e))
		if (!strcmp(profile__str_at(p, profile__frame_at(p, e.frames[0])->name), name))
			n += e.count;
	return n;
}

Test(mem_view, one_value_in_bytes_or_points)
{
	struct profile *p = memory_profile();
	struct {
		const char *name;
		uint64_t leak, churn;
		int unit;
	} want[] = {
		{ "inuse_space", 2 * 512 * KIB, 0, PROFILE_UNIT_BYTES },
		{ "alloc_space", 3 * 512 * KIB, 5 * 512 * KIB, PROFILE_UNIT_BYTES },
		{ "inuse_objects", 2, 0, PROFILE_UNIT_OBJECTS },
		{ "alloc_objects", 3, 5, PROFILE_UNIT_OBJECTS },
		{ "peak_space", 3 * 512 * KIB, 2 * 512 * KIB, PROFILE_UNIT_BYTES },
		{ "peak_objects", 3, 2, PROFILE_UNIT_OBJECTS },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		enum mem_value v;

		cr_assert_eq(mem_value_parse(want[i].name, &v), 0);
		cr_assert_str_eq(mem_value_name(v), want[i].name);
		struct profile *view = mem_view(p, v);

		cr_assert_eq(total_of(view, "leak"), want[i].leak, "%s", want[i].name);
		cr_assert_eq(total_of(view, "churn"), want[i].churn, "%s", want[i].name);
		cr_assert_eq(profile__meta_of(view)->value_unit, want[i].unit);
		profile__free(view);
	}
	enum mem_value v;
	cr_assert_eq(mem_value_parse("heap", &v), -1);
	profile__free(p);
}

/* pprof as Go's heap profiles and the peak: the six types, space in bytes, and back to the same points. */
Test(mem_view, pprof_heap_types_both_ways)
{
	struct profile *p = memory_profile(), *back;
	uint8_t *buf;
	size_t len;
	char why[256];
	struct pprof_opts o = { 0 };

	cr_assert_eq(pprof__write_mem(p, &o, &buf, &len), 0);
	back = pprof__read(buf, len, why, sizeof(why));
	cr_assert(back, "%s", why);
	cr_assert_eq(profile__meta_of(back)->mem_sample_bytes, 512 * KIB);
	for (int k = 0; k <= MEM_PEAK_OBJECTS; k++) {
		struct profile *a = mem_view(p, (enum mem_value)k), *b = mem_view(back, (enum mem_value)k);

		cr_assert_gt(total_of(a, "leak"), 0, "%s", mem_value_name((enum mem_value)k));

		cr_assert_eq(total_of(a, "leak"), total_of(b, "leak"), "%s", mem_value_name((enum mem_value)k));
		cr_assert_eq(total_of(a, "churn"), total_of(b, "churn"), "%s", mem_value_name((enum mem_value)k));
		profile__free(a);
		profile__free(b);
	}
	free(buf);
	profile__free(back);
	profile__free(p);
}

Test(mem_view, sizes_for_people)
{
	char b[32];

	cr_assert_str_eq(human_bytes(300, b, sizeof(b)), "300 B");
	cr_assert_str_eq(human_bytes(512 * KIB, b, sizeof(b)), "512 KiB");
	cr_assert_str_eq(human_bytes(8 * MIB + MIB / 2, b, sizeof(b)), "8.50 MiB");
	cr_assert_str_eq(human_bytes(245 * MIB + MIB / 2, b, sizeof(b)), "246 MiB");
	cr_assert_str_eq(human_bytes(1200 * MIB, b, sizeof(b)), "1.17 GiB");
}

/* A range that ends at the top of the address space (a hostile or wrapped length) ends there. */
Test(mem_ledger, range_at_the_top_of_the_address_space)
{
	struct mem_ledger *m = mem_ledger__new();
	struct sample_labels a = labels(10);
	const uint32_t f[] = { 1 };

	mem_ledger__grow(m, &a, 0xfffffffffffff000ULL, 1, f, 1);
	mem_ledger__release(m, 10, 0xffffffffffffff00ULL, 0x42);
	cr_assert_eq(mem_ledger__held_points(m), 0);
	mem_ledger__grow(m, &a, 0xfffffffffffff000ULL, 1, f, 1);
	mem_ledger__move(m, 10, 0xfffffffffffff000ULL, 4096, 0xfffffffffffff000ULL, 8192);
	cr_assert_eq(mem_ledger__held_points(m), 1);
	mem_ledger__free(m);
}

/* Stacks that hold nothing are forgotten when what is held has been read; their slots serve new ones. */
Test(mem_ledger, empty_sites_forgotten_and_reused)
{
	struct mem_ledger *m = mem_ledger__new();
	struct sample_labels a = labels(10);
	const uint32_t one[] = { 1 }, two[] = { 2 }, three[] = { 3 };

	mem_ledger__grow(m, &a, 1 * MIB, 1, one, 1);
	mem_ledger__grow(m, &a, 2 * MIB, 1, two, 1);
	mem_ledger__release(m, 10, 1 * MIB, 4 * KIB);
	mem_ledger__tidy(m);
	mem_ledger__grow(m, &a, 3 * MIB, 4, three, 1);
	mem_ledger__grow(m, &a, 4 * MIB, 2, one, 1); /* the forgotten stack, anew */
	struct held h = held_of(m);
	cr_assert_eq(h.by_frame[1], 2);
	cr_assert_eq(h.by_frame[2], 1);
	cr_assert_eq(h.by_frame[3], 4);
	cr_assert_eq(h.sites, 3);
	mem_ledger__release(m, 10, 0, 8 * MIB);
	cr_assert_eq(mem_ledger__held_points(m), 0);
	mem_ledger__free(m);
}

/* A sample of no point (outside bytes: BPF sends none) holds nothing and leaves no page behind. */
Test(mem_ledger, a_sample_of_no_point)
{
	struct mem_ledger *m = mem_ledger__new();
	struct sample_labels a = labels(10);
	const uint32_t f[] = { 1 };

	mem_ledger__grow(m, &a, 1 * MIB, 0, f, 1);
	mem_ledger__tidy(m);
	mem_ledger__release(m, 10, 0, 4 * MIB);
	cr_assert_eq(mem_ledger__held_points(m), 0);
	mem_ledger__free(m);
}

/* A release costs what it gives back, not what the ledger holds: 100,000 releases of ranges that
 * hold nothing (another process's whole address space, holes between one's pages) beside 100,000
 * sampled pages. Walking every page for each would take minutes; the timeout says it must not. */
Test(mem_ledger, releases_of_nothing_cost_nothing_beside_many_pages, .timeout = 20)
{
	struct mem_ledger *m = mem_ledger__new();
	struct sample_labels a = labels(10);
	const uint32_t f[] = { 1 };
	const uint64_t base = 0x7f0000000000ULL, step = 512 * KIB;

	for (uint64_t i = 0; i < 100000; i++)
		mem_ledger__grow(m, &a, base + i * step, 1, f, 1);
	for (uint64_t i = 0; i < 100000; i++) {
		mem_ledger__release(m, 11, 0, UINT64_MAX);                           /* pid 11 holds nothing */
		mem_ledger__release(m, 10, base + i * step + 4096, step - 2 * 4096); /* the hole after page i */
		mem_ledger__move(m, 10, base + i * step + 4096, 4096, 0x1000, 4096); /* nothing there either */
	}
	cr_assert_eq(mem_ledger__held_points(m), 100000);
	/* Half of them back in one range, then the rest page by page from the top. */
	mem_ledger__release(m, 10, base, 50000 * step);
	cr_assert_eq(mem_ledger__held_points(m), 50000);
	for (uint64_t i = 100000; i-- > 50000;)
		mem_ledger__release(m, 10, base + i * step, 4096);
	cr_assert_eq(mem_ledger__held_points(m), 0);
	mem_ledger__free(m);
}

/* A host's short-lived processes: past MEM_LEDGER_PROCS_MAX, ended ones are summed, the running kept. */
Test(mem_ledger, ended_processes_summed_past_the_bound)
{
	struct mem_ledger *m = mem_ledger__new();
	const uint32_t f[] = { 1 };
	uint64_t grown = 0;
	size_t n, nrest;

	/* pid 1 runs and holds; pids 2.. grow 1..3 points, give them back before they end. */
	struct sample_labels keep = labels(1);
	mem_ledger__grow(m, &keep, 0x1000, 5, f, 1);
	for (uint32_t pid = 2; pid < 2 + MEM_LEDGER_PROCS_MAX + 10; pid++) {
		struct sample_labels l = labels(pid);
		uint32_t points = 1 + pid % 3;

		mem_ledger__grow(m, &l, 0x2000, points, f, 1);
		grown += points;
		mem_ledger__release(m, pid, 0, UINT64_MAX);
		mem_ledger__exited(m, pid);
	}
	const struct mem_proc *procs = mem_ledger__procs(m, &n), *rest = mem_ledger__forgotten(m, &nrest);
	uint64_t kept_grown = 0;
	bool running = false;

	cr_assert_leq(n, MEM_LEDGER_PROCS_MAX, "%zu processes kept", n);
	cr_assert_eq(n + nrest, MEM_LEDGER_PROCS_MAX + 11, "every process counted once");
	for (size_t i = 0; i < n; i++) {
		if (procs[i].pid == 1) {
			running = !procs[i].exited && procs[i].grown == 5;
			continue;
		}
		kept_grown += procs[i].grown;
		/* Forgotten when pid MAX + 1 ended (one more than the bound): those that grew least, first. */
		if (procs[i].pid <= MEM_LEDGER_PROCS_MAX + 1)
			cr_assert_geq(procs[i].grown, 2, "the ended that grew least go first: pid %u grew 1",
				      procs[i].pid);
	}
	cr_assert(running, "the running process is kept");
	cr_assert_eq(kept_grown + rest->grown, grown);
	cr_assert_eq(rest->returned, rest->grown);
	cr_assert_eq(mem_ledger__held_points(m), 5);
	/* Its pages are still found by range after the processes around it moved. */
	mem_ledger__release(m, 1, 0, 0x2000);
	cr_assert_eq(mem_ledger__held_points(m), 0);

	mem_ledger__free(m);

	/* Running processes past the bound are all kept; a few ending among them are kept too (not worth
	 * a walk of every process at each exit). */
	m = mem_ledger__new();
	for (uint32_t pid = 100000; pid < 100000 + MEM_LEDGER_PROCS_MAX + 100; pid++) {
		struct sample_labels l = labels(pid);

		mem_ledger__grow(m, &l, 0x3000, 1, f, 1);
	}
	for (uint32_t pid = 100000; pid < 100010; pid++)
		mem_ledger__exited(m, pid);
	mem_ledger__procs(m, &n);
	cr_assert_eq(n, MEM_LEDGER_PROCS_MAX + 100);
	cr_assert_eq(mem_ledger__held_points(m), MEM_LEDGER_PROCS_MAX + 100,
		     "those that ended hold theirs at their end");
	mem_ledger__tidy(m);
	cr_assert_eq(mem_ledger__held_points(m), MEM_LEDGER_PROCS_MAX + 90, "... until it was read");
	mem_ledger__free(m);
}

/* mremap onto pages already sampled (MREMAP_FIXED): the kernel unmapped them first, so they are given
 * back, though nothing moved over them; resized in place, what is past the new end goes. */
Test(mem_ledger, mremap_fixed_over_held_pages_and_in_place)
{
	struct mem_ledger *m = mem_ledger__new();
	struct sample_labels a = labels(10);
	const uint32_t f[] = { 4 };

	mem_ledger__grow(m, &a, 1 * MIB, 1, f, 1);
	for (uint64_t i = 0; i < 4; i++)
		mem_ledger__grow(m, &a, 2 * MIB + i * 4 * KIB, 1, f, 1);
	/* 4 KiB at 1 MiB onto 2 MiB, 16 KiB long: four held pages there are replaced by one. */
	mem_ledger__move(m, 10, 1 * MIB, 4 * KIB, 2 * MIB, 16 * KIB);
	cr_assert_eq(mem_ledger__held_points(m), 1);
	/* A move from where nothing is sampled still unmaps what it lands on. */
	mem_ledger__grow(m, &a, 8 * MIB, 1, f, 1);
	mem_ledger__move(m, 10, 4 * MIB, 4 * KIB, 8 * MIB, 4 * KIB);
	cr_assert_eq(mem_ledger__held_points(m), 1);
	/* In place, to half its length: the page past it goes, the first stays. */
	mem_ledger__grow(m, &a, 2 * MIB + 4 * KIB, 1, f, 1);
	mem_ledger__move(m, 10, 2 * MIB, 8 * KIB, 2 * MIB, 4 * KIB);
	cr_assert_eq(mem_ledger__held_points(m), 1);
	mem_ledger__release(m, 10, 2 * MIB, 4 * KIB);
	cr_assert_eq(mem_ledger__held_points(m), 0);
	mem_ledger__free(m);
}

/* Memory grown downwards (mmap's arenas come below the last) and given back from the bottom, 200,000
 * sampled pages: each page added or taken moves a chunk, not every page held (which would move
 * 10^11 pages' worth of bytes, minutes; the timeout says it must not). */
Test(mem_ledger, grown_downwards_and_given_back_from_the_bottom, .timeout = 20)
{
	struct mem_ledger *m = mem_ledger__new();
	struct sample_labels a = labels(10);
	const uint32_t f[] = { 1 };
	const uint64_t top = 0x7f0000000000ULL, step = 64 * KIB, n = 200000;

	for (uint64_t i = 1; i <= n; i++)
		mem_ledger__grow(m, &a, top - i * step, 1, f, 1);
	cr_assert_eq(mem_ledger__held_points(m), n);
	for (uint64_t i = n; i >= 1; i--)
		mem_ledger__release(m, 10, top - i * step, 4096);
	cr_assert_eq(mem_ledger__held_points(m), 0);
	mem_ledger__free(m);
}

/* The page set against a plain sorted list: random adds and range takes, then every page in order. */
static uint64_t taken_sum;

static void sum_taken(void *ctx, const struct page *pg)
{
	(void)ctx;
	taken_sum += pg->value;
}

Test(page_set, random_adds_and_takes_match_a_sorted_list)
{
	struct page_set s = { 0 };
	static uint64_t ref[20000];
	size_t nref = 0;
	uint64_t seed = 42;

	for (int round = 0; round < 200000; round++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		uint64_t addr = ((seed >> 33) % 50000) * 4096;

		if ((seed >> 20) % 4) { /* add */
			bool created, had = false;
			size_t at = 0;

			while (at < nref && ref[at] < addr)
				at++;
			had = at < nref && ref[at] == addr;
			struct page *pg = page_set__at(&s, addr, &created);
			cr_assert_eq(created, !had);
			cr_assert_eq(pg->addr, addr);
			if (!had && nref < 20000) {
				memmove(ref + at + 1, ref + at, (nref - at) * sizeof(*ref));
				ref[at] = addr;
				nref++;
				pg->value = addr;
			} else if (!had) { /* the reference is full: take it out again */
				page_set__take(&s, addr, addr + 1, sum_taken, NULL);
			}
		} else { /* take a range */
			uint64_t len = ((seed >> 40) % 64) * 4096, want = 0, end = addr + len;
			size_t from = 0, to;

			while (from < nref && ref[from] < addr)
				from++;
			for (to = from; to < nref && ref[to] < end; to++)
				want += ref[to];
			taken_sum = 0;
			page_set__take(&s, addr, end, sum_taken, NULL);
			cr_assert_eq(taken_sum, want, "round %d", round);
			memmove(ref + from, ref + to, (nref - to) * sizeof(*ref));
			nref -= to - from;
		}
		cr_assert_eq(s.n, nref, "round %d", round);
	}
	/* Every page, in order: taken one by one from the bottom, each the next of the reference. */
	for (size_t i = 0; i < nref; i++) {
		taken_sum = 0;
		page_set__take(&s, 0, ref[i] + 1, sum_taken, NULL);
		cr_assert_eq(taken_sum, ref[i], "page %zu", i);
	}
	cr_assert_eq(s.n, 0);
	cr_assert_eq(s.nc, 0);
	page_set__free(&s);
}

struct held_request {
	const struct profile *p;
	char endpoint[32], trace[40];
	uint64_t points;
};

static void held_request(void *ctx, const struct sample_labels *l, const uint32_t *frames, uint32_t n, uint64_t points)
{
	struct held_request *h = ctx;
	const struct sample_request *r = profile__request_at(h->p, l->request);

	(void)frames;
	(void)n;
	snprintf(h->endpoint, sizeof(h->endpoint), "%s", profile__str_at(h->p, r->endpoint));
	snprintf(h->trace, sizeof(h->trace), "%s", profile__str_at(h->p, r->trace_id));
	h->points += points;
}

/*
 * A --continuous memory recording: the interval's end drops the profile's
 * requests and their ids' strings (a day at 1,000 requests a second keeps
 * none of yesterday's), and memory still held keeps its request by value,
 * renumbered into the new tables, its site found again by its new labels.
 */
Test(mem_ledger, held_memory_keeps_its_request_across_intervals)
{
	struct profile *p = profile__new();
	struct mem_ledger *m = mem_ledger__new();
	const uint32_t one[] = { 1 };
	struct sample_request rq = { .endpoint = profile__str(p, "GET /cart"),
				     .trace_id = profile__request_str(p, "0af7651916cd43dd8448eb211c80319c") },
			      other = { .endpoint = rq.endpoint,
					.trace_id = profile__request_str(p, "11111111111111111111111111111111") };
	struct sample_labels l = labels(10);
	struct held_request h = { .p = p };
	size_t n;

	cr_assert(rq.trace_id & PROFILE_REQUEST_STR);
	cr_assert_eq(rq.endpoint & PROFILE_REQUEST_STR, 0);
	l.request = profile__request(p, &rq);
	mem_ledger__grow(m, &l, 1 * MIB, 3, one, 1);
	l.request = profile__request(p, &other); /* a request that holds nothing at the interval's end */
	mem_ledger__grow(m, &l, 2 * MIB, 1, one, 1);
	mem_ledger__release(m, 10, 2 * MIB, 4 * KIB);
	mem_ledger__tidy(m);

	uint32_t *ids = mem_ledger__requests(m, &n);
	profile__clear_samples_carrying(p, ids, n);
	mem_ledger__renumber_requests(m, ids);
	free(ids);
	/* The one request still held is the table's only one: the other's
	 * trace id is gone with its string. */
	struct sample_request probe = { .endpoint = rq.endpoint,
					.trace_id = profile__request_str(p, "0af7651916cd43dd8448eb211c80319c") };
	cr_assert_eq(profile__request(p, &probe), 1);
	cr_assert_eq(probe.trace_id, PROFILE_REQUEST_STR | 1, "the first string of the new interval's table");
	mem_ledger__held(m, held_request, &h);
	cr_assert_str_eq(h.endpoint, "GET /cart");
	cr_assert_str_eq(h.trace, "0af7651916cd43dd8448eb211c80319c");
	cr_assert_eq(h.points, 3);
	/* The same request growing again lands on the same site. */
	l.request = profile__request(p, &probe);
	mem_ledger__grow(m, &l, 3 * MIB, 2, one, 1);
	h.points = 0;
	mem_ledger__held(m, held_request, &h);
	cr_assert_eq(h.points, 5);
	/* Without a ledger, every request and its strings go. */
	profile__clear_samples(p);
	cr_assert_str_eq(profile__str_at(p, probe.trace_id), "");
	cr_assert_str_eq(profile__str_at(p, rq.endpoint), "GET /cart");
	mem_ledger__free(m);
	profile__free(p);
}
