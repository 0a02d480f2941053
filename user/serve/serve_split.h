/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Where an interval's samples went: on the CPU, or off it for each reason
 * (--mode wall/off-cpu). A wall interval samples every thread whether it runs
 * or not, so its total is about threads x interval whatever the load: only
 * this split shows a busier interval on serve's timeline. Pure logic.
 */
#ifndef PYEBPF_SERVE_SPLIT_H
#define PYEBPF_SERVE_SPLIT_H

#include <stdint.h>
#include <stdio.h>

#include "profile/offcpu.h"
#include "profile/profile.h"

/* Samples by enum offcpu_reason; [OFFCPU_NONE] is the time on the CPU. */
struct serve_split {
	uint64_t n[OFFCPU__COUNT];
};

/* Add a recording's samples (a reason this build does not know counts as "other"). */
void serve_split__count(struct serve_split *s, const struct profile *p);
uint64_t serve_split__offcpu(const struct serve_split *s);
/* `"split":{"cpu":N,"runqueue":N,...}`: every reason, in enum order, zeros too. */
void serve_split__write_json(const struct serve_split *s, FILE *f);

#endif
