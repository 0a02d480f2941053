// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/summary.h"

#include <stdlib.h>
#include <string.h>

#include "record/counters.h"
#include "record/mem_ledger.h"
#include "base/escape.h"
#include "base/util.h"

uint64_t summary_lost(const uint64_t *counters)
{
	/* Skipped ticks are not lost when the next sample of their thread stands for them. */
	return counters[PYEBPF_CNT_RB_FULL] + counters[PYEBPF_CNT_SCRATCH_ERR] + counters[PYEBPF_CNT_SKIPPED_LOST];
}

/*
 * One unit everywhere, as report and the files count: a sample is 1/F s of
 * one thread's time. A wait comes as one record worth many samples; records
 * are what pyebpf handles, samples what the profile holds.
 */
static uint64_t samples_of(const struct ingest_stats *st)
{
	return st->samples - st->offcpu_records + st->offcpu_ticks + st->oncpu_extra;
}

void summary_status(FILE *f, const struct record_summary *s, bool final)
{
	fprintf(f, "\r\033[Kpyebpf: %s %.1f s, %llu samples, %zu processes, %llu lost%s",
		final ? "recorded" : "recording", (double)s->elapsed_ns / 1e9,
		(unsigned long long)samples_of(ingest__stats(s->ingest)), ingest__processes(s->ingest),
		(unsigned long long)summary_lost(s->counters), final ? "\n" : "");
	fflush(f);
}

/* Where the DWARF unwinder stopped, and how merging went. */
static void native_summary(FILE *f, const struct native_stats *st)
{
	if (!st || !st->samples)
		return;
	fprintf(f, "pyebpf: native: %llu stacks, %.1f%% unwound to their root", (unsigned long long)st->samples,
		100.0 * (double)st->whole / (double)st->samples);
	if (st->copy_ends)
		fprintf(f, ", %llu cut at the end of the stack copy (--stack-size)", (unsigned long long)st->copy_ends);
	if (st->no_cfi)
		fprintf(f, ", %llu stopped at code without unwind info", (unsigned long long)st->no_cfi);
	if (st->failed)
		fprintf(f, ", %llu stopped otherwise", (unsigned long long)st->failed);
	fputc('\n', f);
	if (st->python)
		fprintf(f, "pyebpf: native: %llu Python stacks merged, %llu with a native/Python mismatch (marked)\n",
			(unsigned long long)st->python, (unsigned long long)st->mismatched);
}

/*
 * BPF's share: a sample taken, timed in BPF around the work, and (with the
 * kernel's statistics) the timer program's whole time, early returns on
 * other processes' ticks included, as a share of the CPUs sampled. Dividing
 * all runs by samples read 0.97 to 8.4 us for one workload, as other
 * processes came and went.
 */
static double bpf_us_per_taken(const uint64_t *counters)
{
	return counters[PYEBPF_CNT_TAKEN]
		       ? (double)counters[PYEBPF_CNT_TAKEN_NS] / 1e3 / (double)counters[PYEBPF_CNT_TAKEN]
		       : 0.0;
}

static void bpf_cost(FILE *f, const struct record_summary *s)
{
	if (!s->counters[PYEBPF_CNT_TAKEN])
		return;
	fprintf(f, ", BPF %.2f us per sample taken", bpf_us_per_taken(s->counters));
	if (s->timer_stats && s->elapsed_ns && s->ncpus)
		fprintf(f, " (timer program %.3f%% of the CPUs, %llu runs)",
			100.0 * (double)s->timer_run_ns / (double)s->elapsed_ns / s->ncpus,
			(unsigned long long)s->timer_runs);
}

/* Processes whose growth is told one by one; the rest are summed. */
#define MEM_PROCS_LISTED 10
/* A process that held this much at once and ended gets the hint of its views. */
#define MEM_ENDED_HINT_BYTES (16ULL << 20)

static int by_growth(const void *a, const void *b)
{
	const struct mem_proc *x = a, *y = b;

	return x->grown != y->grown ? (x->grown < y->grown ? 1 : -1) : (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * --mode memory: what grew, what went back, what is held, from the samples
 * (each point stands for mem_sample_bytes), beside the exact bytes BPF
 * counted mapped in; per process, the largest growth first.
 */
static void memory_summary(FILE *f, const struct record_summary *s, const struct profile *p)
{
	const struct mem_ledger *m = ingest__mem_ledger(s->ingest);
	uint64_t grown = 0, returned = 0, n = s->mem_sample_bytes;
	char a[32], b[32], c[32], d[32], e[32], name[64], held[128];
	struct mem_proc *v;
	size_t np, nrest;

	if (!m)
		return;
	const struct mem_proc *procs = mem_ledger__procs(m, &np), *rest = mem_ledger__forgotten(m, &nrest);
	v = xcalloc(np + 1, sizeof(*v));
	memcpy(v, procs, np * sizeof(*v));
	grown = rest->grown; /* ended processes kept only as a sum */
	returned = rest->returned;
	for (size_t i = 0; i < np; i++) {
		grown += v[i].grown;
		returned += v[i].returned;
	}
	fprintf(f,
		"pyebpf: memory: the targets mapped in %s of anonymous memory; sampled every %s: %s grew, %s of it "
		"went back, %s held at the end (an ended process's: at its end)\n",
		human_bytes(s->counters[PYEBPF_CNT_MEM_BYTES], a, sizeof(a)), human_bytes(n, b, sizeof(b)),
		human_bytes(grown * n, c, sizeof(c)), human_bytes(returned * n, d, sizeof(d)),
		human_bytes((grown - returned) * n, name, sizeof(name)));
	qsort(v, np, sizeof(*v), by_growth);
	for (size_t i = 0; i < np && i < MEM_PROCS_LISTED && v[i].grown; i++) {
		human_bytes((v[i].grown - v[i].returned) * n, c, sizeof(c));
		/* An ended process's held is what it held at its end; of that, what its interpreter's
		 * teardown freed as it ended (the kernel took the rest at its exit). */
		if (!v[i].exited)
			snprintf(held, sizeof(held), "%s held", c);
		else if (v[i].ending)
			snprintf(held, sizeof(held), "%s held at its end (%s of it freed as it ended)", c,
				 human_bytes(v[i].ending * n, e, sizeof(e)));
		else
			snprintf(held, sizeof(held), "%s held at its end", c);
		fprintf(f, "pyebpf: memory: pid %u %s: %s grew, %s went back, %s; at most %s held at once\n", v[i].pid,
			text_escape(profile__str_at(p, v[i].comm), name, sizeof(name)),
			human_bytes(v[i].grown * n, a, sizeof(a)), human_bytes(v[i].returned * n, b, sizeof(b)), held,
			human_bytes(v[i].peak * n, d, sizeof(d)));
	}
	if (np + nrest > MEM_PROCS_LISTED)
		fprintf(f, "pyebpf: memory: and %zu more processes\n",
			np + nrest - (np < MEM_PROCS_LISTED ? np : MEM_PROCS_LISTED));
	/* An ended program's two views, said once, for those that held some (the forgotten ones all
	 * ended: rest's peak is the largest of theirs). */
	bool ended_holding = nrest && rest->peak * n >= MEM_ENDED_HINT_BYTES;

	for (size_t i = 0; i < np && !ended_holding; i++)
		ended_holding = v[i].exited && v[i].peak * n >= MEM_ENDED_HINT_BYTES;
	if (ended_holding)
		fprintf(f, "pyebpf: memory: a process that ended shows what it held at its end (inuse_space, the "
			   "default) and at its high-water mark (--sample-type peak_space)\n");
	free(v);
}

void summary_print(FILE *f, const struct record_summary *s)
{
	const struct ingest_stats *st = ingest__stats(s->ingest);

	size_t nprocs = ingest__processes(s->ingest);

	if (s->mem_sample_bytes) {
		fprintf(f, "pyebpf: %llu memory samples from %zu process%s (%llu Python) in %.1f s, %llu lost\n",
			(unsigned long long)st->samples, nprocs, nprocs == 1 ? "" : "es",
			(unsigned long long)ingest__python_processes(s->ingest), (double)s->elapsed_ns / 1e9,
			(unsigned long long)summary_lost(s->counters));
		memory_summary(f, s, s->prof);
		fprintf(f, "pyebpf: cost: pyebpf %.3f s CPU while recording", s->cpu_seconds);
		if (s->counters[PYEBPF_CNT_MEM_TAKEN])
			fprintf(f, ", BPF %.2f us per sample taken",
				(double)s->counters[PYEBPF_CNT_MEM_TAKEN_NS] / 1e3 /
					(double)s->counters[PYEBPF_CNT_MEM_TAKEN]);
		/* The hook runs for every page any process maps in, sampled or not: its whole time. */
		if (s->mem_stats && s->elapsed_ns && s->ncpus)
			fprintf(f,
				" (all of memory mode's BPF: %.3f%% of the CPUs; the page hook ran %llu times, %.0f ns "
				"each)",
				100.0 * (double)s->mem_run_ns / (double)s->elapsed_ns / s->ncpus,
				(unsigned long long)s->mem_runs,
				s->mem_runs ? (double)s->mem_run_ns / (double)s->mem_runs : 0.0);
		fputc('\n', f);
		goto counters;
	}
	fprintf(f, "pyebpf: %llu samples from %zu process%s (%llu Python) in %.1f s (%llu Hz on %d CPUs), %llu lost\n",
		(unsigned long long)samples_of(st), nprocs, nprocs == 1 ? "" : "es",
		(unsigned long long)ingest__python_processes(s->ingest), (double)s->elapsed_ns / 1e9,
		(unsigned long long)s->freq, s->ncpus, (unsigned long long)summary_lost(s->counters));
	if (s->counters[PYEBPF_CNT_SKIPPED] && s->counters[PYEBPF_CNT_TAKEN])
		fprintf(f,
			"pyebpf: the timer skipped %llu ticks while samples were taken (BPF %.1f us a sample, %.1f us "
			"between ticks at %llu Hz): the next sample of the same thread stands for them (%llu lost: "
			"another thread ran next); a lower -F keeps every tick\n",
			(unsigned long long)s->counters[PYEBPF_CNT_SKIPPED], bpf_us_per_taken(s->counters),
			s->freq ? 1e6 / (double)s->freq : 0.0, (unsigned long long)s->freq,
			(unsigned long long)s->counters[PYEBPF_CNT_SKIPPED_LOST]);
	/* Set-up (kernel symbols, BPF load) is left out: it is paid once. Costs
	 * are per record: a wait of many samples costs one. */
	fprintf(f, "pyebpf: cost: pyebpf %.3f s CPU while recording (%.1f us per %s)", s->cpu_seconds,
		st->samples ? s->cpu_seconds * 1e6 / (double)st->samples : 0.0, s->off_cpu ? "record" : "sample");
	bpf_cost(f, s);
	fputc('\n', f);
	if (s->off_cpu) {
		uint64_t oncpu = st->samples - st->offcpu_records + st->oncpu_extra;

		fprintf(f, "pyebpf: off-CPU: %llu samples (%.1f s of waiting) in %llu records; on a CPU: %llu samples",
			(unsigned long long)st->offcpu_ticks,
			s->freq ? (double)st->offcpu_ticks / (double)s->freq : 0.0,
			(unsigned long long)st->offcpu_records, (unsigned long long)oncpu);
		if (s->switches)
			fprintf(f, "; %llu context switches, BPF %.0f ns each", (unsigned long long)s->switches,
				(double)s->switch_bpf_ns / (double)s->switches);
		fputc('\n', f);
	}
counters:
	for (int i = 1; i < PYEBPF_CNT__COUNT; i++)
		if (s->counters[i] && i != PYEBPF_CNT_OFFCPU && i != PYEBPF_CNT_TAKEN && i != PYEBPF_CNT_TAKEN_NS &&
		    i != PYEBPF_CNT_SKIPPED && i != PYEBPF_CNT_SKIPPED_LOST && i != PYEBPF_CNT_MEM_BYTES &&
		    i != PYEBPF_CNT_MEM_TAKEN && i != PYEBPF_CNT_MEM_TAKEN_NS)
			fprintf(f, "pyebpf: %s: %llu\n", counter_name((enum pyebpf_counter)i),
				(unsigned long long)s->counters[i]);
	if (st->no_symbol)
		fprintf(f,
			"pyebpf: samples with native code that has no symbol (named module+0xSTART of its function): "
			"%llu, %llu of them at the leaf\n",
			(unsigned long long)st->no_symbol, (unsigned long long)st->no_symbol_leaf);
	/* Without --native, native frames are the kernel's frame-pointer walk:
	 * a user who did not ask for them learns what would read further. */
	if (st->fp_cut)
		fprintf(f, "pyebpf: native stacks cut where frame pointers end (marked [no frame pointers]): %llu%s\n",
			(unsigned long long)st->fp_cut,
			ingest__native_stats(s->ingest) ? "" : "; --native unwinds past them");
	if (st->filtered)
		fprintf(f, "pyebpf: samples left out by the filters: %llu\n", (unsigned long long)st->filtered);
	if (st->bad)
		fprintf(f, "pyebpf: malformed events ignored: %llu\n", (unsigned long long)st->bad);
	if (st->late)
		fprintf(f,
			"pyebpf: naming fell behind sampling (up to %.1f s; %llu samples named over %.0f s late): "
			"a process gone by then is named from what was read of it while alive; a lower -F keeps up\n",
			(double)st->most_behind_ns / 1e9, (unsigned long long)st->late, (double)INGEST_LATE_NS / 1e9);
	native_summary(f, ingest__native_stats(s->ingest));
}

void summary_tasks(FILE *f, const struct task_stats *ts, uint64_t freq)
{
	if (!ts || (!ts->samples && !ts->lists_cut))
		return;
	fprintf(f,
		"pyebpf: asyncio task time: %llu samples (%.1f s of tasks pending, not thread time) in %llu walks of "
		"the task lists (%.2f ms and %.0f pages read each); %llu lists skipped (changing or unreadable)\n",
		(unsigned long long)ts->samples, (double)ts->samples / (double)freq, (unsigned long long)ts->ticks,
		ts->ticks ? (double)ts->walk_ns / 1e6 / (double)ts->ticks : 0.0,
		ts->ticks ? (double)ts->pages / (double)ts->ticks : 0.0, (unsigned long long)ts->lists_cut);
}
