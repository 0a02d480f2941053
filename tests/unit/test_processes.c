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
	struct profile *prof = profile__new();
	struct procs *syms = procs__new(prof);
	struct threads *names = threads__new(prof);
	struct processes *t = processes__new(syms);
	uint32_t me = (uint32_t)getpid();
	bool ask, from_python;

	struct process *p = processes__get(t, me, 1 * s);
	cr_assert_eq(p->pid, me);
	cr_assert_not_null(p->maps, "the maps are read at first sight");
	cr_assert_eq(processes__get(t, me, 2 * s), p, "one record per pid");
	cr_assert_null(p->threads);
	threads__name(names, &p->threads, me, me, profile__str(prof, "unit"), true, 2 * s, &ask, &from_python);
	cr_assert_not_null(p->threads, "a part is made at its first need");

	uint64_t gen = procs__maps_gen(p->maps);
	processes__exec(t, me);
	cr_assert_eq(processes__get(t, me, 3 * s), p, "an exec keeps the record");
	cr_assert_null(p->threads, "an exec frees the parts");
	cr_assert_null(p->python);
	cr_assert_neq(procs__maps_gen(p->maps), gen, "nothing named before the exec applies");
	threads__name(names, &p->threads, me, me, profile__str(prof, "unit"), true, 3 * s, &ask, &from_python);
	cr_assert_eq(count(t), 1);
	processes__free(t); /* with its parts: ASan says if one leaked */
	threads__free(names);
	procs__free(syms);
	profile__free(prof);
}

Test(processes, an_exited_process_goes_after_the_grace_period_once)
{
	const uint64_t s = 1000000000ULL;
	struct profile *prof = profile__new();
	struct procs *syms = procs__new(prof);
	struct threads *names = threads__new(prof);
	struct processes *t = processes__new(syms);
	uint32_t me = (uint32_t)getpid();
	bool ask, from_python;

	gone_n = 0;
	struct process *p = processes__get(t, me, 1 * s);
	uint64_t gen = procs__maps_gen(p->maps);
	threads__name(names, &p->threads, me, me, profile__str(prof, "unit"), true, 1 * s, &ask, &from_python);
	processes__get(t, 1, 1 * s); /* another process, alive throughout */
	processes__exit(t, me, 10 * s);
	processes__gc(t, 11 * s, on_gone, NULL);
	cr_assert_eq(gone_n, 0, "late samples may still come");
	cr_assert_eq(count(t), 2);
	processes__gc(t, 13 * s, on_gone, NULL);
	cr_assert_eq(gone_n, 1);
	cr_assert_eq(gone_pid, me);
	cr_assert_eq(count(t), 1, "the other process stays");
	processes__gc(t, 20 * s, on_gone, NULL);
	cr_assert_eq(gone_n, 1, "told once");
	/* The pid again: a new process, nothing of the old one applies. */
	p = processes__get(t, me, 21 * s);
	cr_assert_null(p->threads);
	cr_assert_neq(procs__maps_gen(p->maps), gen);
	processes__free(t);
	threads__free(names);
	procs__free(syms);
	profile__free(prof);
}
