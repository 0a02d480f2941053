/*
 * Every built-in CPython layout against the DWARF of the installed builds
 * that have it (pyenv's, the free-threaded 3.13t): a wrong offset fails
 * here, not for a user. For 3.13+: each _Py_DebugOffsets block (read from
 * the interpreters' files, and dumped once into tests/fixtures/
 * debug_offsets/) gives its built-in table exactly, and each version's own
 * headers (build/fixtures/layouts/, from tests/fixtures/layout_probe.c) agree
 * with the positions pyebpf reads the block by and with what the table says
 * beyond the block. Under CI a missing interpreter or header set fails:
 * a table that went unchecked does not pass.
 */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "../pythons.h"
#include "dwarf.h"
#include "symbols/elf_lookup.h"
#include "python/debug_offsets.h"
#include "python/asyncio_tasks.h"
#include "python/offsets.h"
#include "record/task_sampler.h"
#include "base/util.h"

#define NO PYEBPF_NO_OFFSET

static int checked;

static void expect(const struct python *py, Dwarf *dw, uint32_t have, const char *type, const char *path)
{
	long want = dw_offset(dw, type, path);

	cr_assert_neq(want, -1, "%s: no %s.%s in DWARF", py->lib, type, path);
	cr_assert_eq((long)have, want, "%s: %s.%s is %ld, the table says %u", py->lib, type, path, want, have);
	checked++;
}

static void expect_size(const struct python *py, Dwarf *dw, uint32_t have, const char *type)
{
	long want = dw_sizeof(dw, type);

	cr_assert_eq((long)have, want, "%s: sizeof(%s) is %ld, the table says %u", py->lib, type, want, have);
	checked++;
}

/* The asyncio offsets of 3.11–3.13 (task_sampler reads their tasks through
 * them): libpython's types here, TaskObj in the _asyncio extension's DWARF. */
static void check_asyncio(const struct python *py, const struct py_layout *l, Dwarf *dw)
{
	const struct py_asyncio_offsets *a = &l->asyncio;
	int v = py->major * 100 + py->minor;
	char pattern[700], dir[600], *slash;
	glob_t g;

	if (v < 311 || v > 313) {
		cr_assert_eq(a->task_coro, 0, "%s: asyncio offsets for a version read otherwise", py->lib);
		return;
	}
	expect(py, dw, a->interp_modules, "PyInterpreterState", v == 311 ? "modules" : "imports.modules");
	expect(py, dw, a->gi_iframe, "PyGenObject", "gi_iframe");
	expect(py, dw, a->gi_frame_state, "PyGenObject", "gi_frame_state");
	expect(py, dw, a->frame_stacktop, "_PyInterpreterFrame", "stacktop");
	expect(py, dw, a->wr_object, "PyWeakReference", "wr_object");
	expect(py, dw, a->set_mask, "PySetObject", "mask");
	expect(py, dw, a->set_table, "PySetObject", "table");
	expect(py, dw, a->md_dict, "PyModuleObject", "md_dict");
	cr_assert_eq(a->suspended_yield_from, -1);
	/* The interpreter: PREFIX/bin/python3.X; the extension:
	 * PREFIX/lib/python3.X[t]/lib-dynload/_asyncio*.so */
	snprintf(dir, sizeof(dir), "%s", py->path);
	for (int up = 0; up < 2; up++) {
		slash = strrchr(dir, '/');
		cr_assert(slash, "%s: no prefix", py->path);
		*slash = '\0';
	}
	snprintf(pattern, sizeof(pattern), "%s/lib/python%d.%d%s/lib-dynload/_asyncio*.so", dir, py->major, py->minor,
		 py->free_threaded ? "t" : "");
	cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "%s: no _asyncio extension", pattern);
	int fd = open(g.gl_pathv[0], O_RDONLY);
	Dwarf *adw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;

	cr_assert(adw, "%s: no DWARF", g.gl_pathv[0]);
	expect(py, adw, a->task_fut_waiter, "TaskObj", "task_fut_waiter");
	expect(py, adw, a->task_coro, "TaskObj", "task_coro");
	expect(py, adw, a->task_name, "TaskObj", "task_name");
	dwarf_end(adw);
	close(fd);
	globfree(&g);
}

static void check_layout(const struct python *py, const struct py_layout *l, Dwarf *dw)
{
	const struct pyebpf_py_offsets *o = &l->bpf;
	int v = py->major * 100 + py->minor;
	bool frame_objects = v <= 310;

	expect(py, dw, o->interp_next, "PyInterpreterState", "next");
	expect(py, dw, o->interp_threads_head, "PyInterpreterState", v >= 311 ? "threads.head" : "tstate_head");
	expect(py, dw, o->tstate_next, "PyThreadState", "next");
	expect(py, dw, o->tstate_interp, "PyThreadState", "interp");
	expect(py, dw, o->tstate_thread_id, "PyThreadState", "thread_id");
	if (v >= 312)
		expect(py, dw, o->tstate_status, "PyThreadState", "_status");
	else
		cr_assert_eq(o->tstate_status, NO, "%s: no _status before 3.12", py->lib);
	expect(py, dw, o->tstate_frame, "PyThreadState", v <= 310 ? "frame" : v <= 312 ? "cframe" : "current_frame");
	if (v == 311 || v == 312)
		expect(py, dw, o->cframe_current_frame, "_PyCFrame", "current_frame");
	else
		cr_assert_eq(o->cframe_current_frame, NO);
	if (frame_objects) {
		expect(py, dw, o->frame_back, "PyFrameObject", "f_back");
		expect(py, dw, o->frame_code, "PyFrameObject", "f_code");
		expect(py, dw, o->frame_lasti, "PyFrameObject", "f_lasti");
		expect(py, dw, o->frame_globals, "PyFrameObject", "f_globals");
		expect(py, dw, l->frame_localsplus, "PyFrameObject", "f_localsplus");
		cr_assert_eq(o->lasti_mult, v == 310 ? 2 : 1, "%s: f_lasti units", py->lib);
	} else {
		expect(py, dw, o->frame_back, "_PyInterpreterFrame", "previous");
		expect(py, dw, o->frame_code, "_PyInterpreterFrame", v >= 313 ? "f_executable" : "f_code");
		expect(py, dw, o->frame_lasti, "_PyInterpreterFrame", v >= 313 ? "instr_ptr" : "prev_instr");
		expect(py, dw, o->frame_owner, "_PyInterpreterFrame", v == 311 ? "is_entry" : "owner");
		expect(py, dw, o->frame_globals, "_PyInterpreterFrame", "f_globals");
		expect(py, dw, l->frame_localsplus, "_PyInterpreterFrame", "localsplus");
		expect(py, dw, o->code_adaptive, "PyCodeObject", "co_code_adaptive");
	}
	/* f_locals, and the code object's check fields, as the process's registration sets them. */
	struct py_layout checked_layout = *l;
	py_layout_code_check(&checked_layout);
	expect(py, dw, checked_layout.bpf.frame_locals, frame_objects ? "PyFrameObject" : "_PyInterpreterFrame",
	       "f_locals");
	cr_assert_gt(checked_layout.bpf.code_check_len, 0, "%s: no code check", py->lib);
	/* Every field the walker reads lies within the bytes it reads. */
	uint32_t fields[] = { o->frame_back,  o->frame_code,    o->frame_lasti,
			      o->frame_owner, o->frame_globals, checked_layout.bpf.frame_locals };
	uint32_t sizes[] = { 8, 8, frame_objects ? 4 : 8, 1, 8, 8 };
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (fields[i] != NO)
			cr_assert_leq(fields[i] + sizes[i], o->frame_read_size, "%s: frame field %zu beyond the read",
				      py->lib, i);
	cr_assert_leq(o->frame_read_size, PYEBPF_MAX_FRAME_READ);

	if (v >= 307)
		expect(py, dw, l->runtime_interp_head, "_PyRuntimeState", "interpreters.head");
	if (v >= 307 && v <= 311)
		expect(py, dw, l->runtime_tstate_current, "_PyRuntimeState", "gilstate.tstate_current");
	if (v == 312) {
		expect(py, dw, o->gil_off, "PyInterpreterState", "ceval.gil");
		expect(py, dw, o->gil_locked, "_gil_runtime_state", "locked");
		expect(py, dw, o->gil_holder, "_gil_runtime_state", "last_holder");
	}
	if (v >= 313) {
		expect(py, dw, o->gil_off, "PyInterpreterState", "_gil");
		expect(py, dw, o->gil_locked, "_gil_runtime_state", "locked");
		expect(py, dw, o->gil_holder, "_gil_runtime_state", "last_holder");
	}

	expect(py, dw, l->co_filename, "PyCodeObject", "co_filename");
	expect(py, dw, l->co_name, "PyCodeObject", "co_name");
	expect(py, dw, l->co_firstlineno, "PyCodeObject", "co_firstlineno");
	expect(py, dw, l->co_linetable, "PyCodeObject", v >= 310 ? "co_linetable" : "co_lnotab");
	if (v >= 311) {
		expect(py, dw, l->co_localsplusnames, "PyCodeObject", "co_localsplusnames");
		expect(py, dw, l->co_localspluskinds, "PyCodeObject", "co_localspluskinds");
		cr_assert_eq(l->co_varnames, NO);
	} else {
		expect(py, dw, l->co_nlocals, "PyCodeObject", "co_nlocals");
		expect(py, dw, l->co_varnames, "PyCodeObject", "co_varnames");
		cr_assert_eq(l->co_localsplusnames, NO);
	}
	expect(py, dw, l->tuple_size, "PyTupleObject", py->major == 2 ? "ob_size" : "ob_base.ob_size");
	expect(py, dw, l->tuple_items, "PyTupleObject", "ob_item");
	expect(py, dw, l->tp_name, "PyTypeObject", "tp_name");
	expect(py, dw, l->tp_flags, "PyTypeObject", "tp_flags");
	expect(py, dw, l->tp_base, "PyTypeObject", "tp_base");
	expect(py, dw, l->float_value, "PyFloatObject", "ob_fval");
	if (py->major == 2)
		expect(py, dw, l->int_value, "PyIntObject", "ob_ival");
	if (v >= 312) {
		expect(py, dw, l->long_size, "PyLongObject", "long_value.lv_tag");
		expect(py, dw, l->long_digits, "PyLongObject", "long_value.ob_digit");
	} else {
		expect(py, dw, l->long_size, "PyLongObject", py->major == 2 ? "ob_size" : "ob_base.ob_size");
		expect(py, dw, l->long_digits, "PyLongObject", "ob_digit");
	}
	if (v >= 311)
		expect(py, dw, l->co_qualname, "PyCodeObject", "co_qualname");
	else
		cr_assert_eq(l->co_qualname, NO);
	check_asyncio(py, l, dw);
	if (py->major == 2) {
		expect(py, dw, l->str_size, "PyStringObject", "ob_size");
		expect(py, dw, l->str_data, "PyStringObject", "ob_sval");
	} else {
		expect(py, dw, l->uni_length, "PyASCIIObject", "length");
		expect(py, dw, l->uni_state, "PyASCIIObject", "state");
		expect_size(py, dw, l->uni_ascii_data, "PyASCIIObject");
		expect_size(py, dw, l->uni_compact_data, "PyCompactUnicodeObject");
		expect(py, dw, l->bytes_size, "PyBytesObject", "ob_base.ob_size");
		expect(py, dw, l->bytes_data, "PyBytesObject", "ob_sval");
		expect(py, dw, l->ht_cached_keys, "PyHeapTypeObject", "ht_cached_keys");
		expect(py, dw, l->ob_type, "PyObject", "ob_type");
		expect(py, dw, l->tp_basicsize, "PyTypeObject", "tp_basicsize");
		expect(py, dw, l->tp_dictoffset, "PyTypeObject", "tp_dictoffset");
		if (v >= 306) {
			expect(py, dw, l->ma_keys, "PyDictObject", "ma_keys");
			expect(py, dw, l->ma_values, "PyDictObject", "ma_values");
		}
	}
}

Test(offsets, builtin_tables_match_the_dwarf_of_installed_interpreters, .timeout = 300)
{
	struct python pys[32];
	int n = find_pythons(pys, 32), with_dwarf = 0;

	for (int i = 0; i < n; i++) {
		const struct py_layout *l = py_layout_builtin(pys[i].major, pys[i].minor, pys[i].free_threaded);
		/* The interpreter's own file when it is not a shared libpython (3.13t). */
		const char *file = pys[i].lib[0] ? pys[i].lib : pys[i].path;
		int fd;
		Dwarf *dw;

		cr_assert(l, "%s: no built-in layout for %d.%d", pys[i].path, pys[i].major, pys[i].minor);
		fd = open(file, O_RDONLY);
		cr_assert(fd >= 0);
		dw = dwarf_begin(fd, DWARF_C_READ);
		if (!dw) {
			fprintf(stderr, "[SKIP] %s: no DWARF to check\n", file);
			close(fd);
			continue;
		}
		int before = checked;
		check_layout(&pys[i], l, dw);
		cr_log_info("%s: %d offsets agree with DWARF\n", file, checked - before);
		dwarf_end(dw);
		close(fd);
		with_dwarf++;
	}
	if (!with_dwarf)
		cr_skip_test("no interpreter with DWARF installed");
}

/* The bytes of a symbol's initial value in the file (.data). */
static int read_symbol_bytes(const char *path, const char *name, uint8_t *buf, size_t len)
{
	struct elf_query q = { .name = name };
	uint64_t delta;
	int fd = open(path, O_RDONLY), ret = -1;
	Elf *elf;
	Elf_Scn *scn = NULL;

	if (fd < 0 || elf_lookup(fd, &q, 1, &delta) || !q.vaddr)
		goto out;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS && q.vaddr >= sh.sh_addr &&
		    q.vaddr + len <= sh.sh_addr + sh.sh_size) {
			ret = pread(fd, buf, len, (off_t)(sh.sh_offset + q.vaddr - sh.sh_addr)) == (ssize_t)len ? 0
														: -1;
			break;
		}
	}
	elf_end(elf);
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

/* The built-in table of a block's version and build, with the version set
 * as detect.c sets it. */
static void expect_builtin(const char *what, const uint8_t *buf, size_t len, int want_ft)
{
	struct py_layout got;
	const char *why = NULL;
	uint64_t version;

	cr_assert_eq(py_layout_from_debug_offsets(buf, len, &got, &why), 0, "%s: %s", what, why);
	memcpy(&version, buf + 8, 8);
	const struct py_layout *want = py_layout_builtin(3, (int)((version >> 16) & 0xff), want_ft);
	cr_assert(want, "%s: no built-in table", what);
	cr_assert_eq(got.free_threaded, want_ft, "%s: free-threaded %d", what, got.free_threaded);
	const uint32_t *g = (const uint32_t *)&got.bpf, *w = (const uint32_t *)&want->bpf;
	for (size_t k = 0; k < sizeof(got.bpf) / 4; k++)
		cr_assert_eq(g[k], w[k], "%s: BPF offsets field %zu: %u from _Py_DebugOffsets, %u built in", what, k,
			     g[k], w[k]);
	cr_assert_eq(memcmp(&got, want, sizeof(got)), 0, "%s: userspace offsets differ", what);
}

/* Dumped once from each interpreter's .PyRuntime (dd of the block's bytes):
 * the tables stay checked on a machine without those interpreters. */
Test(offsets, dumped_blocks_give_the_builtin_tables)
{
	static const struct {
		const char *file;
		int ft;
	} dumps[] = { { "3.13.0.bin", 0 }, { "3.13.15t.bin", 1 }, { "3.14.10.bin", 0 }, { "3.15.2.bin", 0 } };

	for (size_t i = 0; i < ARRAY_SIZE(dumps); i++) {
		char path[256];
		uint8_t buf[PY_DEBUG_OFFSETS_MAX_SIZE] = { 0 };
		FILE *f;
		size_t len;

		snprintf(path, sizeof(path), "../tests/fixtures/debug_offsets/%s", dumps[i].file);
		f = fopen(path, "rb");
		cr_assert(f, "%s: %s", path, strerror(errno));
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		expect_builtin(path, buf, len, dumps[i].ft);
	}
}

/* The blocks of the interpreters installed here, read from their files. */
Test(offsets, installed_interpreters_blocks_give_the_builtin_tables)
{
	struct python pys[32];
	int n = find_pythons(pys, 32), done = 0;
	bool seen314 = false, seen315 = false, seen313t = false;

	for (int i = 0; i < n; i++) {
		uint8_t buf[PY_DEBUG_OFFSETS_MAX_SIZE];
		size_t len = py_debug_offsets_size(pys[i].minor);
		const char *file = pys[i].lib[0] ? pys[i].lib : pys[i].path;

		if (pys[i].major != 3 || pys[i].minor < 13)
			continue;
		cr_assert_gt(len, 0, "%s: no known _Py_DebugOffsets for 3.%d", file, pys[i].minor);
		cr_assert_eq(read_symbol_bytes(file, "_PyRuntime", buf, len), 0, "%s: no _PyRuntime", file);
		expect_builtin(file, buf, len, pys[i].free_threaded);
		seen314 |= pys[i].minor == 14;
		seen315 |= pys[i].minor == 15;
		seen313t |= pys[i].minor == 13 && pys[i].free_threaded;
		done++;
	}
	if (getenv("CI"))
		cr_assert(seen314 && seen315 && seen313t,
			  "CI: CPython 3.14, 3.15 and 3.13t must all be here (make deps), so no table goes unchecked");
	if (!done)
		cr_skip_test("no CPython 3.13+ installed");
}

/* 3.14+: BPF reads a thread's running asyncio task by the table's offset;
 * the .AsyncioDebug section (3.14's _asyncio extension, 3.15's interpreter)
 * is where CPython says it. */
Test(offsets, running_task_offsets_match_the_asyncio_sections)
{
	struct python pys[32];
	int n = find_pythons(pys, 32), done = 0;

	for (int i = 0; i < n; i++) {
		const struct py_layout *l = py_layout_builtin(pys[i].major, pys[i].minor, pys[i].free_threaded);
		uint8_t sec[ASYNCIO_DEBUG_SECTION_SIZE];
		struct asyncio_layout al = { 0 };
		char file[1100];
		int fd;

		if (pys[i].major != 3 || pys[i].minor < 14)
			continue;
		cr_assert(l, "%s: no built-in layout", pys[i].path);
		if (pys[i].minor == 14) { /* PREFIX/bin/python3.14t -> PREFIX/lib/python3.14t/lib-dynload */
			char pattern[1100];
			const char *bin = strstr(pys[i].path, "/bin/python");
			glob_t g;

			cr_assert(bin, "%s", pys[i].path);
			snprintf(pattern, sizeof(pattern), "%.*s/lib/python3.14%s/lib-dynload/_asyncio*.so",
				 (int)(bin - pys[i].path), pys[i].path, pys[i].free_threaded ? "t" : "");
			cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "%s: no _asyncio extension", pattern);
			snprintf(file, sizeof(file), "%s", g.gl_pathv[0]);
			globfree(&g);
		} else {
			snprintf(file, sizeof(file), "%s", pys[i].lib[0] ? pys[i].lib : pys[i].path);
		}
		fd = open(file, O_RDONLY | O_CLOEXEC);
		cr_assert_geq(fd, 0, "%s: %s", file, strerror(errno));
		cr_assert_eq(asyncio_debug_section(fd, sec, sizeof(sec)), 0, "%s: no .AsyncioDebug section", file);
		close(fd);
		cr_assert_eq(asyncio_layout_from_section(&al, sec, sizeof(sec)), 0, "%s: implausible section", file);
		cr_assert_eq(l->bpf.tstate_running_task, al.ts_running_task,
			     "3.%d: the table reads the running task at %u, %s says %llu", pys[i].minor,
			     l->bpf.tstate_running_task, file, (unsigned long long)al.ts_running_task);
		done++;
	}
	if (getenv("CI"))
		cr_assert_geq(done, 2, "CI: CPython 3.14 and 3.15 must be here (make deps)");
	if (!done)
		cr_skip_test("no CPython 3.14+ installed");
}

/* One probe's "name value" lines. */
struct probe {
	char key[128][48];
	char *val[128];
	int n;
	char buf[16384];
};

static bool probe_load(const char *path, struct probe *p)
{
	FILE *f = fopen(path, "r");
	char *save = NULL;
	size_t len;

	if (!f)
		return false;
	len = fread(p->buf, 1, sizeof(p->buf) - 1, f);
	fclose(f);
	p->buf[len] = '\0';
	p->n = 0;
	for (char *l = strtok_r(p->buf, "\n", &save); l && p->n < 128; l = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(l, ' ');

		if (!sp || sp - l >= 48)
			continue;
		memcpy(p->key[p->n], l, (size_t)(sp - l));
		p->key[p->n][sp - l] = '\0';
		p->val[p->n++] = sp + 1;
	}
	return true;
}

static const char *probe_str(const struct probe *p, const char *key)
{
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->key[i], key))
			return p->val[i];
	return NULL;
}

static long probe_num(const struct probe *p, const char *key, const char *file)
{
	const char *v = probe_str(p, key);

	cr_assert(v, "%s: no %s", file, key);
	return strtol(v, NULL, 10);
}

#define FIELD_NAME(id, path) [PY_DBG_##id] = #id,
static const char *const field_names[PY_DBG__COUNT] = { PY_DEBUG_FIELDS_313(FIELD_NAME) PY_DEBUG_FIELDS_314(FIELD_NAME)
								PY_DEBUG_FIELDS_315(FIELD_NAME) };

/* What a build's headers say against pyenv's tables. */
static void check_probe(const char *file, const struct probe *p)
{
	int major = 0, minor = 0, ft = (int)probe_num(p, "free_threaded", file);
	const char *ver = probe_str(p, "version");

	cr_assert(ver && sscanf(ver, "%d.%d", &major, &minor) == 2, "%s: no version", file);
	/* The positions pyebpf reads the block by are the headers'. */
	cr_assert_eq(py_debug_offsets_size(minor), (size_t)probe_num(p, "dbg.size", file), "%s: block size", file);
	for (int f = 0; f < PY_DBG__COUNT; f++) {
		char key[64];
		const char *v;

		snprintf(key, sizeof(key), "dbg.%s", field_names[f]);
		v = probe_str(p, key);
		cr_assert_eq(py_debug_offsets_pos(minor, f), v ? strtoul(v, NULL, 10) : 0,
			     "%s: %s at %s in the header, pyebpf reads %zu", file, field_names[f], v ? v : "(none)",
			     py_debug_offsets_pos(minor, f));
	}
	/* The block as the build initialises it (3.14+) gives the table. */
	const char *hex = probe_str(p, "block");
	if (hex) {
		uint8_t buf[PY_DEBUG_OFFSETS_MAX_SIZE] = { 0 };
		size_t len = strlen(hex) / 2;

		cr_assert_leq(len, sizeof(buf));
		for (size_t i = 0; i < len; i++)
			sscanf(hex + 2 * i, "%2hhx", &buf[i]);
		expect_builtin(file, buf, len, ft);
	}
	/* What the block does not say. */
	const struct py_layout *l = py_layout_builtin(major, minor, ft);
	cr_assert(l, "%s: no built-in table for %d.%d%s", file, major, minor, ft ? "t" : "");
	cr_assert_eq(l->ob_type, probe_num(p, "ob_type", file), "%s: ob_type", file);
	cr_assert_eq(l->tp_basicsize, probe_num(p, "tp_basicsize", file), "%s: tp_basicsize", file);
	cr_assert_eq(l->tp_dictoffset, probe_num(p, "tp_dictoffset", file), "%s: tp_dictoffset", file);
	cr_assert_eq(l->ht_cached_keys, probe_num(p, "ht_cached_keys", file), "%s: ht_cached_keys", file);
	cr_assert_eq(l->ma_keys, probe_num(p, "ma_keys", file), "%s: ma_keys", file);
	cr_assert_eq(l->ma_values, probe_num(p, "ma_values", file), "%s: ma_values", file);
	cr_assert_eq(l->dict_values, probe_num(p, "dict_values", file), "%s: PyDictValues.values", file);
	cr_assert_eq(l->bpf.frame_globals, probe_num(p, "frame_globals", file), "%s: f_globals", file);
	cr_assert_eq(l->bpf.gil_locked, probe_num(p, "gil_locked", file), "%s: GIL locked", file);
	cr_assert_eq(l->bpf.gil_holder, probe_num(p, "gil_holder", file), "%s: GIL last_holder", file);
	cr_assert_eq(l->bpf.gil_kind == PYEBPF_GIL_NONE, ft, "%s: a GIL is read on builds that have one", file);
	cr_assert_eq(l->uni_kind_shift, probe_num(p, "uni_kind_shift", file), "%s: state.kind", file);
	cr_assert_eq(l->uni_kind_shift + 3, probe_num(p, "uni_compact_shift", file), "%s: state.compact", file);
	cr_assert_eq(l->uni_kind_shift + 4, probe_num(p, "uni_ascii_shift", file), "%s: state.ascii", file);
	cr_assert_eq(l->bpf.executable_mask, probe_num(p, "tag_bits", file), "%s: f_executable's tag bits", file);
	/* Constants the readers assume (bpf/python.bpf.h, user/python/threadname.c). */
	cr_assert_eq(probe_num(p, "frame_owner_shim", file), 3, "%s: owners >= 3 are not Python's", file);
	cr_assert_eq(probe_num(p, "status_active_bit", file), 4, "%s: _status.active", file);
	cr_assert_eq(probe_num(p, "dk_log2_index_bytes", file), 9, "%s: dk_log2_index_bytes", file);
	cr_assert_eq(probe_num(p, "dk_kind", file), 10, "%s: dk_kind", file);
	cr_assert_eq(probe_num(p, "dk_nentries", file), 24, "%s: dk_nentries", file);
	cr_assert_eq(probe_num(p, "dk_indices", file), 32, "%s: dk_indices", file);
	cr_assert_eq(probe_num(p, "gil_size", file), ft ? 216 : 208, "%s: the GIL's futex words", file);
}

Test(offsets, headers_agree_with_the_tables)
{
	static const char *const builds[] = { "3.13", "3.13t", "3.14", "3.14t", "3.15", "3.15t" };
	static struct probe p;
	int done = 0;

	for (size_t i = 0; i < ARRAY_SIZE(builds); i++) {
		char path[128];

		snprintf(path, sizeof(path), FIXTURE("layouts/layout-%s.txt"), builds[i]);
		if (!probe_load(path, &p)) {
			cr_assert_null(getenv("CI"), "CI: %s missing: the %s headers went unchecked", path, builds[i]);
			continue;
		}
		check_probe(path, &p);
		cr_log_info("%s: the headers agree\n", path);
		done++;
	}
	if (!done)
		cr_skip_test("no CPython 3.13+ headers here");
}

Test(offsets, debug_offsets_refuse_wrong_blocks)
{
	uint8_t buf[PY_DEBUG_OFFSETS_MAX_SIZE] = "notdebug";
	struct py_layout l;
	const char *why;

	cr_assert_eq(py_layout_from_debug_offsets(buf, sizeof(buf), &l, &why), -1);
	memcpy(buf, "xdebugpy", 8);
	uint64_t v316 = 0x031000f0, one = 1;
	memcpy(buf + 8, &v316, 8);
	cr_assert_eq(py_layout_from_debug_offsets(buf, sizeof(buf), &l, &why), -1);
	cr_assert_str_eq(why, "a _Py_DebugOffsets layout this pyebpf does not know");
	/* A block shorter than its version's. */
	uint64_t v314 = 0x030e00f0;
	memcpy(buf + 8, &v314, 8);
	cr_assert_eq(py_layout_from_debug_offsets(buf, 584, &l, &why), -1);
	cr_assert_str_eq(why, "a short _Py_DebugOffsets");
	/* A free-threaded 3.12 does not exist: no table. */
	uint64_t v312 = 0x030c00f0;
	memcpy(buf + 8, &v312, 8);
	memcpy(buf + 16, &one, 8);
	cr_assert_eq(py_layout_from_debug_offsets(buf, sizeof(buf), &l, &why), -1);
	/* Values no interpreter has. */
	FILE *f = fopen("../tests/fixtures/debug_offsets/3.14.10.bin", "rb");
	cr_assert(f);
	cr_assert_eq(fread(buf, 1, 760, f), 760);
	fclose(f);
	uint64_t huge = 1ULL << 40;
	memcpy(buf + py_debug_offsets_pos(14, PY_DBG_TS_FRAME), &huge, 8);
	cr_assert_eq(py_layout_from_debug_offsets(buf, 760, &l, &why), -1);
	cr_assert_str_eq(why, "implausible _Py_DebugOffsets");
}
