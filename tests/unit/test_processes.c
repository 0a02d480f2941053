/*
 * The process table: one record per process owns its parts; an exec frees
 * them but keeps the record, an exit frees the record after the grace
 * period, telling what lives outside (BPF) once. ASan (make unit-test)
 * finds any part a path forgets to free.
 */
#include "unit.h"

#include <unistd.h>

#include "record/processes.h"

static unsigned gone_n;
static uint32_t gone_pid;

static void on_gone(uint32_t pid, void *ctx)
{
	(void)ctx;
	gone_n++;
	gone_pid = pid;
}

/* A table over this machine's processes, with a part (threads) to own. */
struct world {
	struct profile *prof;
	struct procs *syms;
	struct threads *names;
	struct processes *t;
};

static struct world world_new(void)
{
	struct world w = { .prof = profile__new() };

	w.syms = procs__new(w.prof);
	w.names = threads__new(w.prof);
	w.t = processes__new(w.syms);
	return w;
}

static void world_free(struct world *w)
{
	processes__free(w->t); /* with its parts: ASan says if one leaked */
	threads__free(w->names);
	procs__free(w->syms);
	profile__free(w->prof);
}

/* Name the main thread: the threads part is made at its first need. */
static void name_thread(struct world *w, struct process *p, uint64_t now)
{
	bool ask, from_python;

	threads__name(w->names, &p->threads, p->pid, p->pid, profile__str(w->prof, "unit"), true, now, &ask,
		      &from_python);
}

static size_t count(const struct processes *t)
{
	size_t pos = 0, n = 0;
	struct process *p;

	while (processes__next(t, &pos, &p))
		n++;
	return n;
}

Test(processes, one_record_per_pid_owns_its_parts_until_exec)
{
	const uint64_t s = 1000000000ULL;
	struct world w = world_new();
	uint32_t me = (uint32_t)getpid();

	struct process *p = processes__get(w.t, me, 1 * s);
	cr_assert_eq(p->pid, me);
	cr_assert_not_null(p->maps, "the maps are read at first sight");
	cr_assert_eq(processes__get(w.t, me, 2 * s), p, "one record per pid");
	cr_assert_null(p->threads);
	name_thread(&w, p, 2 * s);
	cr_assert_not_null(p->threads, "a part is made at its first need");

	uint64_t gen = procs__maps_gen(p->maps);
	processes__exec(w.t, me);
	cr_assert_eq(processes__get(w.t, me, 3 * s), p, "an exec keeps the record");
	cr_assert_null(p->threads, "an exec frees the parts");
	cr_assert_null(p->python);
	cr_assert_neq(procs__maps_gen(p->maps), gen, "nothing named before the exec applies");
	name_thread(&w, p, 3 * s);
	cr_assert_eq(count(w.t), 1);
	world_free(&w);
}

Test(processes, an_exited_process_goes_after_the_grace_period_once)
{
	const uint64_t s = 1000000000ULL;
	struct world w = world_new();
	uint32_t me = (uint32_t)getpid();

	gone_n = 0;
	struct process *p = processes__get(w.t, me, 1 * s);
	uint64_t gen = procs__maps_gen(p->maps);
	name_thread(&w, p, 1 * s);
	processes__get(w.t, 1, 1 * s); /* another process, alive throughout */
	processes__exit(w.t, me, 10 * s);
	processes__gc(w.t, 11 * s, on_gone, NULL);
	cr_assert_eq(gone_n, 0, "late samples may still come");
	cr_assert_eq(count(w.t), 2);
	processes__gc(w.t, 13 * s, on_gone, NULL);
	cr_assert_eq(gone_n, 1);
	cr_assert_eq(gone_pid, me);
	cr_assert_eq(count(w.t), 1, "the other process stays");
	processes__gc(w.t, 20 * s, on_gone, NULL);
	cr_assert_eq(gone_n, 1, "told once");
	/* The pid again: a new process, nothing of the old one applies. */
	p = processes__get(w.t, me, 21 * s);
	cr_assert_null(p->threads);
	cr_assert_neq(procs__maps_gen(p->maps), gen);
	world_free(&w);
}
