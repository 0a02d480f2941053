/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * pprof reader: a pyebpf recording (or any pprof profile) back into a
 * profile, for `pyebpf report`. The input is untrusted: every index is
 * checked, sizes are bounded, and a bad file is one reason, never a crash.
 */
#ifndef PYEBPF_READ_PPROF_H
#define PYEBPF_READ_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "../profile.h"

/* Decompressed profiles larger than this are refused. */
#define PPROF_MAX_SIZE (1ULL << 30)

/*
 * A profile from gzip-compressed or plain profile.proto bytes; NULL with the
 * reason in why (no trailing newline) when the data is not a usable profile.
 */
struct profile *pprof__read(const uint8_t *data, size_t len, char *why, size_t whylen);

#endif
