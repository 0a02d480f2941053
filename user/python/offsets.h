/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * CPython layouts: what the BPF walker needs (struct pyebpf_py_offsets) and
 * what userspace needs to read code objects and strings. One built-in table
 * per minor version (checked against DWARF by tests/unit/test_offsets.c);
 * 3.13+ describe themselves in _Py_DebugOffsets at the start of _PyRuntime.
 */
#ifndef PYEBPF_PY_OFFSETS_H
#define PYEBPF_PY_OFFSETS_H

#include <stddef.h>
#include <stdint.h>

#include "pyebpf.h"

enum py_linetable_format {
	PY_LNOTAB_27 = 1, /* co_lnotab, unsigned line deltas */
	PY_LNOTAB_36,     /* co_lnotab, signed line deltas */
	PY_LINETABLE_310, /* co_linetable: (byte delta, signed line delta) pairs */
	PY_LOCATIONS_311, /* co_linetable: the 3.11+ location table */
};

enum py_str_format {
	PY_STR_BYTES_27 = 1, /* PyStringObject */
	PY_STR_UNICODE,      /* PEP 393 PyASCIIObject / PyCompactUnicodeObject */
};

enum py_dict_format {
	PY_DICT_27 = 1, /* ma_mask, ma_table of (hash, key, value) */
	PY_DICT_36,     /* PyDictKeysObject with dk_size, dk_indices */
	PY_DICT_311,    /* PyDictKeysObject with dk_log2_size, dk_kind */
};

/* Where instance attributes live when there is no __dict__ object (yet). */
enum py_managed_dict {
	PY_MANAGED_NONE = 0, /* <= 3.10: a dict at tp_dictoffset */
	PY_MANAGED_311,      /* dict at obj[-3], values at obj[-4] */
	PY_MANAGED_312,      /* obj[-3]: dict, or values tagged with bit 0 */
	PY_MANAGED_313,      /* obj[-3]: dict; values inline after the object */
	PY_MANAGED_313_FT,   /* free-threaded 3.13+: obj[-1] (no GC header before it) */
};

struct py_layout {
	int major, minor;
	int free_threaded; /* a --disable-gil build (3.13t...): no GIL, 32-byte object headers */
	struct pyebpf_py_offsets bpf;
	/* Where the interpreter list starts: an offset in _PyRuntime (3.7+),
	 * else PYEBPF_NO_OFFSET and the static `interp_head` (2.7, 3.6). */
	uint32_t runtime_interp_head;
	/* GIL_TSTATE_CURRENT: offset in _PyRuntime of gilstate.tstate_current
	 * (3.7–3.11); PYEBPF_NO_OFFSET: the `_PyThreadState_Current` global. */
	uint32_t runtime_tstate_current;
	/* Code objects (PyCodeObject). */
	uint32_t co_filename, co_name, co_qualname, co_firstlineno, co_linetable;
	enum py_linetable_format linetable;
	/* Strings. */
	enum py_str_format str;
	uint32_t str_size, str_data;               /* 2.7 PyStringObject: ob_size, ob_sval */
	uint32_t uni_length, uni_state;            /* PyASCIIObject */
	uint32_t uni_ascii_data, uni_compact_data; /* sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject) */
	uint32_t bytes_size, bytes_data;           /* PyBytesObject: ob_size, ob_sval */
	uint32_t uni_kind_shift; /* where state.kind starts (then compact, ascii): 2, or 8 where interned is a byte */
	/* Objects: where a PyObject's type is, and the type and dict fields
	 * thread names are found through (each 16 bytes further on free-threaded builds). */
	uint32_t ob_type, tp_basicsize, tp_dictoffset, ma_keys, ma_values;
	/* Thread names: the first local of a frame, and instance attributes. */
	uint32_t frame_localsplus; /* f_localsplus / localsplus */
	uint32_t ht_cached_keys;   /* PyHeapTypeObject: shared keys of instances */
	uint32_t dict_values;      /* offset of values[] in PyDictValues */
	enum py_dict_format dict;
	enum py_managed_dict managed;
	/* `pyebpf dump --locals`: a frame's local names and values. <= 3.10:
	 * co_nlocals (an int) names in co_varnames; 3.11+: every fast local in
	 * co_localsplusnames with its kind in co_localspluskinds; else NO. */
	uint32_t co_nlocals, co_varnames, co_localsplusnames, co_localspluskinds;
	uint32_t tuple_size, tuple_items;    /* PyTupleObject: ob_size, ob_item */
	uint32_t tp_name, tp_flags, tp_base; /* PyTypeObject */
	uint32_t float_value;                /* PyFloatObject.ob_fval */
	/* PyLongObject: ob_size (<= 3.11: signed digit count) or long_value.lv_tag
	 * (3.12+), and its 30-bit digits; 2.7's PyIntObject.ob_ival at int_value. */
	uint32_t long_size, long_digits, int_value;
	/* asyncio tasks where no .AsyncioDebug section says where they are
	 * (3.11–3.13; 0 elsewhere): the modules dict (interp->modules, 3.12+
	 * interp->imports.modules), a coroutine's embedded frame and state, the
	 * frame's stack top (an index into localsplus), the TaskObj fields of
	 * _asyncio (FutureObj_HEAD then the task's own), a weakref's referent and
	 * a set's table. */
	struct py_asyncio_offsets {
		uint32_t interp_modules;
		uint32_t gi_iframe, gi_frame_state, frame_stacktop;
		uint32_t task_fut_waiter, task_coro, task_name;
		uint32_t wr_object, set_mask, set_table, md_dict;
		int8_t suspended_yield_from; /* gi_frame_state of a coroutine inside an await */
	} asyncio;
};

/* The built-in layout of a version (free_threaded: its --disable-gil build), or NULL. */
const struct py_layout *py_layout_builtin(int major, int minor, int free_threaded);
/*
 * Tell the BPF walker where the fields of a code object's check are
 * (pyebpf_code_check: its name, file and first line), from the layout's
 * co_* fields; a layout whose fields lie too far apart gets none.
 */
void py_layout_code_check(struct py_layout *l);

/* Tell the BPF walker how to read the thread's context variables
 * (bpf/context.bpf.h) from the layout's object fields. */
void py_layout_context(struct py_layout *l);

/* Bytes of a code object that cover every field a frame is named from,
 * at most PY_CODE_READ_MAX: never read past the object (it may end a
 * mapping). BPF copies as much (pyebpf_py_offsets.code_copy_len). */
#define PY_CODE_READ_MAX 256
size_t py_code_read_size(const struct py_layout *l);
/* Every built-in layout, for tests. */
const struct py_layout *py_layouts_builtin(size_t *n);

#define PY_DEBUG_OFFSETS_COOKIE "xdebugpy"
/* The largest _Py_DebugOffsets block pyebpf knows (3.15's): read this much. */
#define PY_DEBUG_OFFSETS_MAX_SIZE 888

/* The size of version 3.minor's block, 0 for a version without a known one. */
size_t py_debug_offsets_size(int minor);
/* Where field `f` (enum py_debug_field) lies in version 3.minor's block; 0: not in it. */
size_t py_debug_offsets_pos(int minor, int field);

/* Build a layout from the _Py_DebugOffsets block (3.13+) read from a process:
 * the block's own positions, the built-in table for what it does not say.
 * 0, or -1 with *why set (wrong cookie, a version or build whose layout this
 * pyebpf does not know, implausible values). */
int py_layout_from_debug_offsets(const uint8_t *buf, size_t len, struct py_layout *out, const char **why);

#endif
