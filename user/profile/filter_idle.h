/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * --exclude-idle: a wall profile without the threads that never ran. In wall
 * mode every thread is sampled all the time, so a pool of workers waiting for
 * work, or a monitor asleep, can outweigh the request path a user came for; a
 * thread with no on-CPU sample in the window, none of whose waits ended in
 * it, did no work there.
 */
#ifndef PYEBPF_FILTER_IDLE_H
#define PYEBPF_FILTER_IDLE_H

#include <stdint.h>

#include "profile/profile.h"

struct idle_stats {
	uint64_t threads, samples; /* left out */
};

/* A copy of p without the samples of threads (pid, tid) that did not run in it. */
struct profile *filter__without_idle(const struct profile *p, struct idle_stats *st);

#endif
