/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `pyebpf record` options: parsed and checked without touching BPF. */
#ifndef PYEBPF_RECORD_ARGS_H
#define PYEBPF_RECORD_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/filter.h"
#include "write/formats.h"
#include "push/push_args.h"

/* --mode: what a sample stands for. */
enum record_mode {
	MODE_CPU = 0, /* time on a CPU (the timer samples running threads) */
	MODE_WALL,    /* time alive: on a CPU, and off it (blocked, waiting) with the reason */
	MODE_OFFCPU,  /* only the time off the CPU */
	MODE_MEMORY,  /* where resident memory grows (anonymous memory mapped in), and what of it is held */
};

struct record_opts {
	bool all;       /* -a; also the default with no -p and no command */
	uint32_t *pids; /* -p */
	size_t npids;
	bool no_tasks;             /* --no-tasks: no asyncio task time in wall mode */
	bool tasks;                /* --tasks: the output holds task time alone (not pprof) */
	bool no_children;          /* --no-children: -p / CMD without the processes they start */
	bool no_requests;          /* --no-requests: no labels of the request (docs/requests.md) */
	const char *context_label; /* --context-label: a context variable read into a label; NULL: none */
	char **cmd;                /* -- CMD ARGS...: NULL-terminated, points into argv */
	uint64_t freq;             /* -F, Hz */
	enum record_mode mode;     /* --mode */
	bool freq_given;           /* -F was given */
	uint64_t mem_sample_bytes; /* --sample-bytes: --mode memory's sampling, one point per this many bytes */
	int sample_type;           /* --sample-type: enum mem_value, what a memory profile's other outputs show */
	bool sample_type_given;
	double duration;    /* -d, seconds; 0: until stopped */
	const char *output; /* -o */
	enum output_format format;
	bool verbose;                  /* -v */
	bool threads;                  /* --threads: a frame per thread */
	enum process_frames processes; /* --processes */
	bool containers;               /* --containers: a frame per container */
	const char *by;                /* --by KEY: a frame per value of a request label (folded) */
	const char **cgroups;          /* --cgroup PATH, repeatable (point into argv) */
	size_t ncgroups;
	const char **container_ids; /* --container NAME|ID, repeatable */
	size_t ncontainers;
	const char **pods; /* --pod NAMESPACE/NAME, repeatable */
	size_t npods;
	const char *continuous;  /* --continuous DIR: one pprof per interval there */
	double interval;         /* --interval, seconds */
	size_t keep;             /* --keep N interval files; 0: no limit */
	uint64_t max_disk;       /* --max-disk bytes of interval files; 0: no limit */
	double rate_limit;       /* --rate-limit: percent of one core; 0: none */
	bool native;             /* --native: DWARF-unwound native frames merged with Python's */
	bool spool_default;      /* pushing with no --max-disk: RECORD_DEFAULT_SPOOL bounds it */
	uint32_t stack_size;     /* --stack-size: user stack bytes copied per sample */
	const char **debug_dirs; /* --debug-dir DIR, repeatable, NULL-terminated; NULL: the default */
	size_t ndebug_dirs;
	struct filter filter;  /* --tid, --thread, --exclude-thread, --gil, --no-kernel, ... */
	struct push_opts push; /* --push, --otlp and how (with --continuous: its files are the spool) */
};

/* Option codes of record's and top's long options that have no letter. */
enum record_opt {
	OPT_RECORD_POD = 1200,
	OPT_RECORD_SAMPLE_BYTES,
	OPT_RECORD_SAMPLE_TYPE,
	OPT_RECORD_NO_REQUESTS,
	OPT_RECORD_CONTEXT_LABEL,
	OPT_RECORD_BY,
};

#define RECORD_DEFAULT_FREQ 99
#define RECORD_MAX_FREQ 10000
#define RECORD_DEFAULT_OUTPUT "pyebpf.folded"
#define RECORD_DEFAULT_INTERVAL 60.0
#define RECORD_DEFAULT_STACK_SIZE 32768
/* Go's heap profiler's rate (runtime.MemProfileRate): a busy allocating
 * program sends a few hundred samples a second (bench/memory.sh). */
#define RECORD_DEFAULT_SAMPLE_BYTES (512 * 1024ULL)
#define RECORD_DEFAULT_SPOOL (1ULL << 30) /* --max-disk when pushing and none is given */

/* 0: run; 1: help was printed (exit 0); -1: one error line was printed (exit 2);
 * after 1 or -1 there is nothing to free.
 * argv[0] is "record". */
int record_args__parse(int argc, char **argv, struct record_opts *o);
void record_args__free(struct record_opts *o);

/* What `top` shares with record. The defaults (filters initialized). */
void record_args__defaults(struct record_opts *o);
/* The target and sampling options (-a, -p, -F, -d, --mode, --cgroup,
 * --container, --pod, --no-children, -v, by record's option codes): 0 applied;
 * 1: not one of them; -1 after one error line. */
int record_args__shared_option(struct record_opts *o, int c, const char *arg);
/* After the options: targets that exclude each other, --comm alone as the
 * targets, the filters' own checks. 0, or -1 after one error line. */
int record_args__check_targets(struct record_opts *o);

/* The help text as --help prints it (malloc'd), and the option table the
 * parser takes: the man page is made from the one, a test holds both
 * together (tests/unit/test_help.c). */
char *record_args__help(void);
const struct option *record_args__options(void);

#endif
