/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Copies of a Python process's memory that BPF sent beside the samples
 * that named it (PYEBPF_EVENT_MEM_COPY: each new code object, its name,
 * file and line table), read in its place once the process is gone: a
 * script's last wait is followed by its exit within milliseconds, before
 * the reader may have named the sample. Kept per process until its exit
 * or exec is handled (the ring holds those after the samples before them),
 * bounded per process and in all.
 */
#ifndef PYEBPF_PY_MEM_COPIES_H
#define PYEBPF_PY_MEM_COPIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEM_COPIES_PER_PROC 4096
#define MEM_COPIES_BYTES (32u << 20) /* all processes' together */

void mem_copies__add(uint32_t pid, uint64_t addr, const void *data, size_t len);
/* All len bytes at addr from one copy of pid's: true; false when no copy holds them. */
bool mem_copies__read(uint32_t pid, uint64_t addr, void *buf, size_t len);
void mem_copies__forget(uint32_t pid);
/* Every process's (the end of a recording; tests). */
void mem_copies__clear(void);
/* Copies refused by the bounds, for the summary. */
uint64_t mem_copies__dropped(void);

#endif
