/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `pyebpf dump`: every thread of a process at one instant, as text (a
 * traceback per thread, innermost frame first) or as one JSON document.
 * Pure: the verb (user/dump.c) builds a dump_doc; every string in it comes
 * from the target and is escaped here, on its way out.
 */
#ifndef PYEBPF_WRITE_DUMP_H
#define PYEBPF_WRITE_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct dump_local {
	const char *name, *value; /* value: a short repr (python/repr.h) */
};

struct dump_frame {
	uint32_t kind;    /* enum frame_kind: python, native, kernel or a mark */
	const char *name; /* function ("" when unknown) */
	const char *file; /* python: source file; native: module path; NULL: none */
	uint32_t line;    /* python */
	uint64_t offset;  /* native without a symbol: address in the module */
	const struct dump_local *locals;
	size_t nlocals;
	/* --locals: the frame changed while its locals were read (every try), so
	 * none are shown: values of another call would be worse than none. */
	bool locals_changed;
};

struct dump_thread {
	uint32_t tid;
	const char *name; /* Python thread name, else the OS one */
	bool gil_known, gil_held;
	uint32_t reason;                 /* enum offcpu_reason: OFFCPU_NONE when it runs */
	const struct dump_frame *frames; /* user frames, innermost first */
	size_t nframes;
	const struct dump_frame *kframes; /* kernel frames where it waits, innermost first */
	size_t nkframes;
};

/* Pending asyncio tasks with the same await chain (one, unless unnamed). */
struct dump_task {
	const char *name;                /* as given to create_task; "" asyncio's own Task-N */
	uint64_t count;                  /* tasks with this chain */
	const char *awaits;              /* "sleep", "lock"... (python/asyncio_tasks.h), "running", "ready" */
	const struct dump_frame *frames; /* coroutines innermost first, then each awaiter's `[task NAME]` mark
					    and coroutines */
	size_t nframes;
};

struct dump_doc {
	uint32_t pid;
	const char *comm;           /* process name */
	const char *container;      /* its container's id, 12 hex digits as `docker ps` shows; NULL: none */
	const char *container_name; /* that container's name (dump --container), or NULL */
	uint32_t ns_pid;            /* its pid inside its pid namespace; 0: unknown */
	const char *python;         /* "3.12.1", or NULL: not Python */
	const struct dump_thread *threads;
	size_t nthreads;
	const struct dump_task *tasks; /* CPython 3.11+ (not free-threaded) */
	size_t ntasks;
};

/* "holds the GIL", "waiting: lock", "sleeping", "running"...: the state in a thread's header. */
const char *dump_state(const struct dump_thread *t, char *buf, size_t size);
void dump_write_text(FILE *out, const struct dump_doc *d);
void dump_write_json(FILE *out, const struct dump_doc *d);

#endif
