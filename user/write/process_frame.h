/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The process frame at the root of folded stacks and flame graphs (and the
 * container frame under it), and the
 * names of process tracks (Chrome trace) and thread profiles (speedscope).
 *
 * By default processes of one command share one frame, "comm": N identical
 * workers (gunicorn, uwsgi, a multiprocessing pool) serve the same code, and
 * an endpoint should read as one tower, not N towers of 1/N each. A pid
 * frame under the command would split every tower again one level down, so
 * the pid stays out of the stack: it is in each sample's labels (pprof
 * "pid", report -p) and in the names of the outputs that keep one track per
 * process. --processes each gives every process its own tree,
 * "comm [pid N]", or "comm [pid N, NAME]" for a process that named itself
 * (multiprocessing's SpawnPoolWorker-1): the same text that names its trace
 * track. report --diff-base compares by command, as the default is.
 */
#ifndef PYEBPF_WRITE_PROCESS_FRAME_H
#define PYEBPF_WRITE_PROCESS_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

enum process_frames {
	PROCESSES_MERGED = 0, /* "comm": one tree per command (the default) */
	PROCESSES_EACH,       /* "comm [pid N]" or "comm [pid N, NAME]": one tree per process */
};

/* Parse --processes ("auto", the old default's name, reads as the default);
 * -1 (after one error line) when unknown. */
int process_frames_parse(const char *arg, enum process_frames *mode);

/* One process's own name: "comm [pid N]", or "comm [pid N, NAME]" when it
 * named itself (name: a string id, 0 for none). Not escaped: each writer
 * escapes for its format. */
void process_frame__format(const struct profile *p, uint32_t comm, uint32_t pid, uint32_t name, char *buf, size_t size);

/* The container frame under a process's with --containers: "[container ID12]", or "[container NAME (ID12)]"
 * when it has a name (container, name: string ids; ID12: the id as `docker ps` shortens it). Not escaped. */
void container_frame__format(const struct profile *p, uint32_t container, uint32_t name, char *buf, size_t size);

struct process_split;

/* The process frames of p under mode. */
struct process_split *process_split__new(const struct profile *p, enum process_frames mode);
void process_split__free(struct process_split *s); /* accepts NULL */
/* Do process frames carry pids (a tree per process)? */
bool process_split__by_pid(const struct process_split *s);
/* The frame's text: "comm", or process_frame__format()'s with the name the
 * process gave itself in any of its samples. */
void process_split__name(const struct process_split *s, const struct profile *p, uint32_t comm, uint32_t pid, char *buf,
			 size_t size);

#endif
