/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What `record` says while it runs and when it stops: samples, processes,
 * cost, and every counter of what was lost or cut. Never silent.
 */
#ifndef PYEBPF_SUMMARY_H
#define PYEBPF_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "record/ingest.h"
#include "pyebpf.h"

struct record_summary {
	uint64_t elapsed_ns;
	uint64_t freq;
	int ncpus;
	double cpu_seconds;       /* pyebpf's own CPU while recording */
	bool timer_stats;         /* timer_runs/timer_run_ns are known */
	uint64_t timer_runs;      /* every run of the timer program, samples taken or not */
	uint64_t timer_run_ns;    /* and its BPF time */
	const uint64_t *counters; /* [PYEBPF_CNT__COUNT] */
	bool off_cpu;             /* --mode wall/off-cpu */
	uint64_t switches;        /* context switches the off-CPU hooks saw */
	uint64_t switch_bpf_ns;   /* their BPF time (with PYEBPF_BPF_STATS=1), else 0 */
	const struct ingest *ingest;
	uint64_t mem_sample_bytes;  /* --mode memory: bytes a sample point stands for; 0: another mode */
	bool mem_stats;             /* mem_runs/mem_run_ns are known (PYEBPF_BPF_STATS=1) */
	uint64_t mem_runs;          /* the growth hook's runs, every process's pages */
	uint64_t mem_run_ns;        /* all of memory mode's BPF time */
	const struct profile *prof; /* its strings name the processes */
};

/* Samples lost in BPF (ring buffer full, no scratch buffer). */
uint64_t summary_lost(const uint64_t *counters);
/* The one-line progress report (final: the last one, ended by a newline). */
void summary_status(FILE *f, const struct record_summary *s, bool final);
void summary_print(FILE *f, const struct record_summary *s);
/* The asyncio task time line (wall mode, 3.11+): nothing when no task was sampled. */
void summary_tasks(FILE *f, const struct task_stats *ts, uint64_t freq);

#endif
