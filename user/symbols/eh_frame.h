/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Function extents from an ELF file's .eh_frame: every FDE covers one
 * function, [start, end). Where a file has no symbol for an address, the FDE
 * holding it still tells which function it is in, so every sample of that
 * function is named by one address (module+0xSTART), not by its own.
 * The bytes come from a profiled process's files: read with bounds on
 * every field, a malformed entry ends the walk, never the caller.
 */
#ifndef PYEBPF_EH_FRAME_H
#define PYEBPF_EH_FRAME_H

#include <stddef.h>
#include <stdint.h>

struct fde_range {
	uint64_t start, end;
};

/* The FDEs of an .eh_frame section (`len` bytes loaded at `vaddr`), sorted
 * by start; *out is malloc'd (NULL when there are none). */
size_t eh_frame_ranges(const uint8_t *data, size_t len, uint64_t vaddr, struct fde_range **out);

/* The range holding addr among n sorted ranges, or NULL. */
const struct fde_range *fde_range_find(const struct fde_range *r, size_t n, uint64_t addr);

#endif
