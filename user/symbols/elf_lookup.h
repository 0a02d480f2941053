/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Named symbols of any type (data too) in an ELF file, and its load layout. */
#ifndef PYEBPF_ELF_LOOKUP_H
#define PYEBPF_ELF_LOOKUP_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct elf_query {
	const char *name;
	uint64_t vaddr; /* 0: not found */
};

/* Look up each name in .dynsym and .symtab; *load_delta = p_vaddr - p_offset
 * of the first PT_LOAD (the load bias is then map_start - pgoff - load_delta).
 * 0, or -1 when the file is not ELF. */
int elf_lookup(int fd, struct elf_query *q, size_t n, uint64_t *load_delta);

/* A copy of the bytes of the file's section NAME (SHT_PROGBITS, at most
 * max of them), to free(); NULL when it has none or a larger one. */
char *elf_section_copy(int fd, const char *name, size_t max, size_t *len);

/* The GNU build id of an open ELF as lowercase hex, "" when it has none. */
void elf_build_id(Elf *elf, char out[41 * 2]);

/* What names a file for pprof: its build id and where its executable
 * segments lie at their link addresses ([start, limit), start at file_offset). */
struct elf_identity {
	char build_id[41 * 2];
	uint64_t start, limit, file_offset;
};

/* Without reading any symbol table; 0, or -1 when the file is not ELF. */
int elf_identity(int fd, struct elf_identity *id);

#endif
