// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The numbers below come from the DWARF of CPython builds (2.7.18, 3.6.15,
 * 3.7.16, 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1, 3.13.0, x86-64) and are
 * re-checked against the installed interpreters' DWARF by the tests.
 * 3.13+ entries are what their _Py_DebugOffsets blocks give (the tests
 * check that the block of each build yields its entry exactly) and what
 * the block does not say, from each build's headers (tests/fixtures/
 * layout_probe.c, compiled against them, checks those too).
 */
#include "python/offsets.h"

#include <stddef.h>
#include <string.h>

#include "python/debug_offsets.h"

#define NO PYEBPF_NO_OFFSET

/* Shared by every PEP 393 version up to 3.11 (PyASCIIObject has wstr). */
#define UNICODE_311                                                                                             \
	.str = PY_STR_UNICODE, .uni_length = 16, .uni_state = 32, .uni_ascii_data = 48, .uni_compact_data = 72, \
	.bytes_size = 16, .bytes_data = 32
#define UNICODE_312                                                                                             \
	.str = PY_STR_UNICODE, .uni_length = 16, .uni_state = 32, .uni_ascii_data = 40, .uni_compact_data = 56, \
	.bytes_size = 16, .bytes_data = 32

#define UNICODE_312_FT                                                                                          \
	.str = PY_STR_UNICODE, .uni_length = 32, .uni_state = 48, .uni_ascii_data = 56, .uni_compact_data = 72, \
	.bytes_size = 32, .bytes_data = 48

/* Object headers of 16 bytes (every build with a GIL): PyObject.ob_type,
 * PyTypeObject, PyDictObject, PEP 393's state bits. */
#define OBJECTS_16                                                                                                   \
	.ob_type = 8, .tp_basicsize = 32, .tp_dictoffset = 288, .ma_keys = 32, .ma_values = 40, .uni_kind_shift = 2, \
	.tuple_size = 16, .tp_name = 24, .tp_flags = 168, .tp_base = 256, .float_value = 16, .long_size = 16,        \
	.long_digits = 24
/* Free-threaded builds: 32-byte headers (ob_tid, ob_flags, ob_mutex,
 * ob_gc_bits, ob_ref_local, ob_ref_shared before ob_type). From 3.14 the
 * string's `interned` is a byte of its own (uni_kind_shift 8). */
#define OBJECTS_32                                                                                                   \
	.free_threaded = 1, .ob_type = 24, .tp_basicsize = 48, .tp_dictoffset = 304, .ma_keys = 48, .ma_values = 56, \
	.tuple_size = 32, .tp_name = 40, .tp_flags = 184, .tp_base = 272, .float_value = 32, .long_size = 32,        \
	.long_digits = 40

/* PyFrameObject (<= 3.10): f_back and f_code; f_lasti varies. */
#define FRAME_OBJECT(lasti, mult)                                                                       \
	.frame_kind = PYEBPF_FRAMES_OBJECT, .frame_back = 24, .frame_code = 32, .frame_lasti = (lasti), \
	.frame_owner = NO, .frame_read_size = 128, .lasti_mult = (mult), .cframe_current_frame = NO,    \
	.frame_globals = 48

static const struct py_layout layouts[] = {
	{ .major = 2,
	  .minor = 7,
	  OBJECTS_16,
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
	  .co_nlocals = 20,
	  .co_varnames = 56,
	  .co_localsplusnames = NO,
	  .co_localspluskinds = NO,
	  .tuple_items = 24,
	  .int_value = 16,
	  .linetable = PY_LNOTAB_27,
	  .str = PY_STR_BYTES_27,
	  .str_size = 16,
	  .str_data = 36,
	  .frame_localsplus = 376,
	  .dict = PY_DICT_27 },
	{ .major = 3,
	  .minor = 6,
	  OBJECTS_16,
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
	  .co_nlocals = 24,
	  .co_varnames = 64,
	  .co_localsplusnames = NO,
	  .co_localspluskinds = NO,
	  .tuple_items = 24,
	  .linetable = PY_LNOTAB_36,
	  UNICODE_311,
	  .frame_localsplus = 376,
	  .ht_cached_keys = 856,
	  .dict = PY_DICT_36 },
	{ .major = 3,
	  .minor = 7,
	  OBJECTS_16,
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
	  .co_nlocals = 24,
	  .co_varnames = 64,
	  .co_localsplusnames = NO,
	  .co_localspluskinds = NO,
	  .tuple_items = 24,
	  .linetable = PY_LNOTAB_36,
	  UNICODE_311,
	  .frame_localsplus = 360,
	  .ht_cached_keys = 856,
	  .dict = PY_DICT_36 },
	{ .major = 3,
	  .minor = 8,
	  OBJECTS_16,
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
	  .co_nlocals = 28,
	  .co_varnames = 72,
	  .co_localsplusnames = NO,
	  .co_localspluskinds = NO,
	  .tuple_items = 24,
	  .linetable = PY_LNOTAB_36,
	  UNICODE_311,
	  .frame_localsplus = 360,
	  .ht_cached_keys = 872,
	  .dict = PY_DICT_36 },
	{ .major = 3,
	  .minor = 9,
	  OBJECTS_16,
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
	  .co_nlocals = 28,
	  .co_varnames = 72,
	  .co_localsplusnames = NO,
	  .co_localspluskinds = NO,
	  .tuple_items = 24,
	  .linetable = PY_LNOTAB_36,
	  UNICODE_311,
	  .frame_localsplus = 360,
	  .ht_cached_keys = 864,
	  .dict = PY_DICT_36 },
	{ .major = 3,
	  .minor = 10,
	  OBJECTS_16,
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
	  .co_nlocals = 28,
	  .co_varnames = 72,
	  .co_localsplusnames = NO,
	  .co_localspluskinds = NO,
	  .tuple_items = 24,
	  .linetable = PY_LINETABLE_310,
	  UNICODE_311,
	  .frame_localsplus = 352,
	  .ht_cached_keys = 872,
	  .dict = PY_DICT_36 },
	{ .major = 3,
	  .minor = 11,
	  OBJECTS_16,
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
	  .co_nlocals = NO,
	  .co_varnames = NO,
	  .co_localsplusnames = 96,
	  .co_localspluskinds = 104,
	  .tuple_items = 24,
	  .linetable = PY_LOCATIONS_311,
	  UNICODE_311,
	  .frame_localsplus = 72,
	  .ht_cached_keys = 872,
	  .dict = PY_DICT_311,
	  .managed = PY_MANAGED_311,
	  .asyncio = { .interp_modules = 888,
		       .gi_iframe = 80,
		       .gi_frame_state = 75,
		       .frame_stacktop = 64,
		       .task_fut_waiter = 128,
		       .task_coro = 136,
		       .task_name = 144,
		       .wr_object = 16,
		       .set_mask = 32,
		       .set_table = 40,
		       .md_dict = 16,
		       .suspended_yield_from = -1 } },
	{ .major = 3,
	  .minor = 12,
	  OBJECTS_16,
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
	  .co_nlocals = NO,
	  .co_varnames = NO,
	  .co_localsplusnames = 96,
	  .co_localspluskinds = 104,
	  .tuple_items = 24,
	  .linetable = PY_LOCATIONS_311,
	  UNICODE_312,
	  .frame_localsplus = 72,
	  .ht_cached_keys = 880,
	  .dict = PY_DICT_311,
	  .managed = PY_MANAGED_312,
	  .asyncio = { .interp_modules = 944,
		       .gi_iframe = 72,
		       .gi_frame_state = 67,
		       .frame_stacktop = 64,
		       .task_fut_waiter = 128,
		       .task_coro = 136,
		       .task_name = 144,
		       .wr_object = 16,
		       .set_mask = 32,
		       .set_table = 40,
		       .md_dict = 16,
		       .suspended_yield_from = -1 } },
	{ .major = 3,
	  .minor = 13,
	  OBJECTS_16,
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
	  .co_nlocals = NO,
	  .co_varnames = NO,
	  .co_localsplusnames = 96,
	  .co_localspluskinds = 104,
	  .tuple_items = 24,
	  .linetable = PY_LOCATIONS_311,
	  UNICODE_312,
	  .frame_localsplus = 72,
	  .ht_cached_keys = 880,
	  .dict_values = 8,
	  .dict = PY_DICT_311,
	  .managed = PY_MANAGED_313,
	  .asyncio = { .interp_modules = 7656,
		       .gi_iframe = 72,
		       .gi_frame_state = 67,
		       .frame_stacktop = 64,
		       .task_fut_waiter = 112,
		       .task_coro = 120,
		       .task_name = 128,
		       .wr_object = 16,
		       .set_mask = 32,
		       .set_table = 40,
		       .md_dict = 16,
		       .suspended_yield_from = -1 } },
	{ .major = 3,
	  .minor = 14,
	  OBJECTS_16,
	  .bpf = { .frame_kind = PYEBPF_FRAMES_312,
		   .gil_kind = PYEBPF_GIL_INTERP_EMBEDDED,
		   .interp_next = 7272,
		   .interp_threads_head = 7344,
		   .tstate_next = 8,
		   .tstate_interp = 16,
		   .tstate_thread_id = 152,
		   .tstate_frame = 72,
		   .cframe_current_frame = NO,
		   .frame_back = 8,
		   .frame_code = 0,
		   .frame_lasti = 56,
		   .frame_owner = 74,
		   .frame_read_size = 80,
		   .frame_globals = 24,
		   .code_adaptive = 208,
		   .gil_off = 7784,
		   .gil_locked = 16,
		   .gil_holder = 8,
		   .executable_mask = 3, /* _PyStackRef: Py_TAG_BITS */
		   .tstate_status = 32,
		   .tstate_running_task = 872 },
	  .runtime_interp_head = 808,
	  .runtime_tstate_current = NO,
	  .co_filename = 112,
	  .co_name = 120,
	  .co_qualname = 128,
	  .co_firstlineno = 68,
	  .co_linetable = 136,
	  .co_nlocals = NO,
	  .co_varnames = NO,
	  .co_localsplusnames = 96,
	  .co_localspluskinds = 104,
	  .tuple_items = 32,
	  .linetable = PY_LOCATIONS_311,
	  UNICODE_312,
	  .frame_localsplus = 80,
	  .ht_cached_keys = 880,
	  .dict_values = 8,
	  .dict = PY_DICT_311,
	  .managed = PY_MANAGED_313 },
	{ .major = 3,
	  .minor = 15,
	  OBJECTS_16,
	  .bpf = { .frame_kind = PYEBPF_FRAMES_312,
		   .gil_kind = PYEBPF_GIL_INTERP_EMBEDDED,
		   .interp_next = 7264,
		   .interp_threads_head = 7336,
		   .tstate_next = 8,
		   .tstate_interp = 16,
		   .tstate_thread_id = 176,
		   .tstate_frame = 72,
		   .cframe_current_frame = NO,
		   .frame_back = 8,
		   .frame_code = 0,
		   .frame_lasti = 56,
		   .frame_owner = 74,
		   .frame_read_size = 80,
		   .frame_globals = 24,
		   .code_adaptive = 208,
		   .gil_off = 7736,
		   .gil_locked = 16,
		   .gil_holder = 8,
		   .executable_mask = 3,
		   .tstate_status = 32,
		   .tstate_running_task = 1032 },
	  .runtime_interp_head = 936,
	  .runtime_tstate_current = NO,
	  .co_filename = 112,
	  .co_name = 120,
	  .co_qualname = 128,
	  .co_firstlineno = 68,
	  .co_linetable = 136,
	  .co_nlocals = NO,
	  .co_varnames = NO,
	  .co_localsplusnames = 96,
	  .co_localspluskinds = 104,
	  .tuple_items = 32,
	  .linetable = PY_LOCATIONS_311,
	  UNICODE_312,
	  .frame_localsplus = 80,
	  .ht_cached_keys = 888,
	  .dict_values = 8,
	  .dict = PY_DICT_311,
	  .managed = PY_MANAGED_313 },
	/* Free-threaded builds: no GIL to read (the GIL fields say where
	 * _gil is all the same), per-thread bytecode from 3.14. */
	{ .major = 3,
	  .minor = 13,
	  OBJECTS_32,
	  .uni_kind_shift = 2,
	  .bpf = { .frame_kind = PYEBPF_FRAMES_312,
		   .gil_kind = PYEBPF_GIL_NONE,
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
		   .code_adaptive = 216,
		   .gil_off = 7760,
		   .gil_locked = 24,
		   .gil_holder = 16,
		   .tstate_status = 32 },
	  .runtime_interp_head = 632,
	  .runtime_tstate_current = NO,
	  .co_filename = 128,
	  .co_name = 136,
	  .co_qualname = 144,
	  .co_firstlineno = 84,
	  .co_linetable = 152,
	  .co_nlocals = NO,
	  .co_varnames = NO,
	  .co_localsplusnames = 112,
	  .co_localspluskinds = 120,
	  .tuple_items = 40,
	  .linetable = PY_LOCATIONS_311,
	  UNICODE_312_FT,
	  .frame_localsplus = 72,
	  .ht_cached_keys = 896,
	  .dict_values = 8,
	  .dict = PY_DICT_311,
	  .managed = PY_MANAGED_313_FT,
	  .asyncio = { .interp_modules = 7664,
		       .gi_iframe = 88,
		       .gi_frame_state = 83,
		       .frame_stacktop = 64,
		       .task_fut_waiter = 128,
		       .task_coro = 136,
		       .task_name = 144,
		       .wr_object = 32,
		       .set_mask = 48,
		       .set_table = 56,
		       .md_dict = 32,
		       .suspended_yield_from = -1 } },
	{ .major = 3,
	  .minor = 14,
	  OBJECTS_32,
	  .uni_kind_shift = 8,
	  .bpf = { .frame_kind = PYEBPF_FRAMES_312,
		   .gil_kind = PYEBPF_GIL_NONE,
		   .interp_next = 7272,
		   .interp_threads_head = 7344,
		   .tstate_next = 8,
		   .tstate_interp = 16,
		   .tstate_thread_id = 152,
		   .tstate_frame = 72,
		   .cframe_current_frame = NO,
		   .frame_back = 8,
		   .frame_code = 0,
		   .frame_lasti = 56,
		   .frame_owner = 78,
		   .frame_read_size = 80,
		   .frame_globals = 24,
		   .code_adaptive = 232,
		   .gil_off = 7808,
		   .gil_locked = 24,
		   .gil_holder = 16,
		   .executable_mask = 1, /* 3.14t tags deferred references with bit 0 only */
		   .tstate_status = 32,
		   .code_tlbc = 224,
		   .frame_tlbc_index = 72,
		   /* _PyThreadStateImpl's asyncio fields precede the free-threaded
		    * ones: as 3.14's (3.14.7t's .AsyncioDebug section says 872). */
		   .tstate_running_task = 872 },
	  .runtime_interp_head = 808,
	  .runtime_tstate_current = NO,
	  .co_filename = 128,
	  .co_name = 136,
	  .co_qualname = 144,
	  .co_firstlineno = 84,
	  .co_linetable = 152,
	  .co_nlocals = NO,
	  .co_varnames = NO,
	  .co_localsplusnames = 112,
	  .co_localspluskinds = 120,
	  .tuple_items = 48,
	  .linetable = PY_LOCATIONS_311,
	  UNICODE_312_FT,
	  .frame_localsplus = 80,
	  .ht_cached_keys = 896,
	  .dict_values = 8,
	  .dict = PY_DICT_311,
	  .managed = PY_MANAGED_313_FT },
	{ .major = 3,
	  .minor = 15,
	  OBJECTS_32,
	  .uni_kind_shift = 8,
	  .bpf = { .frame_kind = PYEBPF_FRAMES_312,
		   .gil_kind = PYEBPF_GIL_NONE,
		   .interp_next = 7264,
		   .interp_threads_head = 7336,
		   .tstate_next = 8,
		   .tstate_interp = 16,
		   .tstate_thread_id = 176,
		   .tstate_frame = 72,
		   .cframe_current_frame = NO,
		   .frame_back = 8,
		   .frame_code = 0,
		   .frame_lasti = 56,
		   .frame_owner = 78,
		   .frame_read_size = 80,
		   .frame_globals = 24,
		   .code_adaptive = 232,
		   .gil_off = 7736,
		   .gil_locked = 24,
		   .gil_holder = 16,
		   .executable_mask = 3,
		   .tstate_status = 32,
		   .code_tlbc = 224,
		   .frame_tlbc_index = 72,
		   /* as 3.15's, for the reason 3.14t's is 3.14's; the task sampler
		    * trusts it only where the build's section agrees */
		   .tstate_running_task = 1032 },
	  .runtime_interp_head = 936,
	  .runtime_tstate_current = NO,
	  .co_filename = 128,
	  .co_name = 136,
	  .co_qualname = 144,
	  .co_firstlineno = 84,
	  .co_linetable = 152,
	  .co_nlocals = NO,
	  .co_varnames = NO,
	  .co_localsplusnames = 112,
	  .co_localspluskinds = 120,
	  .tuple_items = 48,
	  .linetable = PY_LOCATIONS_311,
	  UNICODE_312_FT,
	  .frame_localsplus = 80,
	  .ht_cached_keys = 904,
	  .dict_values = 8,
	  .dict = PY_DICT_311,
	  .managed = PY_MANAGED_313_FT },
};

const struct py_layout *py_layout_builtin(int major, int minor, int free_threaded)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].major == major && layouts[i].minor == minor &&
		    layouts[i].free_threaded == !!free_threaded)
			return &layouts[i];
	return NULL;
}

const struct py_layout *py_layouts_builtin(size_t *n)
{
	*n = sizeof(layouts) / sizeof(layouts[0]);
	return layouts;
}

/*
 * Where each field pyebpf reads lies in each version's _Py_DebugOffsets,
 * by name through that version's struct (debug_offsets.h); 0: the
 * version's block does not have the field.
 */
struct debug_layout {
	int minor;
	size_t size;
	uint16_t pos[PY_DBG__COUNT];
};

#define POS_313(id, path) [PY_DBG_##id] = offsetof(struct py_debug_offsets_313, path),
#define POS_314(id, path) [PY_DBG_##id] = offsetof(struct py_debug_offsets_314, path),
#define POS_315(id, path) [PY_DBG_##id] = offsetof(struct py_debug_offsets_315, path),

static const struct debug_layout debug_layouts[] = {
	{ 13, sizeof(struct py_debug_offsets_313), { PY_DEBUG_FIELDS_313(POS_313) } },
	{ 14, sizeof(struct py_debug_offsets_314), { PY_DEBUG_FIELDS_313(POS_314) PY_DEBUG_FIELDS_314(POS_314) } },
	{ 15,
	  sizeof(struct py_debug_offsets_315),
	  { PY_DEBUG_FIELDS_313(POS_315) PY_DEBUG_FIELDS_314(POS_315) PY_DEBUG_FIELDS_315(POS_315) } },
};

static const struct debug_layout *debug_layout(int minor)
{
	for (size_t i = 0; i < sizeof(debug_layouts) / sizeof(debug_layouts[0]); i++)
		if (debug_layouts[i].minor == minor)
			return &debug_layouts[i];
	return NULL;
}

size_t py_debug_offsets_size(int minor)
{
	const struct debug_layout *d = debug_layout(minor);

	return d ? d->size : 0;
}

size_t py_debug_offsets_pos(int minor, int field)
{
	const struct debug_layout *d = debug_layout(minor);

	return d && field >= 0 && field < PY_DBG__COUNT ? d->pos[field] : 0;
}

static uint64_t u64_at(const uint8_t *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

size_t py_code_read_size(const struct py_layout *l)
{
	uint32_t offs[] = { l->ob_type, l->co_name, l->co_filename, l->co_firstlineno, l->co_linetable, l->co_qualname };
	size_t max = 0;

	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		if (offs[i] != PYEBPF_NO_OFFSET && offs[i] + 8 > max)
			max = offs[i] + 8;
	return max < PY_CODE_READ_MAX ? max : PY_CODE_READ_MAX;
}

/*
 * PyThreadState.context by version (3.7+; the struct's fields before it
 * are alike in the free-threaded builds), checked against each version's
 * headers and DWARF by tests/unit/test_offsets.c; 0: no context variables.
 */
static uint32_t tstate_context(int major, int minor)
{
	static const uint32_t by_minor[] = {
		[7] = 256, [8] = 240, [9] = 240, [10] = 240, [11] = 224, [12] = 208, [13] = 208, [14] = 208, [15] = 232
	};

	if (major != 3 || minor < 0 || (size_t)minor >= sizeof(by_minor) / sizeof(by_minor[0]))
		return 0;
	return by_minor[minor];
}

void py_layout_context(struct py_layout *l)
{
	struct pyebpf_py_offsets *o = &l->bpf;

	o->tstate_context = tstate_context(l->major, l->minor);
	o->obj_type = l->ob_type;
	o->tuple_items = l->tuple_items;
	o->long_size = l->long_size;
	o->long_digits = l->long_digits;
	o->ctx_layout = (l->dict == PY_DICT_311 ? PYEBPF_CTXL_DICT_311 : 0) |
			(l->major == 3 && l->minor >= 12 ? PYEBPF_CTXL_LONG_TAGGED : 0);
	if (l->dict != PY_DICT_311 && l->dict != PY_DICT_36)
		o->tstate_context = 0;
}

void py_layout_code_check(struct py_layout *l)
{
	struct pyebpf_py_offsets *o = &l->bpf;
	uint32_t name = l->co_qualname != PYEBPF_NO_OFFSET ? l->co_qualname : l->co_name;
	uint32_t start = name, end = name + 8;

	/* f_locals follows f_builtins, which follows f_globals (<= 3.10's
	 * PyFrameObject: f_globals, f_locals). */
	o->frame_locals = o->frame_globals + (o->frame_kind == PYEBPF_FRAMES_OBJECT ? 8 : 16);
	o->code_check_len = 0;
	o->code_copy_len = 0;
	if (name == PYEBPF_NO_OFFSET || l->co_filename == PYEBPF_NO_OFFSET || l->co_firstlineno == PYEBPF_NO_OFFSET)
		return;
	/* What a copy of the code object sends: all a frame is named from. */
	o->code_copy_len = (uint32_t)py_code_read_size(l);
	o->code_linetable = l->co_linetable != PYEBPF_NO_OFFSET ? l->co_linetable : 0;
	start = l->co_filename < start ? l->co_filename : start;
	start = l->co_firstlineno < start ? l->co_firstlineno : start;
	end = l->co_filename + 8 > end ? l->co_filename + 8 : end;
	end = l->co_firstlineno + 4 > end ? l->co_firstlineno + 4 : end;
	o->code_name = name;
	o->code_filename = l->co_filename;
	o->code_firstlineno = l->co_firstlineno;
	if (end - start <= PYEBPF_MAX_CODE_READ)
		o->code_check_len = end - start;
}

/* Every field a frame read must cover: where it ends, rounded up to 8. */
static uint32_t frame_read_size(const struct pyebpf_py_offsets *o)
{
	uint32_t ends[] = {
		o->frame_back + 8,  o->frame_code + 8,    o->frame_lasti + 8,
		o->frame_owner + 1, o->frame_globals + 8, o->frame_tlbc_index ? o->frame_tlbc_index + 4 : 0
	};
	uint32_t max = 0;

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		max = ends[i] > max ? ends[i] : max;
	return (max + 7) & ~7u;
}

int py_layout_from_debug_offsets(const uint8_t *buf, size_t len, struct py_layout *out, const char **why)
{
	uint64_t version, v[PY_DBG__COUNT];
	const struct debug_layout *d;
	const struct py_layout *builtin;
	int minor, ft;

	if (len < 24 || memcmp(buf, PY_DEBUG_OFFSETS_COOKIE, 8) != 0) {
		*why = "no _Py_DebugOffsets at the start of _PyRuntime";
		return -1;
	}
	version = u64_at(buf, 8);
	minor = (int)((version >> 16) & 0xff);
	d = ((version >> 24) & 0xff) == 3 ? debug_layout(minor) : NULL;
	if (!d) {
		*why = "a _Py_DebugOffsets layout this pyebpf does not know";
		return -1;
	}
	if (len < d->size) {
		*why = "a short _Py_DebugOffsets";
		return -1;
	}
	ft = u64_at(buf, 16) != 0;
	builtin = py_layout_builtin(3, minor, ft);
	if (!builtin) {
		*why = ft ? "a free-threaded build this pyebpf does not know" : "a build this pyebpf does not know";
		return -1;
	}
	for (int i = 0; i < PY_DBG__COUNT; i++) {
		v[i] = d->pos[i] ? u64_at(buf, d->pos[i]) : 0;
		if (v[i] > 0x100000) {
			*why = "implausible _Py_DebugOffsets";
			return -1;
		}
	}
	/* 3.13+ give the GIL's fields from the start of the interpreter state. */
	if (v[PY_DBG_GIL_LOCKED] < v[PY_DBG_GIL] || v[PY_DBG_GIL_HOLDER] < v[PY_DBG_GIL]) {
		*why = "implausible GIL offsets in _Py_DebugOffsets";
		return -1;
	}
	*out = *builtin; /* what the block does not say */
	struct pyebpf_py_offsets *o = &out->bpf;
	o->interp_next = v[PY_DBG_INTERP_NEXT];
	o->interp_threads_head = v[PY_DBG_THREADS_HEAD];
	o->gil_off = v[PY_DBG_GIL];
	o->gil_locked = v[PY_DBG_GIL_LOCKED] - v[PY_DBG_GIL];
	o->gil_holder = v[PY_DBG_GIL_HOLDER] - v[PY_DBG_GIL];
	o->tstate_next = v[PY_DBG_TS_NEXT];
	o->tstate_interp = v[PY_DBG_TS_INTERP];
	o->tstate_frame = v[PY_DBG_TS_FRAME];
	o->tstate_thread_id = v[PY_DBG_TS_THREAD_ID];
	o->tstate_status = v[PY_DBG_TS_STATUS];
	o->frame_back = v[PY_DBG_FR_PREVIOUS];
	o->frame_code = v[PY_DBG_FR_EXECUTABLE];
	o->frame_lasti = v[PY_DBG_FR_INSTR_PTR];
	o->frame_owner = v[PY_DBG_FR_OWNER];
	o->code_adaptive = v[PY_DBG_CO_ADAPTIVE];
	/* Per-thread bytecode: both fields, or neither (the block gives 0s
	 * on builds with a GIL). */
	o->code_tlbc = v[PY_DBG_CO_TLBC] && v[PY_DBG_FR_TLBC_INDEX] ? v[PY_DBG_CO_TLBC] : 0;
	o->frame_tlbc_index = o->code_tlbc ? v[PY_DBG_FR_TLBC_INDEX] : 0;
	o->frame_read_size = frame_read_size(o);
	if (o->frame_read_size > PYEBPF_MAX_FRAME_READ) {
		*why = "interpreter frames larger than pyebpf reads";
		return -1;
	}
	out->runtime_interp_head = v[PY_DBG_INTERP_HEAD];
	/* sys.modules, where 3.13's asyncio tasks are found from. */
	if (out->asyncio.task_coro && v[PY_DBG_IMPORTS_MODULES])
		out->asyncio.interp_modules = v[PY_DBG_IMPORTS_MODULES];
	out->co_filename = v[PY_DBG_CO_FILENAME];
	out->co_name = v[PY_DBG_CO_NAME];
	out->co_qualname = v[PY_DBG_CO_QUALNAME];
	out->co_linetable = v[PY_DBG_CO_LINETABLE];
	out->co_firstlineno = v[PY_DBG_CO_FIRSTLINENO];
	out->uni_state = v[PY_DBG_UNI_STATE];
	out->uni_length = v[PY_DBG_UNI_LENGTH];
	out->uni_ascii_data = v[PY_DBG_UNI_ASCII_SIZE];
	/* PyCompactUnicodeObject adds utf8_length and utf8 (3.15 says so itself). */
	out->uni_compact_data = d->pos[PY_DBG_UNI_COMPACT_SIZE] ? v[PY_DBG_UNI_COMPACT_SIZE] : out->uni_ascii_data + 16;
	out->bytes_size = v[PY_DBG_BYTES_SIZE];
	out->bytes_data = v[PY_DBG_BYTES_SVAL];
	out->frame_localsplus = v[PY_DBG_FR_LOCALSPLUS];
	out->ob_type = v[PY_DBG_OB_TYPE];
	out->ma_keys = v[PY_DBG_MA_KEYS];
	out->ma_values = v[PY_DBG_MA_VALUES];
	out->co_localsplusnames = v[PY_DBG_CO_LOCALSPLUSNAMES];
	out->co_localspluskinds = v[PY_DBG_CO_LOCALSPLUSKINDS];
	out->tp_name = v[PY_DBG_TP_NAME];
	out->tp_flags = v[PY_DBG_TP_FLAGS];
	out->tuple_items = v[PY_DBG_TUPLE_ITEM];
	out->tuple_size = v[PY_DBG_TUPLE_SIZE];
	out->float_value = v[PY_DBG_FLOAT_FVAL];
	out->long_size = v[PY_DBG_LONG_TAG];
	out->long_digits = v[PY_DBG_LONG_DIGIT];
	if (d->pos[PY_DBG_TP_BASICSIZE]) {
		out->tp_basicsize = v[PY_DBG_TP_BASICSIZE];
		out->tp_dictoffset = v[PY_DBG_TP_DICTOFFSET];
		out->ht_cached_keys = v[PY_DBG_HT_CACHED_KEYS];
	}
	return 0;
}
