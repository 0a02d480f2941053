/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A line-level source heatmap as one self-contained HTML file: the Python
 * source files the samples ran, busiest first, each line shaded by the
 * samples that had it on their stack (total) and showing those where it was
 * the leaf (self). Sources are read as the process saw them while it lives
 * (inside its root: a container's files, not the host's), else from this
 * host for a process outside any container; only regular .py files,
 * bounded, never blocking; a file that cannot be read is listed with its
 * sampled lines and why.
 */
#ifndef PYEBPF_WRITE_HEATMAP_H
#define PYEBPF_WRITE_HEATMAP_H

#include <stdio.h>

#include "profile/profile.h"

/* 0, or -1 with errno set. */
int heatmap__write(const struct profile *p, FILE *out);

#endif
