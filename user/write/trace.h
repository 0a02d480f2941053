/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Chrome trace event format (JSON), loaded by Perfetto's UI and
 * chrome://tracing: a process track per process with a track per thread,
 * named as --processes each and --threads name their frames ("comm [pid N,
 * NAME]", "thread [tid M]"), with the sampled stacks as nested slices. Consecutive samples that
 * share frames extend the same slices; a thread not sampled for two periods
 * closes them. Untimed samples (from foreign pprof files) are left out.
 */
#ifndef PYEBPF_WRITE_TRACE_H
#define PYEBPF_WRITE_TRACE_H

#include <stdio.h>

#include "profile/profile.h"

/* 0, or -1 with errno set. */
int trace__write(const struct profile *p, FILE *out);

#endif
