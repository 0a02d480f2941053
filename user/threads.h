/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Thread names, looked up while the thread is alive and cached per
 * (pid, tid): the Python name when the threading module gave it one, else
 * the OS name (/proc/PID/task/TID/comm), re-read once a second.
 */
#ifndef PYEBPF_THREADS_H
#define PYEBPF_THREADS_H

#include <stdbool.h>
#include <stdint.h>

#include "profile.h"

struct threads;

struct threads *threads__new(struct profile *prof);
void threads__free(struct threads *t); /* accepts NULL */

/* The string id of the thread's name; *stale is set when it is over a second old
 * (the caller may then look for a Python name and threads__set_python_name()). */
uint32_t threads__name(struct threads *t, uint32_t pid, uint32_t tid, uint64_t now, bool *stale);
void threads__set_python_name(struct threads *t, uint32_t pid, uint32_t tid, const char *name, uint64_t now);
/* Drop every thread of pid. */
void threads__forget_pid(struct threads *t, uint32_t pid);

#endif
