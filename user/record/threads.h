/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Thread names, looked up while the thread is alive and cached per
 * thread: the Python name when the threading module gave it one, else the
 * OS name (/proc/PID/task/TID/comm), re-read once a second. A process's
 * threads are its part (*slot), kept in its record of the process table
 * (record/processes.h): made at the first thread named, NULL before.
 */
#ifndef PYEBPF_THREADS_H
#define PYEBPF_THREADS_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"
#include "python/threadname.h"

struct threads;
struct proc_threads;

struct threads *threads__new(struct profile *prof);
void threads__free(struct threads *t); /* accepts NULL */
/* The process exec'd or exited: its threads go (NULL accepted). */
void proc_threads__free(struct proc_threads *pt);

/* The string id of the thread's name: comm, when the sample carried the
 * thread's own task name (own_comm), else /proc's (comm, the process's,
 * when the thread is gone before /proc told its name). *ask_python says it is time to look for
 * its Python name (first sight, 50 ms after a failed look, a second after a
 * found one: threads get renamed) and report with threads__set_python_name().
 * *from_python: the name returned is the Python one. */
uint32_t threads__name(struct threads *t, struct proc_threads **slot, uint32_t pid, uint32_t tid, uint32_t comm,
		       bool own_comm, uint64_t now, bool *ask_python, bool *from_python);
/* Where the thread's Python name was found last time (python/threadname.h). */
struct py_thread_hint *threads__hint(struct proc_threads **slot, uint32_t tid);
/* The Python name found, or NULL when there was none. */
void threads__set_python_name(struct threads *t, struct proc_threads **slot, uint32_t tid, const char *name,
			      uint64_t now);

#endif
