/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * record --continuous with --push/--otlp: the senders (push/sender.h)
 * started before sampling and wired to the intervals (each new file handed
 * over, unsent files kept past --keep), and the stop's last pushes.
 */
#ifndef PYEBPF_RECORD_PUSH_H
#define PYEBPF_RECORD_PUSH_H

#include "push/sender.h"
#include "record/intervals.h"
#include "record/record_args.h"

/* How long a stop waits for backends to take what they lack. */
#define PUSH_STOP_SECONDS 5.0

/* Start the senders for o's backends and hook them to iv; NULL after one
 * error line (a journal that cannot be written). A backend that does not
 * answer is a warning, later. */
struct pusher *record_push__start(const struct record_opts *o, struct intervals *iv);
/* Push for up to PUSH_STOP_SECONDS, then one line: what was sent and what is left in dir. */
void record_push__finish(struct pusher *p, const struct intervals *iv, const char *dir);

#endif
