// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "symbols/elf_syms.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/eh_frame.h"
#include "symbols/elf_lookup.h"
#include "system/target_fs.h"
#include "base/hashmap.h"
#include "base/util.h"

/* From libstdc++: the Itanium C++ ABI demangler every C++ toolchain uses. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/*
 * A function: 16 bytes, for the hundred thousand a large C++ library
 * exports (32 before: half the memory a build machine's compilers cost a
 * whole-host recording).
 */
struct sym {
	uint64_t start;
	uint32_t size; /* bytes; 0: unknown (no function is 4 GiB: clamped) */
	uint32_t name; /* in the pool, after the byte of its binding's rank */
};

struct segment {
	uint64_t offset, vaddr, filesz;
};

struct elf_syms {
	struct sym *syms;
	size_t n;
	char *pool;                /* each raw name: its binding's rank, the name, NUL */
	struct hashmap *demangled; /* symbol index → its demangled name, as looked up */
	struct segment *segs;
	size_t nsegs;
	struct fde_range *fdes; /* function extents from .eh_frame, sorted */
	size_t nfdes;
	char build_id[41 * 2];
};

static int bind_rank(uint8_t bind)
{
	return bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
}

static int cmp_sym(const void *a, const void *b, void *pool)
{
	const struct sym *x = a, *y = b;
	const char *nx = (const char *)pool + x->name, *ny = (const char *)pool + y->name;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Aliases: the global name first, then the shorter one. */
	if (nx[-1] != ny[-1])
		return ny[-1] - nx[-1];
	return (int)strlen(nx) - (int)strlen(ny);
}

/* Symbols are appended while the name pool grows. */
struct builder {
	size_t cap, pool_len, pool_cap;
};

static const char *sym_name(const struct elf_syms *s, const struct sym *y)
{
	return s->pool + y->name;
}

static void add_sym(struct elf_syms *s, struct builder *b, uint64_t start, uint64_t size, const char *name,
		    const char *suffix, uint8_t bind)
{
	size_t len = strlen(name), slen = strlen(suffix), need = b->pool_len + 1 + len + slen + 1;

	if (need > UINT32_MAX) /* offsets are 32 bits: a 4 GiB name pool is no ELF's */
		return;
	xgrow(&s->pool, &b->pool_cap, need, 1);
	s->pool[b->pool_len] = (char)bind_rank(bind);
	memcpy(s->pool + b->pool_len + 1, name, len);
	memcpy(s->pool + b->pool_len + 1 + len, suffix, slen + 1);
	xgrow(&s->syms, &b->cap, s->n + 1, sizeof(*s->syms));
	s->syms[s->n++] = (struct sym){ .start = start,
					.size = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size,
					.name = (uint32_t)b->pool_len + 1 };
	b->pool_len = need;
}

/*
 * An ELF file mapped here, not by libelf: each page its sections' reads
 * touch counts in our RSS until it is unmapped, a large library's
 * .eh_frame, symbols and names at once (13 MB of libLLVM's, for 3 MB kept).
 * After each step they are given back (image_forget); a later step that
 * looks again reads them from the page cache.
 */
struct image {
	Elf *elf;
	void *map; /* NULL: libelf reads the file itself */
	size_t len;
};

static Elf *image_open(struct image *im, int fd)
{
	struct stat st;

	*im = (struct image){ 0 };
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
		/* Writable (copy on write): libelf may convert data in place. */
		im->map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		im->len = (size_t)st.st_size;
		if (im->map == MAP_FAILED)
			im->map = NULL;
	}
	im->elf = im->map ? elf_memory(im->map, im->len) : elf_begin(fd, ELF_C_READ_MMAP, NULL);
	return im->elf;
}

static void image_forget(const struct image *im)
{
	if (im->map)
		madvise(im->map, im->len, MADV_DONTNEED);
}

/* Entries read between two image_forget within one table: a library's
 * 335,000 relocations (8 MB) and its symbols' names are read in one go. */
#define FORGET_EVERY 4096

static void image_forget_every(const struct image *im, size_t i)
{
	if (i && i % FORGET_EVERY == 0)
		image_forget(im);
}

static void image_close(struct image *im)
{
	if (im->elf)
		elf_end(im->elf);
	if (im->map)
		munmap(im->map, im->len);
	*im = (struct image){ 0 };
}

static Elf_Scn *section_named(Elf *elf, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (gelf_getshdr(scn, sh) && (name = elf_strptr(elf, shstrndx, sh->sh_name)) && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/* A GOT slot that a dynamic relocation fills with a symbol's address. */
struct got_slot {
	uint64_t addr;
	const char *name; /* in the ELF's string table */
};

struct got_slots {
	struct got_slot *v;
	size_t n, cap;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The named GOT slots of every relocation section (.rela.plt, .rela.dyn). */
static void read_got_slots(const struct image *im, struct got_slots *g)
{
	Elf *elf = im->elf;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, sym_sh;
		Elf_Scn *dynsym;
		Elf_Data *rd, *sd;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize ||
		    !(dynsym = elf_getscn(elf, sh.sh_link)) || !gelf_getshdr(dynsym, &sym_sh) ||
		    !(rd = elf_getdata(scn, NULL)) || !(sd = elf_getdata(dynsym, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			uint32_t type;
			const char *name;

			image_forget_every(im, i);
			if (!gelf_getrela(rd, (int)i, &r))
				continue;
			type = (uint32_t)GELF_R_TYPE(r.r_info);
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT && type != R_X86_64_64)
				continue;
			if (!GELF_R_SYM(r.r_info) || !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sym) ||
			    !(name = elf_strptr(elf, sym_sh.sh_link, sym.st_name)) || !*name)
				continue;
			xgrow(&g->v, &g->cap, g->n + 1, sizeof(*g->v));
			g->v[g->n++] = (struct got_slot){ r.r_offset, name };
		}
	}
	if (g->n)
		qsort(g->v, g->n, sizeof(*g->v), cmp_slot);
}

/*
 * Stubs of `entry` bytes from `first` on in a PLT section: each jumps
 * through a GOT slot, `jmp *disp(%rip)` (ff 25, after endbr64 and a bnd
 * prefix in IBT builds), and the slot's relocation names it — "free@plt",
 * found as objdump finds it. A stub not understood (an IRELATIVE slot of an
 * ifunc, a lazy stub) is "[plt]".
 */
static void add_stubs(struct elf_syms *s, struct builder *b, Elf_Scn *scn, const GElf_Shdr *sh, size_t first,
		      size_t entry, const struct got_slots *g)
{
	Elf_Data *code = elf_getdata(scn, NULL);

	if (sh->sh_type != SHT_PROGBITS || !code || !code->d_buf)
		return;
	for (size_t at = first; at + entry <= code->d_size; at += entry) {
		const unsigned char *c = (const unsigned char *)code->d_buf + at;
		uint64_t stub = sh->sh_addr + at;
		const char *name = NULL;

		for (size_t j = 0; j + 6 <= entry; j++) {
			int32_t disp;
			struct got_slot key = { 0 }, *hit;

			if (c[j] != 0xff || c[j + 1] != 0x25)
				continue;
			memcpy(&disp, c + j + 2, sizeof(disp));
			key.addr = stub + j + 6 + (int64_t)disp;
			hit = g->n ? bsearch(&key, g->v, g->n, sizeof(*g->v), cmp_slot) : NULL;
			name = hit ? hit->name : NULL;
			break;
		}
		if (name)
			add_sym(s, b, stub, entry, name, "@plt", STB_LOCAL);
		else
			add_sym(s, b, stub, entry, "[plt]", "", STB_LOCAL);
	}
}

/*
 * PLT stubs, which have no symbols of their own (without this a stub takes
 * the name of whatever symbol precedes the section, often _init): those of
 * .plt after its 16-byte header (lazy binding's resolver call), or of
 * .plt.sec where IBT builds put them, and of .plt.got (functions whose
 * address is also taken; libpython's own _PyEval_EvalFrameDefault).
 */
static void add_plt(struct elf_syms *s, const struct image *im, struct builder *b)
{
	Elf *elf = im->elf;
	GElf_Shdr plt_sh, sec_sh, got_sh;
	Elf_Scn *plt = section_named(elf, ".plt", &plt_sh), *sec = section_named(elf, ".plt.sec", &sec_sh);
	Elf_Scn *got = section_named(elf, ".plt.got", &got_sh);
	struct got_slots g = { 0 };

	if (!plt && !sec && !got)
		return;
	read_got_slots(im, &g);
	if (plt && sec) /* .plt holds the header and the lazy stubs only */
		add_sym(s, b, plt_sh.sh_addr, plt_sh.sh_size, "[plt]", "", STB_LOCAL);
	else if (plt) {
		add_sym(s, b, plt_sh.sh_addr, 16, "[plt]", "", STB_LOCAL);
		add_stubs(s, b, plt, &plt_sh, 16, 16, &g);
	}
	if (sec)
		add_stubs(s, b, sec, &sec_sh, 0, 16, &g);
	if (got)
		add_stubs(s, b, got, &got_sh, 0,
			  got_sh.sh_entsize >= 8 && got_sh.sh_entsize <= 64 ? got_sh.sh_entsize : 8, &g);
	free(g.v);
}

/* The function symbols of .symtab and .dynsym; true if there was a .symtab. */
static bool collect(struct elf_syms *s, const struct image *im, struct builder *b)
{
	Elf *elf = im->elf;
	Elf_Scn *scn = NULL;
	bool symtab = false;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		symtab |= sh.sh_type == SHT_SYMTAB;
		if (!(data = elf_getdata(scn, NULL)) || !sh.sh_entsize)
			continue;
		size_t count = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < count; i++) {
			GElf_Sym sym;
			const char *name;

			image_forget_every(im, i);
			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			int type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			add_sym(s, b, sym.st_value, sym.st_size, name, "", GELF_ST_BIND(sym.st_info));
		}
	}
	return symtab;
}

/*
 * A stripped file's full symbol table may live in a detached debug file
 * (Debian's -dbg and -dbgsym packages, Fedora's -debuginfo), found by build
 * id as gdb and perf find it: DIR/.build-id/ab/cdef....debug. Its .symtab
 * has the addresses of the stripped file; a file whose own build id differs
 * (left over from another version) is not used: no name beats a wrong one.
 */
static void add_debug_file(struct elf_syms *s, struct builder *b, const char *const *debug_dirs, uint32_t root_pid)
{
	/* Each directory in the process's root first (a container has its own
	 * debug files; the build id tells the right one), then on the host. A
	 * relative --debug-dir is pyebpf's, on the host only. */
	for (size_t k = 0; debug_dirs[k / 2]; k++) {
		char path[4096], id[41 * 2] = "";
		uint32_t in = k % 2 ? 0 : root_pid;
		struct image im;
		int fd;
		Elf *elf;

		if ((k % 2 == 0 && (!root_pid || debug_dirs[k / 2][0] != '/')) ||
		    (size_t)snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", debug_dirs[k / 2], s->build_id,
				     s->build_id + 2) >= sizeof(path) ||
		    (fd = target_open(in, path)) < 0)
			continue;
		elf = image_open(&im, fd);
		if (elf && elf_kind(elf) == ELF_K_ELF)
			elf_build_id(elf, id);
		bool same = !strcmp(id, s->build_id);
		if (same)
			collect(s, &im, b); /* its .dynsym is an empty NOBITS section */
		image_close(&im);
		close(fd);
		if (same)
			return;
	}
}

/*
 * Stripped, PGO-built interpreters (Debian's 3.14 and 3.15) export
 * _PyEval_EvalFrameDefault, but that symbol covers only the loop's entry
 * (about 1 KB, its own FDE): the body, where nearly every sample of Python
 * code falls, is another FDE of ~80 KB without a name, reached by jumps
 * from the entry (GCC splits hot and cold parts; only the entry is
 * exported). Its name is the one GCC gives such parts, so that --native
 * merging recognises it (user/native/stack.c) and users read it: the
 * unnamed FDE that the entry's rel32 jumps (E9, 0F 8x) reach most often,
 * at least twice.
 */
#define EVAL_NAME "_PyEval_EvalFrameDefault"
#define EVAL_SCAN_MAX ((uint64_t)256 << 10)

static bool named_within(const struct elf_syms *s, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < s->n; i++) {
		uint64_t a = s->syms[i].start, z = a + (s->syms[i].size ? s->syms[i].size : 1);

		if (a < hi && z > lo)
			return true;
	}
	return false;
}

static void add_eval_parts(struct elf_syms *s, Elf *elf, struct builder *b)
{
	const struct sym *entry = NULL;
	const uint8_t *raw;
	size_t raw_len, off = 0;
	uint64_t lo, hi, best = 0;
	unsigned best_hits = 0;
	struct {
		uint64_t start;
		unsigned hits;
	} seen[16];
	size_t nseen = 0;

	for (size_t i = 0; i < s->n && !entry; i++)
		if (!strcmp(sym_name(s, &s->syms[i]), EVAL_NAME))
			entry = &s->syms[i];
	if (!entry || !entry->size || entry->size > EVAL_SCAN_MAX ||
	    !(raw = (const uint8_t *)elf_rawfile(elf, &raw_len)))
		return;
	lo = entry->start;
	hi = lo + entry->size;
	for (size_t i = 0; i < s->nsegs; i++)
		if (lo >= s->segs[i].vaddr && hi <= s->segs[i].vaddr + s->segs[i].filesz)
			off = s->segs[i].offset + (lo - s->segs[i].vaddr);
	if (!off || off + entry->size > raw_len)
		return;
	for (uint64_t i = 0; i + 5 <= entry->size; i++) {
		const uint8_t *p = raw + off + i;
		size_t len = p[0] == 0xe9 ? 5 : p[0] == 0x0f && (p[1] & 0xf0) == 0x80 && i + 6 <= entry->size ? 6 : 0;
		int32_t rel;
		uint64_t to;
		const struct fde_range *r;

		if (!len)
			continue;
		memcpy(&rel, p + len - 4, 4);
		to = lo + i + len + (int64_t)rel;
		if ((to >= lo && to < hi) || !(r = fde_range_find(s->fdes, s->nfdes, to)) || r->start == lo)
			continue;
		size_t k = 0;
		while (k < nseen && seen[k].start != r->start)
			k++;
		if (k == nseen) {
			if (nseen == sizeof(seen) / sizeof(seen[0]))
				continue;
			seen[nseen++] = (typeof(seen[0])){ r->start, 0 };
		}
		if (++seen[k].hits > best_hits) {
			best_hits = seen[k].hits;
			best = r->start;
		}
	}
	const struct fde_range *body = best_hits >= 2 ? fde_range_find(s->fdes, s->nfdes, best) : NULL;
	if (body && !named_within(s, body->start, body->end))
		add_sym(s, b, body->start, body->end - body->start, EVAL_NAME, ".cold", STB_LOCAL);
}

static void read_fdes(struct elf_syms *s, Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = section_named(elf, ".eh_frame", &sh);
	Elf_Data *d = scn && sh.sh_type == SHT_PROGBITS ? elf_getdata(scn, NULL) : NULL;

	if (d && d->d_buf)
		s->nfdes = eh_frame_ranges(d->d_buf, d->d_size, sh.sh_addr, &s->fdes);
}

/* By address, one symbol per address (the first after sorting); the
 * arrays' room to grow given back. */
static void sort_syms(struct elf_syms *s)
{
	size_t w = 1, pool_len = 0;

	if (!s->n)
		return;
	qsort_r(s->syms, s->n, sizeof(*s->syms), cmp_sym, s->pool);
	for (size_t r = 1; r < s->n; r++)
		if (s->syms[r].start != s->syms[w - 1].start)
			s->syms[w++] = s->syms[r];
		else if (s->syms[r].size > s->syms[w - 1].size && !s->syms[w - 1].size)
			s->syms[w - 1].size = s->syms[r].size;
	s->n = w;
	s->syms = xrealloc(s->syms, s->n * sizeof(*s->syms));
	for (size_t i = 0; i < s->n; i++) { /* the pool's end: after its last name */
		size_t end = s->syms[i].name + strlen(sym_name(s, &s->syms[i])) + 1;

		pool_len = end > pool_len ? end : pool_len;
	}
	s->pool = xrealloc(s->pool, pool_len);
}

/* Would elf_syms__lookup name every address of r? */
static bool fde_named(const struct elf_syms *s, const struct fde_range *r, size_t next)
{
	const struct sym *y = next ? &s->syms[next - 1] : NULL;

	if (!y || (next < s->n && s->syms[next].start < r->end))
		return false;
	return !y->size || r->end <= y->start + y->size;
}

/* Functions are looked up by FDE only where no symbol names them
 * (elf_syms__function_start): the FDEs of named ones go (two thirds of
 * a large C++ library's, 16 bytes each). */
static void keep_unnamed_fdes(struct elf_syms *s)
{
	size_t w = 0, next = 0; /* the first symbol after the FDE's start */

	for (size_t i = 0; i < s->nfdes; i++) {
		while (next < s->n && s->syms[next].start <= s->fdes[i].start)
			next++;
		if (!fde_named(s, &s->fdes[i], next))
			s->fdes[w++] = s->fdes[i];
	}
	s->nfdes = w;
	if (!w) {
		free(s->fdes);
		s->fdes = NULL;
	} else {
		s->fdes = xrealloc(s->fdes, w * sizeof(*s->fdes));
	}
}

struct elf_syms *elf_syms__load_fd(int fd, const char *const *debug_dirs, uint32_t root_pid)
{
	struct elf_syms *s;
	struct builder b = { 0 };
	struct image im;
	size_t nph;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOSYS;
		return NULL;
	}
	elf = image_open(&im, fd);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		image_close(&im);
		errno = ENOEXEC;
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	if (elf_getphdrnum(elf, &nph) == 0) {
		s->segs = xcalloc(nph ? nph : 1, sizeof(*s->segs));
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
				s->segs[s->nsegs++] = (struct segment){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
		}
	}
	read_fdes(s, elf);
	image_forget(&im);
	bool symtab = collect(s, &im, &b);
	image_forget(&im);
	add_plt(s, &im, &b);
	image_forget(&im);
	if (!symtab)
		add_eval_parts(s, elf, &b);
	elf_build_id(elf, s->build_id);
	image_close(&im);
	if (!symtab && s->build_id[0] && debug_dirs)
		add_debug_file(s, &b, debug_dirs, root_pid);

	sort_syms(s);
	keep_unnamed_fdes(s);
	return s;
}

struct elf_syms *elf_syms__load(const char *path, const char *const *debug_dirs)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct elf_syms *s;
	int saved;

	if (fd < 0)
		return NULL;
	s = elf_syms__load_fd(fd, debug_dirs, 0);
	saved = errno;
	close(fd);
	errno = saved;
	return s;
}

void elf_syms__free(struct elf_syms *s)
{
	if (!s)
		return;
	hashmap__free_values(s->demangled, free);
	free(s->syms);
	free(s->pool);
	free(s->segs);
	free(s->fdes);
	free(s);
}

int elf_syms__offset_to_vaddr(const struct elf_syms *s, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < s->nsegs; i++) {
		const struct segment *g = &s->segs[i];

		if (off >= g->offset && off < g->offset + g->filesz) {
			*vaddr = off - g->offset + g->vaddr;
			return 0;
		}
	}
	return -1;
}

/* Symbol i's name, demangled once (C++: _Z...), as it is first looked up. */
static const char *demangled(struct elf_syms *s, uint32_t i)
{
	const char *raw = sym_name(s, &s->syms[i]), *done;
	int status;
	char *d;

	if (raw[0] != '_' || raw[1] != 'Z')
		return raw;
	if (s->demangled && (done = hashmap__get_ptr(s->demangled, &i, sizeof(i))))
		return done;
	d = __cxa_demangle(raw, NULL, NULL, &status);
	if (!d || status != 0) {
		free(d);
		return raw;
	}
	if (!s->demangled)
		s->demangled = hashmap__new();
	*hashmap__put_ptr(s->demangled, &i, sizeof(i), NULL) = d;
	return d;
}

const char *elf_syms__lookup(struct elf_syms *s, uint64_t vaddr, uint64_t *sym_off)
{
	size_t lo = 0, hi = s->n;

	/* The last symbol starting at or before vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct sym *y = &s->syms[lo - 1];
	if (y->size && vaddr >= y->start + y->size)
		return NULL;
	if (sym_off)
		*sym_off = vaddr - y->start;
	return demangled(s, (uint32_t)(lo - 1));
}

uint64_t elf_syms__find(const struct elf_syms *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(sym_name(s, &s->syms[i]), name) == 0)
			return s->syms[i].start;
	return 0;
}

size_t elf_syms__count(const struct elf_syms *s)
{
	return s->n;
}

const char *elf_syms__build_id(const struct elf_syms *s)
{
	return s->build_id;
}

int elf_syms__function_start(const struct elf_syms *s, uint64_t vaddr, uint64_t *start)
{
	const struct fde_range *r = fde_range_find(s->fdes, s->nfdes, vaddr);

	if (!r)
		return -1;
	*start = r->start;
	return 0;
}
