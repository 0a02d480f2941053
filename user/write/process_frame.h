/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The process frame at the root of folded stacks and flame graphs: the
 * command, and its pid when processes of one command must be told apart
 * (a gunicorn master and its workers, a multiprocessing pool), so that they
 * do not merge into one tree unless asked to.
 */
#ifndef PYEBPF_WRITE_PROCESS_FRAME_H
#define PYEBPF_WRITE_PROCESS_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../profile.h"

enum process_frames {
	PROCESSES_AUTO = 0, /* "comm [pid N]" for a command with 2 to PROCESSES_AUTO_MAX processes */
	PROCESSES_EACH,     /* always "comm [pid N]" */
	PROCESSES_MERGED,   /* always "comm": one tree per command */
};

/* A command with more processes than this (short-lived helpers, a large
 * pool) reads better as one tree: --processes each splits it anyway. */
#define PROCESSES_AUTO_MAX 16

/* Parse --processes; -1 (after one error line) when unknown. */
int process_frames_parse(const char *arg, enum process_frames *mode);

struct process_split;

/* Which commands of p get a frame per process, under mode. */
struct process_split *process_split__new(const struct profile *p, enum process_frames mode);
void process_split__free(struct process_split *s); /* accepts NULL */
/* Does a sample of (comm, pid) get its pid in its process frame? */
bool process_split__by_pid(const struct process_split *s, uint32_t comm, uint32_t pid);
/* The frame's text: "comm", "comm [pid N]", or "comm [pid N, NAME]" for a
 * process that named itself (multiprocessing: SpawnPoolWorker-1). */
void process_split__name(const struct process_split *s, const struct profile *p, uint32_t comm, uint32_t pid, char *buf,
			 size_t size);

#endif
