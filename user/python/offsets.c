// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The numbers below come from the DWARF of CPython builds (2.7.18, 3.6.15,
 * 3.7.16, 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1, 3.13.0, x86-64) and are
 * re-checked against the installed interpreters' DWARF by the tests.
 */
#include "offsets.h"

#include <string.h>

#define NO PYEBPF_NO_OFFSET

/* Shared by every PEP 393 version up to 3.11 (PyASCIIObject has wstr). */
#define UNICODE_311                                                                                             \
	.str = PY_STR_UNICODE, .uni_length = 16, .uni_state = 32, .uni_ascii_data = 48, .uni_compact_data = 72, \
	.bytes_size = 16, .bytes_data = 32
#define UNICODE_312                                                                                             \
	.str = PY_STR_UNICODE, .uni_length = 16, .uni_state = 32, .uni_ascii_data = 40, .uni_compact_data = 56, \
	.bytes_size = 16, .bytes_data = 32

/* PyFrameObject (<= 3.10): f_back and f_code; f_lasti varies. */
#define FRAME_OBJECT(lasti, mult)                                                                       \
	.frame_kind = PYEBPF_FRAMES_OBJECT, .frame_back = 24, .frame_code = 32, .frame_lasti = (lasti), \
	.frame_owner = NO, .frame_read_size = 128, .lasti_mult = (mult), .cframe_current_frame = NO,    \
	.frame_globals = 48

static const struct py_layout layouts[] = {
	{ .major = 2,
	  .minor = 7,
	  .bpf = { .tstate_status = NO,
		   FRAME_OBJECT(120, 1),
		   .gil_kind = PYEBPF_GIL_TSTATE_CURRENT,
		   .interp_next = 0,
		   .interp_threads_head = 8,
		   .tstate_next = 0,
		   .tstate_interp = 8,
		   .tstate_thread_id = 144,
		   .tstate_frame = 16 },
	  .runtime_interp_head = NO,
	  .runtime_tstate_current = NO,
	  .co_filename = 80,
	  .co_name = 88,
	  .co_qualname = NO,
	  .co_firstlineno = 96,
	  .co_linetable = 104,
	  .linetable = PY_LNOTAB_27,
	  .str = PY_STR_BYTES_27,
	  .str_size = 16,
	  .str_data = 36,
	  .frame_localsplus = 376,
	  .dict = PY_DICT_27 },
	{ .major = 3,
	  .minor = 6,
	  .bpf = { .tstate_status = NO,
		   FRAME_OBJECT(120, 1),
		   .gil_kind = PYEBPF_GIL_TSTATE_CURRENT,
		   .interp_next = 0,
		   .interp_threads_head = 8,
		   .tstate_next = 8,
		   .tstate_interp = 16,
		   .tstate_thread_id = 152,
		   .tstate_frame = 24 },
	  .runtime_interp_head = NO,
	  .runtime_tstate_current = NO,
	  .co_filename = 96,
	  .co_name = 104,
	  .co_qualname = NO,
	  .co_firstlineno = 36,
	  .co_linetable = 112,
	  .linetable = PY_LNOTAB_36,
	  UNICODE_311,
	  .frame_localsplus = 376,
	  .ht_cached_keys = 856,
	  .dict = PY_DICT_36 },
	{ .major = 3,
	  .minor = 7,
	  .bpf = { .tstate_status = NO,
		   FRAME_OBJECT(104, 1),
		   .gil_kind = PYEBPF_GIL_TSTATE_CURRENT,
		   .interp_next = 0,
		   .interp_threads_head = 8,
		   .tstate_next = 8,
		   .tstate_interp = 16,
		   .tstate_thread_id = 176,
		   .tstate_frame = 24 },
	  .runtime_interp_head = 24,
	  .runtime_tstate_current = 1480,
	  .co_filename = 96,
	  .co_name = 104,
	  .co_qualname = NO,
	  .co_firstlineno = 36,
	  .co_linetable = 112,
	  .linetable = PY_LNOTAB_36,
	  UNICODE_311,
	  .frame_localsplus = 360,
	  .ht_cached_keys = 856,
	  .dict = PY_DICT_36 },
	{ .major = 3,
	  .minor = 8,
	  .bpf = { .tstate_status = NO,
		   FRAME_OBJECT(104, 1),
		   .gil_kind = PYEBPF_GIL_TSTATE_CURRENT,
		   .interp_next = 0,
		   .interp_threads_head = 8,
		   .tstate_next = 8,
		   .tstate_interp = 16,
		   .tstate_thread_id = 176,
		   .tstate_frame = 24 },
	  .runtime_interp_head = 32,
	  .runtime_tstate_current = 1368,
	  .co_filename = 104,
	  .co_name = 112,
	  .co_qualname = NO,
	  .co_firstlineno = 40,
	  .co_linetable = 120,
	  .linetable = PY_LNOTAB_36,
	  UNICODE_311,
	  .frame_localsplus = 360,
	  .ht_cached_keys = 872,
	  .dict = PY_DICT_36 },
	{ .major = 3,
	  .minor = 9,
	  .bpf = { .tstate_status = NO,
		   FRAME_OBJECT(104, 1),
		   .gil_kind = PYEBPF_GIL_TSTATE_CURRENT,
		   .interp_next = 0,
		   .interp_threads_head = 8,
		   .tstate_next = 8,
		   .tstate_interp = 16,
		   .tstate_thread_id = 176,
		   .tstate_frame = 24 },
	  .runtime_interp_head = 32,
	  .runtime_tstate_current = 568,
	  .co_filename = 104,
	  .co_name = 112,
	  .co_qualname = NO,
	  .co_firstlineno = 40,
	  .co_linetable = 120,
	  .linetable = PY_LNOTAB_36,
	  UNICODE_311,
	  .frame_localsplus = 360,
	  .ht_cached_keys = 864,
	  .dict = PY_DICT_36 },
	{ .major = 3,
	  .minor = 10,
	  .bpf = { .tstate_status = NO,
		   FRAME_OBJECT(96, 2),
		   .gil_kind = PYEBPF_GIL_TSTATE_CURRENT,
		   .interp_next = 0,
		   .interp_threads_head = 8,
		   .tstate_next = 8,
		   .tstate_interp = 16,
		   .tstate_thread_id = 176,
		   .tstate_frame = 24 },
	  .runtime_interp_head = 32,
	  .runtime_tstate_current = 568,
	  .co_filename = 104,
	  .co_name = 112,
	  .co_qualname = NO,
	  .co_firstlineno = 40,
	  .co_linetable = 120,
	  .linetable = PY_LINETABLE_310,
	  UNICODE_311,
	  .frame_localsplus = 352,
	  .ht_cached_keys = 872,
	  .dict = PY_DICT_36 },
	{ .major = 3,
	  .minor = 11,
	  .bpf = { .tstate_status = NO,
		   .frame_kind = PYEBPF_FRAMES_311,
		   .gil_kind = PYEBPF_GIL_TSTATE_CURRENT,
		   .interp_next = 0,
		   .interp_threads_head = 16,
		   .tstate_next = 8,
		   .tstate_interp = 16,
		   .tstate_thread_id = 152,
		   .tstate_frame = 56,
		   .cframe_current_frame = 8,
		   .frame_back = 48,
		   .frame_code = 32,
		   .frame_lasti = 56,
		   .frame_owner = 68,
		   .frame_read_size = 72,
		   .frame_globals = 8,
		   .code_adaptive = 184 },
	  .runtime_interp_head = 40,
	  .runtime_tstate_current = 576,
	  .co_filename = 112,
	  .co_name = 120,
	  .co_qualname = 128,
	  .co_firstlineno = 72,
	  .co_linetable = 136,
	  .linetable = PY_LOCATIONS_311,
	  UNICODE_311,
	  .frame_localsplus = 72,
	  .ht_cached_keys = 872,
	  .dict = PY_DICT_311,
	  .managed = PY_MANAGED_311 },
	{ .major = 3,
	  .minor = 12,
	  .bpf = { .frame_kind = PYEBPF_FRAMES_312,
		   .gil_kind = PYEBPF_GIL_INTERP_PTR,
		   .interp_next = 0,
		   .interp_threads_head = 72,
		   .tstate_next = 8,
		   .tstate_interp = 16,
		   .tstate_thread_id = 136,
		   .tstate_frame = 56,
		   .cframe_current_frame = 0,
		   .frame_back = 8,
		   .frame_code = 0,
		   .frame_lasti = 56,
		   .frame_owner = 70,
		   .frame_read_size = 72,
		   .frame_globals = 24,
		   .code_adaptive = 192,
		   .gil_off = 384,
		   .gil_locked = 16,
		   .gil_holder = 8,
		   .tstate_status = 24 },
	  .runtime_interp_head = 40,
	  .runtime_tstate_current = NO,
	  .co_filename = 112,
	  .co_name = 120,
	  .co_qualname = 128,
	  .co_firstlineno = 68,
	  .co_linetable = 136,
	  .linetable = PY_LOCATIONS_311,
	  UNICODE_312,
	  .frame_localsplus = 72,
	  .ht_cached_keys = 880,
	  .dict = PY_DICT_311,
	  .managed = PY_MANAGED_312 },
	{ .major = 3,
	  .minor = 13,
	  .bpf = { .frame_kind = PYEBPF_FRAMES_312,
		   .gil_kind = PYEBPF_GIL_INTERP_EMBEDDED,
		   .interp_next = 7264,
		   .interp_threads_head = 7344,
		   .tstate_next = 8,
		   .tstate_interp = 16,
		   .tstate_thread_id = 152,
		   .tstate_frame = 72,
		   .cframe_current_frame = NO,
		   .frame_back = 8,
		   .frame_code = 0,
		   .frame_lasti = 56,
		   .frame_owner = 70,
		   .frame_read_size = 72,
		   .frame_globals = 24,
		   .code_adaptive = 200,
		   .gil_off = 7752,
		   .gil_locked = 16,
		   .gil_holder = 8,
		   .tstate_status = 32 },
	  .runtime_interp_head = 632,
	  .runtime_tstate_current = NO,
	  .co_filename = 112,
	  .co_name = 120,
	  .co_qualname = 128,
	  .co_firstlineno = 68,
	  .co_linetable = 136,
	  .linetable = PY_LOCATIONS_311,
	  UNICODE_312,
	  .frame_localsplus = 72,
	  .ht_cached_keys = 880,
	  .dict_values = 8,
	  .dict = PY_DICT_311,
	  .managed = PY_MANAGED_313 },
};

const struct py_layout *py_layout_builtin(int major, int minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

const struct py_layout *py_layouts_builtin(size_t *n)
{
	*n = sizeof(layouts) / sizeof(layouts[0]);
	return layouts;
}

static uint64_t u64_at(const uint8_t *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/*
 * Positions of the fields we use inside _Py_DebugOffsets as 3.13 lays it
 * out (Include/internal/pycore_runtime.h). Later versions reorder the block:
 * they are refused by version until their positions are added here.
 */
int py_layout_from_debug_offsets(const uint8_t *buf, size_t len, struct py_layout *out, const char **why)
{
	uint64_t version, v[32];
	static const size_t pos[] = {
		40,  /* 0 runtime_state.interpreters_head */
		64,  /* 1 interpreter_state.next */
		72,  /* 2 interpreter_state.threads_head */
		120, /* 3 interpreter_state.gil_runtime_state */
		136, /* 4 interpreter_state.gil_runtime_state_locked (from interp, not from the GIL) */
		144, /* 5 interpreter_state.gil_runtime_state_holder (likewise) */
		168, /* 6 thread_state.next */
		176, /* 7 thread_state.interp */
		184, /* 8 thread_state.current_frame */
		192, /* 9 thread_state.thread_id */
		232, /* 10 interpreter_frame.previous */
		240, /* 11 interpreter_frame.executable */
		248, /* 12 interpreter_frame.instr_ptr */
		264, /* 13 interpreter_frame.owner */
		280, /* 14 code_object.filename */
		288, /* 15 code_object.name */
		296, /* 16 code_object.qualname */
		304, /* 17 code_object.linetable */
		312, /* 18 code_object.firstlineno */
		344, /* 19 code_object.co_code_adaptive */
		544, /* 20 unicode_object.state */
		552, /* 21 unicode_object.length */
		560, /* 22 unicode_object.asciiobject_size */
		520, /* 23 bytes_object.ob_size */
		528, /* 24 bytes_object.ob_sval */
		256, /* 25 interpreter_frame.localsplus */
	};
	uint64_t frame_max = 0;

	if (len < PY_DEBUG_OFFSETS_313_SIZE || memcmp(buf, PY_DEBUG_OFFSETS_COOKIE, 8) != 0) {
		*why = "no _Py_DebugOffsets at the start of _PyRuntime";
		return -1;
	}
	version = u64_at(buf, 8);
	if (((version >> 24) & 0xff) != 3 || ((version >> 16) & 0xff) != 13) {
		*why = "a _Py_DebugOffsets layout this pyebpf does not know";
		return -1;
	}
	if (u64_at(buf, 16)) {
		*why = "a free-threaded build";
		return -1;
	}
	for (size_t i = 0; i < sizeof(pos) / sizeof(pos[0]); i++) {
		v[i] = u64_at(buf, pos[i]);
		if (v[i] > 0x100000) {
			*why = "implausible _Py_DebugOffsets";
			return -1;
		}
	}
	/* previous, executable, instr_ptr are pointers; owner is one byte. */
	for (int i = 10; i <= 13; i++)
		if (v[i] + (i == 13 ? 1 : 8) > frame_max)
			frame_max = v[i] + (i == 13 ? 1 : 8);
	frame_max = (frame_max + 7) & ~7ULL;
	if (frame_max > PYEBPF_MAX_FRAME_READ) {
		*why = "interpreter frames larger than pyebpf reads";
		return -1;
	}
	*out = *py_layout_builtin(3, 13); /* what the block does not say */
	out->bpf.interp_next = v[1];
	out->bpf.interp_threads_head = v[2];
	out->bpf.gil_off = v[3];
	/* 3.13 gives these from the start of the interpreter state. */
	if (v[4] < v[3] || v[5] < v[3]) {
		*why = "implausible GIL offsets in _Py_DebugOffsets";
		return -1;
	}
	out->bpf.gil_locked = v[4] - v[3];
	out->bpf.gil_holder = v[5] - v[3];
	out->bpf.tstate_next = v[6];
	out->bpf.tstate_interp = v[7];
	out->bpf.tstate_frame = v[8];
	out->bpf.tstate_thread_id = v[9];
	out->bpf.frame_back = v[10];
	out->bpf.frame_code = v[11];
	out->bpf.frame_lasti = v[12];
	out->bpf.frame_owner = v[13];
	out->bpf.frame_read_size = frame_max;
	out->bpf.code_adaptive = v[19];
	out->runtime_interp_head = v[0];
	out->co_filename = v[14];
	out->co_name = v[15];
	out->co_qualname = v[16];
	out->co_linetable = v[17];
	out->co_firstlineno = v[18];
	out->uni_state = v[20];
	out->uni_length = v[21];
	out->uni_ascii_data = v[22];
	out->uni_compact_data = v[22] + 16; /* + utf8_length, utf8 */
	out->bytes_size = v[23];
	out->bytes_data = v[24];
	out->frame_localsplus = v[25];
	return 0;
}
