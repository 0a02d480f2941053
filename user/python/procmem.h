/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Reading another process's memory (process_vm_readv), and its Python objects. */
#ifndef PYEBPF_PY_PROCMEM_H
#define PYEBPF_PY_PROCMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "python/offsets.h"

/* 0 when all len bytes were read, else -1. What the process no longer
 * holds is read from the copies BPF sent (python/mem_copies.h). */
int procmem_read(pid_t pid, uint64_t addr, void *buf, size_t len);
/* Read the copies before the process itself (on), or only once it fails
 * (off, the default): a code object freed since its sample reads true
 * from its copy. */
void procmem_copies_first(bool on);
int procmem_u64(pid_t pid, uint64_t addr, uint64_t *v);

/* A str object (PyUnicode, or 2.7 PyString) as a new UTF-8 string; NULL on failure.
 * Longer strings are cut at max_chars. */
char *py_read_str(pid_t pid, const struct py_layout *l, uint64_t addr, size_t max_chars);
/* A bytes object's contents (2.7: str); NULL on failure. *len is set. */
uint8_t *py_read_bytes(pid_t pid, const struct py_layout *l, uint64_t addr, size_t max, size_t *len);

/* Encode one code point as UTF-8 into out (4 bytes room); returns bytes written. */
size_t utf8_encode(uint32_t cp, char *out);

#endif
