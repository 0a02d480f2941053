// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "elf_lookup.h"

#include <gelf.h>
#include <libelf.h>
#include <string.h>

int elf_lookup(int fd, struct elf_query *q, size_t n, uint64_t *load_delta)
{
	Elf_Scn *scn = NULL;
	size_t nph;
	Elf *elf;

	for (size_t i = 0; i < n; i++)
		q[i].vaddr = 0;
	*load_delta = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		return -1;
	}
	if (elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
				*load_delta = ph.p_vaddr - ph.p_offset;
				break;
			}
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize)
			continue;
		if (!(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			for (size_t k = 0; k < n; k++)
				if (!q[k].vaddr && strcmp(name, q[k].name) == 0)
					q[k].vaddr = sym.st_value;
		}
	}
	elf_end(elf);
	return 0;
}
