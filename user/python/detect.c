// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/detect.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/elf_lookup.h"
#include "base/hashmap.h"
#include "symbols/maps.h"
#include "base/util.h"
#include "python/gil.h"
#include "python/procmem.h"
#include "python/version.h"
#include "pyebpf_arch.h"

enum {
	SYM_RUNTIME,
	SYM_VERSION,
	SYM_CODE_TYPE,
	SYM_INTERP_HEAD,
	SYM_TSTATE_CURRENT,
	/* 3.6 keeps its GIL in statics (ceval_gil.h): a futex wait on one of
	 * them is a wait for the GIL (user/offcpu.c). */
	SYM_GIL_COND,
	SYM_GIL_MUTEX,
	SYM_SWITCH_COND,
	SYM_SWITCH_MUTEX,
	/* Last: asked for only where the CPU needs it (aarch64's glibc). */
	SYM_TP_TO_SELF,
	NSYMS
};
static const char *const sym_names[NSYMS] = {
	[SYM_RUNTIME] = "_PyRuntime",
	[SYM_VERSION] = "Py_Version",
	[SYM_CODE_TYPE] = "PyCode_Type",
	[SYM_INTERP_HEAD] = "interp_head",
	[SYM_TSTATE_CURRENT] = "_PyThreadState_Current",
	[SYM_GIL_COND] = "gil_cond",
	[SYM_GIL_MUTEX] = "gil_mutex",
	[SYM_SWITCH_COND] = "switch_cond",
	[SYM_SWITCH_MUTEX] = "switch_mutex",
	[SYM_TP_TO_SELF] = PYEBPF_TP_TO_SELF_SYMBOL,
};
static const int nsyms = PYEBPF_TP_TO_SELF_SYMBOL ? NSYMS : NSYMS - 1;

/* What one file holds, cached by (device, inode). */
struct file_info {
	bool python; /* has PyCode_Type: an interpreter lives here */
	uint64_t vaddr[NSYMS];
	uint64_t load_delta;
	uint32_t rodata_hex; /* the version its read-only data names (python/version.h), 0 unknown */
};

struct py_detector {
	struct hashmap *files; /* file_key → struct file_info * */
};

struct py_detector *py_detector__new(void)
{
	struct py_detector *d = xcalloc(1, sizeof(*d));

	d->files = hashmap__new();
	return d;
}

void py_detector__free(struct py_detector *d)
{
	if (!d)
		return;
	hashmap__free_values(d->files, free);
	free(d);
}

int py_version_from_name(const char *path, int *major, int *minor)
{
	const char *b = strrchr(path, '/'), *p;

	b = b ? b + 1 : path;
	p = strstr(b, "python");
	if (!p || sscanf(p + 6, "%d.%d", major, minor) != 2)
		return -1;
	return *major == 2 || *major == 3 ? 0 : -1;
}

static bool candidate(const char *path, const char *exe)
{
	const char *b = strrchr(path, '/');

	if (path[0] != '/')
		return false;
	b = b ? b + 1 : path;
	return strncmp(b, "libpython", 9) == 0 || strncmp(b, "python", 6) == 0 || strcmp(path, exe) == 0;
}

static const struct file_info *file_info(struct py_detector *d, pid_t pid, const struct mapping *m)
{
	struct file_key key = mapping__file_key(m);
	struct file_info *fi;
	bool created;
	void **v = hashmap__put_ptr(d->files, &key, sizeof(key), &created);
	int fd;

	if (!created)
		return *v;
	fi = xcalloc(1, sizeof(*fi));
	*v = fi;
	fd = maps__open((uint32_t)pid, m);
	if (fd < 0) {
		/* Not cached as "not Python": we never looked. */
		free(fi);
		hashmap__remove(d->files, &key, sizeof(key));
		return NULL;
	}
	struct elf_query q[NSYMS];
	for (int i = 0; i < nsyms; i++)
		q[i].name = sym_names[i];
	if (elf_lookup(fd, q, nsyms, &fi->load_delta) == 0) {
		for (int i = 0; i < nsyms; i++)
			fi->vaddr[i] = q[i].vaddr;
		fi->python = q[SYM_CODE_TYPE].vaddr != 0;
	}
	/* Before 3.11 no symbol gives the patch level: the PY_VERSION literal
	 * does, read once a file. */
	int major, minor;
	if (fi->python && !fi->vaddr[SYM_VERSION] && py_version_from_name(m->path, &major, &minor) == 0) {
		size_t len;
		char *ro = elf_section_copy(fd, ".rodata", 64u << 20, &len);

		if (ro)
			fi->rodata_hex = py_version_in_strings(ro, len, major, minor);
		free(ro);
	}
	close(fd);
	return fi;
}

static enum py_detect_result unsupported(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static enum py_detect_result unsupported(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return PY_UNSUPPORTED;
}

/* 3.6: the span of its static GIL variables (condition variables 48 bytes,
 * mutexes 40), when the symbol table names all four. */
static void static_gil(const uint64_t *addr, struct py_interp *out)
{
	static const int syms[] = { SYM_GIL_COND, SYM_GIL_MUTEX, SYM_SWITCH_COND, SYM_SWITCH_MUTEX };
	uint64_t lo = UINT64_MAX, hi = 0;

	out->static_gil_lo = out->static_gil_hi = 0;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		if (!addr[syms[i]])
			return;
		lo = addr[syms[i]] < lo ? addr[syms[i]] : lo;
		hi = addr[syms[i]] + 48 > hi ? addr[syms[i]] + 48 : hi;
	}
	if (hi - lo <= 4096) { /* neighbours in .bss, or not what we think */
		out->static_gil_lo = lo;
		out->static_gil_hi = hi;
	}
}

static enum py_detect_result describe(pid_t pid, const struct file_info *fi, uint64_t bias, struct py_interp *out,
				      char *why, size_t whylen)
{
	uint64_t addr[NSYMS];
	const struct py_layout *builtin;

	for (int i = 0; i < NSYMS; i++)
		addr[i] = fi->vaddr[i] ? fi->vaddr[i] + bias : 0;
	out->runtime = addr[SYM_RUNTIME];
	out->code_type = addr[SYM_CODE_TYPE];

	/* The version: Py_Version (3.11+), else the file name and, to its patch
	 * level, the version string in the file; version_hex stays 0 when only
	 * the name told (3.8, not a made-up 3.8.0). */
	uint64_t hex = 0;
	if (addr[SYM_VERSION] && procmem_u64(pid, addr[SYM_VERSION], &hex) == 0 && (hex >> 24) == 3) {
		out->major = 3;
		out->minor = (hex >> 16) & 0xff;
	} else if (py_version_from_name(out->path, &out->major, &out->minor) == 0) {
		hex = fi->rodata_hex;
	} else {
		return unsupported(why, whylen, "CPython of unknown version (%s), native frames only", out->path);
	}
	out->version_hex = (uint32_t)hex;
	out->micro = (int)((hex >> 8) & 0xff);

	builtin = py_layout_builtin(out->major, out->minor, 0);
	if (out->major == 3 && out->minor >= 13) {
		/* 3.13+ describe themselves: the block decides, free-threaded or
		 * not. No fallback to a built-in table: a free-threaded build read
		 * with the default build's positions is a profile of unreadable
		 * frames, and a new version's positions all move. */
		uint8_t buf[PY_DEBUG_OFFSETS_MAX_SIZE] = { 0 };
		const char *reason = "unreadable _PyRuntime";
		size_t want = py_debug_offsets_size(out->minor);

		if (!want)
			want = 24; /* cookie, version, free_threaded: enough to say what it is */
		if (out->runtime && procmem_read(pid, out->runtime, buf, want) == 0 &&
		    py_layout_from_debug_offsets(buf, want, &out->layout, &reason) == 0) {
			out->layout.major = out->major;
			out->layout.minor = out->minor;
		} else {
			return unsupported(why, whylen, "CPython %d.%d%s on an unknown layout (%s), native frames only",
					   out->major, out->minor, buf[16] == 1 ? "t (free-threaded)" : "", reason);
		}
	} else if (builtin) {
		out->layout = *builtin;
		/* The table's numbers are x86-64's: 3.7-3.11 keep gilstate after the
		 * GIL, which holds two of libc's mutexes (aarch64's are longer). */
		if (out->layout.runtime_tstate_current != PYEBPF_NO_OFFSET)
			out->layout.runtime_tstate_current += PY_GIL_GROWTH;
	} else {
		return unsupported(why, whylen, "CPython %d.%d on an unknown layout, native frames only", out->major,
				   out->minor);
	}

	py_layout_code_check(&out->layout);
	py_layout_context(&out->layout);
	const struct py_layout *l = &out->layout;
	if (l->runtime_interp_head != PYEBPF_NO_OFFSET) {
		if (!out->runtime)
			return unsupported(why, whylen, "CPython %d.%d without a _PyRuntime symbol, native frames only",
					   out->major, out->minor);
		out->interp_head_addr = out->runtime + l->runtime_interp_head;
	} else {
		if (!addr[SYM_INTERP_HEAD])
			return unsupported(why, whylen,
					   "CPython %d.%d without a symbol table (interp_head), native frames only",
					   out->major, out->minor);
		out->interp_head_addr = addr[SYM_INTERP_HEAD];
	}
	out->gil_addr = 0;
	if (l->bpf.gil_kind == PYEBPF_GIL_TSTATE_CURRENT) {
		if (l->runtime_tstate_current != PYEBPF_NO_OFFSET && out->runtime)
			out->gil_addr = out->runtime + l->runtime_tstate_current;
		else
			out->gil_addr = addr[SYM_TSTATE_CURRENT];
		if (!out->gil_addr)
			out->layout.bpf.gil_kind = PYEBPF_GIL_NONE;
	}
	static_gil(addr, out);
	return PY_SUPPORTED;
}

/* A libc's file name: libc.so.6, or libc-2.31.so before glibc 2.34. */
static bool is_libc(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5);
}

/*
 * glibc's dynamic loader is mapped and libc is not yet: a process seen
 * between exec and the loader's mapping of its libraries (the first sample
 * of a command pyebpf started lands there under an emulated CPU).
 */
static bool glibc_still_loading(const struct mapping *m, size_t n)
{
	bool loader = false;

	for (size_t i = 0; i < n; i++) {
		const char *b = strrchr(m[i].path, '/');

		if (is_libc(m[i].path))
			return false;
		loader |= b && !strncmp(b + 1, "ld-linux", 8);
	}
	return loader;
}

/*
 * Where pthread_self() is from the thread pointer BPF reads, on a CPU where
 * they differ (include/pyebpf_arch.h): glibc says so in a symbol of its
 * own, in libc.so.6 or a static executable. 0 when found.
 */
static int thread_pointer_offset(struct py_detector *d, pid_t pid, const struct mapping *m, size_t n, const char *exe,
				 struct py_interp *out)
{
	for (size_t i = 0; i < n; i++) {
		const struct file_info *fi;
		uint32_t v;

		if (m[i].pgoff != 0 || !m[i].inode || m[i].path[0] != '/' ||
		    (!is_libc(m[i].path) && strcmp(m[i].path, exe) != 0))
			continue;
		fi = file_info(d, pid, &m[i]);
		/* sizeof(struct pthread): a kilobyte or two, never more than a page or two. */
		if (!fi || !fi->vaddr[SYM_TP_TO_SELF] ||
		    procmem_read(pid, m[i].start - fi->load_delta + fi->vaddr[SYM_TP_TO_SELF], &v, sizeof(v)) || !v ||
		    v > 8192)
			continue;
		out->tp_to_self = v;
		return 0;
	}
	return -1;
}

enum py_detect_result py_detect(struct py_detector *d, pid_t pid, struct py_interp *out, char *why, size_t whylen)
{
	struct mapping *m;
	size_t n;
	char exe[512] = "", link[64];
	enum py_detect_result res = PY_NOT_PYTHON;
	ssize_t len;

	memset(out, 0, sizeof(*out));
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	len = readlink(link, exe, sizeof(exe) - 1);
	exe[len > 0 ? len : 0] = '\0';
	if (maps__read(pid, false, &m, &n))
		return PY_NOT_PYTHON;
	for (size_t i = 0; i < n; i++) {
		const struct file_info *fi;

		/* The first mapping of each file (pgoff 0) gives its load bias. */
		if (m[i].pgoff != 0 || !m[i].inode || !candidate(m[i].path, exe))
			continue;
		fi = file_info(d, pid, &m[i]);
		if (!fi || !fi->python)
			continue;
		snprintf(out->path, sizeof(out->path), "%s", m[i].path);
		res = describe(pid, fi, m[i].start - m[i].pgoff - fi->load_delta, out, why, whylen);
		break;
	}
	/* Before its libc is mapped, not Python yet: looked at again when its
	 * maps change, not told "not glibc?" for good. */
	if (res == PY_SUPPORTED && PYEBPF_TP_TO_SELF_SYMBOL && thread_pointer_offset(d, pid, m, n, exe, out))
		res = glibc_still_loading(m, n) ? PY_NOT_PYTHON
						: unsupported(why, whylen,
							      "CPython %d.%d: no %s in its libc (not glibc?), native "
							      "frames only",
							      out->major, out->minor, PYEBPF_TP_TO_SELF_SYMBOL);
	maps__free(m, n);
	return res;
}
