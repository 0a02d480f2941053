/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 * shared frames and one "sampled" profile per thread, weights in nanoseconds.
 */
#ifndef PYEBPF_WRITE_SPEEDSCOPE_H
#define PYEBPF_WRITE_SPEEDSCOPE_H

#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"

/* 0, or -1 with errno set. period_ns: the time one sample stands for. */
int speedscope__write(const struct profile *p, FILE *out);

#endif
