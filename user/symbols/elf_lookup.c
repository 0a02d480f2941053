// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "symbols/elf_lookup.h"

#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ELF behind fd, or NULL when it is none. */
static Elf *elf_open(int fd)
{
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		elf = NULL;
	}
	return elf;
}

int elf_lookup(int fd, struct elf_query *q, size_t n, uint64_t *load_delta)
{
	Elf_Scn *scn = NULL;
	size_t nph;
	Elf *elf;

	for (size_t i = 0; i < n; i++)
		q[i].vaddr = 0;
	*load_delta = 0;
	elf = elf_open(fd);
	if (!elf)
		return -1;
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

char *elf_section_copy(int fd, const char *name, size_t max, size_t *len)
{
	Elf_Scn *scn = NULL;
	char *out = NULL;
	size_t shstrndx;
	Elf *elf;

	*len = 0;
	elf = elf_open(fd);
	if (!elf)
		return NULL;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(n = elf_strptr(elf, shstrndx, sh.sh_name)) || strcmp(n, name) != 0)
			continue;
		if (sh.sh_size <= max && (data = elf_rawdata(scn, NULL)) && data->d_buf && data->d_size <= max &&
		    (out = malloc(data->d_size + 1))) {
			memcpy(out, data->d_buf, data->d_size);
			out[data->d_size] = '\0';
			*len = data->d_size;
		}
		break;
	}
out:
	elf_end(elf);
	return out;
}

void elf_build_id(Elf *elf, char out[41 * 2])
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(data = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz <= 40) {
				const unsigned char *d = (unsigned char *)data->d_buf + desc_off;
				for (size_t i = 0; i < nh.n_descsz; i++)
					snprintf(out + 2 * i, 3, "%02x", d[i]);
				return;
			}
		}
	}
}

int elf_identity(int fd, struct elf_identity *id)
{
	size_t nph;
	Elf *elf;

	memset(id, 0, sizeof(*id));
	elf = elf_open(fd);
	if (!elf)
		return -1;
	id->start = UINT64_MAX;
	for (size_t i = 0; elf_getphdrnum(elf, &nph) == 0 && i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (ph.p_vaddr < id->start) {
			id->start = ph.p_vaddr;
			id->file_offset = ph.p_offset;
		}
		if (ph.p_vaddr + ph.p_filesz > id->limit)
			id->limit = ph.p_vaddr + ph.p_filesz;
	}
	if (!id->limit)
		id->start = 0;
	elf_build_id(elf, id->build_id);
	elf_end(elf);
	return 0;
}
