/*
 * Every built-in CPython layout against the DWARF of the installed pyenv
 * builds: a wrong offset fails here, not for a user. And 3.13's
 * _Py_DebugOffsets, read from the library file, gives the built-in table.
 */
#include "unit.h"

#include <gelf.h>
#include <libelf.h>

#include "../pythons.h"
#include "dwarf.h"
#include "elf_lookup.h"
#include "python/offsets.h"
#include "util.h"

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
	/* Every field the walker reads lies within the bytes it reads. */
	uint32_t fields[] = { o->frame_back, o->frame_code, o->frame_lasti, o->frame_owner, o->frame_globals };
	uint32_t sizes[] = { 8, 8, frame_objects ? 4 : 8, 1, 8 };
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
	if (v >= 311)
		expect(py, dw, l->co_qualname, "PyCodeObject", "co_qualname");
	else
		cr_assert_eq(l->co_qualname, NO);
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
	}
}

Test(offsets, builtin_tables_match_the_dwarf_of_installed_interpreters, .timeout = 300)
{
	struct python pys[32];
	int n = find_pythons(pys, 32), with_dwarf = 0;

	for (int i = 0; i < n; i++) {
		const struct py_layout *l = py_layout_builtin(pys[i].major, pys[i].minor);
		int fd;
		Dwarf *dw;

		if (!pys[i].lib[0]) {
			fprintf(stderr, "[SKIP] %s: no shared libpython with debug info to check\n", pys[i].path);
			continue;
		}
		cr_assert(l, "%s: no built-in layout for %d.%d", pys[i].path, pys[i].major, pys[i].minor);
		fd = open(pys[i].lib, O_RDONLY);
		cr_assert(fd >= 0);
		dw = dwarf_begin(fd, DWARF_C_READ);
		if (!dw) {
			fprintf(stderr, "[SKIP] %s: no DWARF to check\n", pys[i].lib);
			close(fd);
			continue;
		}
		int before = checked;
		check_layout(&pys[i], l, dw);
		cr_log_info("%s: %d offsets agree with DWARF\n", pys[i].lib, checked - before);
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

Test(offsets, debug_offsets_of_313_give_the_builtin_table)
{
	struct python pys[32];
	int n = find_pythons(pys, 32), done = 0;

	for (int i = 0; i < n; i++) {
		uint8_t buf[PY_DEBUG_OFFSETS_313_SIZE];
		struct py_layout got;
		const char *why = NULL;

		if (pys[i].major != 3 || pys[i].minor != 13 || !pys[i].lib[0])
			continue;
		cr_assert_eq(read_symbol_bytes(pys[i].lib, "_PyRuntime", buf, sizeof(buf)), 0);
		cr_assert_eq(py_layout_from_debug_offsets(buf, sizeof(buf), &got, &why), 0, "%s", why);
		const struct py_layout *want = py_layout_builtin(3, 13);
		const uint32_t *g = (const uint32_t *)&got.bpf, *w = (const uint32_t *)&want->bpf;
		for (size_t k = 0; k < sizeof(got.bpf) / 4; k++)
			cr_assert_eq(g[k], w[k], "BPF offsets field %zu: %u from _Py_DebugOffsets, %u built in", k,
				     g[k], w[k]);
		cr_assert_eq(memcmp(&got, want, sizeof(got)), 0, "userspace offsets differ");
		done++;
	}
	if (!done)
		cr_skip_test("CPython 3.13 not installed");
}

Test(offsets, debug_offsets_refuse_wrong_blocks)
{
	uint8_t buf[PY_DEBUG_OFFSETS_313_SIZE] = "notdebug";
	struct py_layout l;
	const char *why;

	cr_assert_eq(py_layout_from_debug_offsets(buf, sizeof(buf), &l, &why), -1);
	memcpy(buf, "xdebugpy", 8);
	uint64_t v314 = 0x030e00f0;
	memcpy(buf + 8, &v314, 8);
	cr_assert_eq(py_layout_from_debug_offsets(buf, sizeof(buf), &l, &why), -1);
	cr_assert_str_eq(why, "a _Py_DebugOffsets layout this pyebpf does not know");
}
