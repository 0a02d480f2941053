/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Function symbols of one ELF file (.symtab and .dynsym, or a detached debug
 * file's .symtab), C++ names demangled. */
#ifndef PYEBPF_ELF_SYMS_H
#define PYEBPF_ELF_SYMS_H

#include <stddef.h>
#include <stdint.h>

struct elf_syms;

/* Load from an open file (the fd is not kept). NULL with errno set
 * (ENOEXEC: not an ELF file). A file with no symbols loads fine.
 * debug_dirs (NULL-terminated, or NULL): where to look for the detached
 * debug file of a file without .symtab, by build id, first match wins;
 * each in root_pid's root first (target_fs.h; 0: on the host only). */
struct elf_syms *elf_syms__load_fd(int fd, const char *const *debug_dirs, uint32_t root_pid);
struct elf_syms *elf_syms__load(const char *path, const char *const *debug_dirs);
void elf_syms__free(struct elf_syms *s); /* accepts NULL */

/* The virtual address (as in the symbol table) of a file offset inside an
 * executable PT_LOAD segment; -1 when no segment holds it. */
int elf_syms__offset_to_vaddr(const struct elf_syms *s, uint64_t off, uint64_t *vaddr);
/* The function containing vaddr (demangled), or NULL; *sym_off = vaddr - start. */
const char *elf_syms__lookup(struct elf_syms *s, uint64_t vaddr, uint64_t *sym_off);
/* The start of the function holding vaddr by the file's unwind information
 * (.eh_frame), for code without a symbol; -1 when no FDE covers it. */
int elf_syms__function_start(const struct elf_syms *s, uint64_t vaddr, uint64_t *start);
/* The start address of the function named `name` (as in the file); 0 if none. */
uint64_t elf_syms__find(const struct elf_syms *s, const char *name);
size_t elf_syms__count(const struct elf_syms *s);

/* The GNU build id as lowercase hex, "" if the file has none. */
const char *elf_syms__build_id(const struct elf_syms *s);

#endif
