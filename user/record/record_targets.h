/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The targets of record's options, given to the sampler before sampling
 * starts: what `record` and `top` share.
 */
#ifndef PYEBPF_RECORD_TARGETS_H
#define PYEBPF_RECORD_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "record/ingest.h"
#include "record/record_args.h"
#include "record/sampler.h"
#include "system/container_watch.h"

/* --comm without -p, a command or -a: the names are the targets (BPF's
 * exec and fork hooks add processes of those names as they appear). */
bool record_targets__by_comm(const struct record_opts *o);

/*
 * -p's pids, the processes they already started (BPF follows those started
 * from now on: the pids are in the map first, so a child forked during the
 * scan is caught by one or the other) and the running processes of --comm's
 * names, into the sampler; each registered with ingest before its first
 * sample, so waits that end in the first milliseconds carry their Python
 * stacks. Returns how many processes were found besides the pids, or -1
 * after one error line.
 */
long record_targets__add(struct sampler *s, struct ingest *in, const struct record_opts *o);
/* What -p and --comm cover beyond the pids given (`running` found at the start), said once. */
void record_targets__note(FILE *f, const struct record_opts *o, size_t running);

/* What ingest asks of the sampler s while recording (record, top): a Python
 * process found or gone, threads beyond the BPF walk to index. */
struct ingest_hooks record_targets__hooks(struct sampler *s);

/* --container followed: what changed since the last call (*n events), applied to the sampler's target
 * cgroups (a failed update is one error line), for the caller to say. */
const struct container_event *record_targets__follow(struct sampler *s, struct container_watch *w, uint64_t now,
						     size_t *n);

#endif
