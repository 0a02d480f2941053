// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "summary.h"

#include "counters.h"

uint64_t summary_lost(const uint64_t *counters)
{
	return counters[PYEBPF_CNT_RB_FULL] + counters[PYEBPF_CNT_SCRATCH_ERR];
}

void summary_status(FILE *f, const struct record_summary *s, bool final)
{
	fprintf(f, "\r\033[Kpyebpf: %s %.1f s, %llu samples, %zu processes, %llu lost%s",
		final ? "recorded" : "recording", (double)s->elapsed_ns / 1e9,
		(unsigned long long)ingest__stats(s->ingest)->samples, ingest__processes(s->ingest),
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

void summary_print(FILE *f, const struct record_summary *s)
{
	const struct ingest_stats *st = ingest__stats(s->ingest);

	fprintf(f, "pyebpf: %llu samples from %zu processes (%llu Python) in %.1f s (%llu Hz on %d CPUs), %llu lost\n",
		(unsigned long long)st->samples, ingest__processes(s->ingest),
		(unsigned long long)ingest__python_processes(s->ingest), (double)s->elapsed_ns / 1e9,
		(unsigned long long)s->freq, s->ncpus, (unsigned long long)summary_lost(s->counters));
	/* Set-up (kernel symbols, BPF load) is left out: it is paid once. */
	fprintf(f, "pyebpf: cost: pyebpf %.3f s CPU while recording (%.1f us per sample)", s->cpu_seconds,
		st->samples ? s->cpu_seconds * 1e6 / (double)st->samples : 0.0);
	if (s->bpf_us >= 0)
		fprintf(f, ", BPF %.2f us per sample", s->bpf_us);
	fputc('\n', f);
	if (s->off_cpu) {
		fprintf(f, "pyebpf: off-CPU: %llu samples standing for %.1f s of waiting",
			(unsigned long long)s->counters[PYEBPF_CNT_OFFCPU],
			s->freq ? (double)st->offcpu_ticks / (double)s->freq : 0.0);
		if (s->switches)
			fprintf(f, "; %llu context switches, BPF %.0f ns each", (unsigned long long)s->switches,
				(double)s->switch_bpf_ns / (double)s->switches);
		fputc('\n', f);
	}
	for (int i = 1; i < PYEBPF_CNT__COUNT; i++)
		if (s->counters[i] && i != PYEBPF_CNT_OFFCPU)
			fprintf(f, "pyebpf: %s: %llu\n", counter_name((enum pyebpf_counter)i),
				(unsigned long long)s->counters[i]);
	if (st->no_symbol)
		fprintf(f,
			"pyebpf: samples with native code that has no symbol (named module+0xSTART of its function): "
			"%llu, %llu of them at the leaf\n",
			(unsigned long long)st->no_symbol, (unsigned long long)st->no_symbol_leaf);
	if (st->fp_cut)
		fprintf(f, "pyebpf: native stacks cut where frame pointers end (marked [no frame pointers]): %llu\n",
			(unsigned long long)st->fp_cut);
	if (st->filtered)
		fprintf(f, "pyebpf: samples left out by the filters: %llu\n", (unsigned long long)st->filtered);
	if (st->bad)
		fprintf(f, "pyebpf: malformed events ignored: %llu\n", (unsigned long long)st->bad);
	native_summary(f, ingest__native_stats(s->ingest));
}
