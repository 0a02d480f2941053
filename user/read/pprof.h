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

#include "profile/profile.h"

/*
 * What one recording may cost, so that no file makes `report` take more
 * than 512 MB: what it reads is held twice (read, then merged) and the
 * pprof writer builds about as much again (the costliest file found within
 * these bounds peaks at 484 MB, tests/integ/test_hostile_recordings.c).
 * Its bytes, compressed or not: */
#define PPROF_MAX_SIZE (256ULL << 20)
/* protobuf-c's unpacked copy (see pprof_cost.h), and that copy together with
 * the bytes it is unpacked from (both are held while unpacking): */
#define PPROF_MAX_DECODE (128ULL << 20)
#define PPROF_MAX_HELD (256ULL << 20)
/* Frames of one sample: a deeper stack keeps its leaf end under a
 * "[truncated]" mark, as the recorder cuts deep stacks. Above what the
 * recorder writes (INGEST_MAX_FRAMES, 2310): its files read back whole. */
#define PPROF_MAX_DEPTH 4096
/* Frames of all samples together (a location may stand for many frames):
 * every writer walks each sample's stack. */
#define PPROF_MAX_FRAMES (8ULL << 20)
/* A sample counting more than UINT32_MAX (a merge of far-apart
 * frequencies) is added in parts; at most this many parts in all. */
#define PPROF_MAX_SPLITS (1ULL << 20)
/* A sampling period beyond an hour is not one (and would overflow merges). */
#define PPROF_MAX_PERIOD 3600000000000LL
/* A memory profile's period is the bytes a sample point stands for:
 * record takes 4 KiB to 1 GiB; Go's heap profiles 512 KiB, or 1. */
#define PPROF_MAX_SAMPLE_BYTES (1ULL << 30)

/*
 * A profile from gzip-compressed or plain profile.proto bytes; NULL with the
 * reason in why (no trailing newline) when the data is not a usable profile.
 */
struct profile *pprof__read(const uint8_t *data, size_t len, char *why, size_t whylen);

#endif
