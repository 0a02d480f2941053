/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * CPython's _Py_DebugOffsets, the block at the start of _PyRuntime through
 * which 3.13+ describe their own layout, as each version declares it
 * (Include/internal/pycore_runtime.h in 3.13, pycore_debug_offsets.h from
 * 3.14): every field a uint64_t, in CPython's order and with CPython's
 * names. Each version inserts fields before ones older versions had, so a
 * block is read through the struct of its own version, never by fixed
 * positions. tests/unit/test_offsets.c checks these structs against the
 * interpreters' headers (build/fixtures/layout-probe-*) and against the
 * blocks the interpreters carry.
 *
 * A new CPython version: copy its struct here (the field lists of the
 * header), add one line to debug_layouts[] in offsets.c.
 */
#ifndef PYEBPF_PY_DEBUG_OFFSETS_H
#define PYEBPF_PY_DEBUG_OFFSETS_H

#include <stdint.h>

struct py_debug_offsets_313 {
	char cookie[8];
	uint64_t version, free_threaded;
	struct {
		uint64_t size, finalizing, interpreters_head;
	} runtime_state;
	struct {
		uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins, ceval_gil,
			gil_runtime_state, gil_runtime_state_enabled, gil_runtime_state_locked,
			gil_runtime_state_holder;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk, status;
	} thread_state;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
			localspluskinds, co_code_adaptive;
	} code_object;
	struct {
		uint64_t size, ob_type;
	} pyobject;
	struct {
		uint64_t size, tp_name, tp_repr, tp_flags;
	} type_object;
	struct {
		uint64_t size, ob_item, ob_size;
	} tuple_object, list_object;
	struct {
		uint64_t size, ma_keys, ma_values;
	} dict_object;
	struct {
		uint64_t size, ob_fval;
	} float_object;
	struct {
		uint64_t size, lv_tag, ob_digit;
	} long_object;
	struct {
		uint64_t size, ob_size, ob_sval;
	} bytes_object;
	struct {
		uint64_t size, state, length, asciiobject_size;
	} unicode_object;
	struct {
		uint64_t size, collecting;
	} gc;
};

struct py_debug_offsets_314 {
	char cookie[8];
	uint64_t version, free_threaded;
	struct {
		uint64_t size, finalizing, interpreters_head;
	} runtime_state;
	struct {
		uint64_t size, id, next, threads_head, threads_main, gc, imports_modules, sysdict, builtins, ceval_gil,
			gil_runtime_state, gil_runtime_state_enabled, gil_runtime_state_locked,
			gil_runtime_state_holder, code_object_generation, tlbc_generation;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk, status;
	} thread_state;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner, stackpointer, tlbc_index;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
			localspluskinds, co_code_adaptive, co_tlbc;
	} code_object;
	struct {
		uint64_t size, ob_type;
	} pyobject;
	struct {
		uint64_t size, tp_name, tp_repr, tp_flags;
	} type_object;
	struct {
		uint64_t size, ob_item, ob_size;
	} tuple_object, list_object;
	struct {
		uint64_t size, used, table, mask;
	} set_object;
	struct {
		uint64_t size, ma_keys, ma_values;
	} dict_object;
	struct {
		uint64_t size, ob_fval;
	} float_object;
	struct {
		uint64_t size, lv_tag, ob_digit;
	} long_object;
	struct {
		uint64_t size, ob_size, ob_sval;
	} bytes_object;
	struct {
		uint64_t size, state, length, asciiobject_size;
	} unicode_object;
	struct {
		uint64_t size, collecting;
	} gc;
	struct {
		uint64_t size, gi_name, gi_iframe, gi_frame_state;
	} gen_object;
	struct {
		uint64_t next, prev;
	} llist_node;
	struct {
		uint64_t eval_breaker, remote_debugger_support, remote_debugging_enabled, debugger_pending_call,
			debugger_script_path, debugger_script_path_size;
	} debugger_support;
};

struct py_debug_offsets_315 {
	char cookie[8];
	uint64_t version, free_threaded;
	struct {
		uint64_t size, finalizing, interpreters_head;
	} runtime_state;
	struct {
		uint64_t size, id, next, threads_head, threads_main, gc, imports_modules, sysdict, builtins, ceval_gil,
			gil_runtime_state, gil_runtime_state_enabled, gil_runtime_state_locked,
			gil_runtime_state_holder, code_object_generation, tlbc_generation;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, base_frame, last_profiled_frame,
			last_profiled_frame_seq, thread_id, native_thread_id, datastack_chunk, status, holds_gil,
			gil_requested, current_exception, exc_state;
	} thread_state;
	struct {
		uint64_t exc_value;
	} err_stackitem;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner, stackpointer, tlbc_index;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
			localspluskinds, co_code_adaptive, co_tlbc;
	} code_object;
	struct {
		uint64_t size, ob_type;
	} pyobject;
	struct {
		uint64_t size, tp_name, tp_repr, tp_flags, tp_basicsize, tp_dictoffset;
	} type_object;
	struct {
		uint64_t size, ht_cached_keys;
	} heap_type_object;
	struct {
		uint64_t size, ob_item, ob_size;
	} tuple_object, list_object;
	struct {
		uint64_t size, used, table, mask;
	} set_object;
	struct {
		uint64_t size, ma_keys, ma_values;
	} dict_object;
	struct {
		uint64_t size, ob_fval;
	} float_object;
	struct {
		uint64_t size, lv_tag, ob_digit;
	} long_object;
	struct {
		uint64_t size, ob_size, ob_sval;
	} bytes_object;
	struct {
		uint64_t size, state, length, asciiobject_size, compactunicodeobject_size;
	} unicode_object;
	struct {
		uint64_t size, collecting, frame, generation_stats_size, generation_stats;
	} gc;
	struct {
		uint64_t size, gi_name, gi_iframe, gi_frame_state;
	} gen_object;
	struct {
		uint64_t next, prev;
	} llist_node;
	struct {
		uint64_t eval_breaker, remote_debugger_support, remote_debugging_enabled, debugger_pending_call,
			debugger_script_path, debugger_script_path_size;
	} debugger_support;
};

/*
 * The fields pyebpf reads, by CPython's names: X(ID, path) for each; lists
 * for the fields every version has, those from 3.14 and those from 3.15.
 * offsets.c turns them into positions per version (offsetof on the structs
 * above); the header probe (tests/fixtures/layout_probe.c) prints the same
 * names' positions in the interpreter's own _Py_DebugOffsets.
 */
#define PY_DEBUG_FIELDS_313(X)                                    \
	X(INTERP_HEAD, runtime_state.interpreters_head)           \
	X(INTERP_NEXT, interpreter_state.next)                    \
	X(THREADS_HEAD, interpreter_state.threads_head)           \
	X(GIL, interpreter_state.gil_runtime_state)               \
	X(GIL_LOCKED, interpreter_state.gil_runtime_state_locked) \
	X(GIL_HOLDER, interpreter_state.gil_runtime_state_holder) \
	X(TS_NEXT, thread_state.next)                             \
	X(TS_INTERP, thread_state.interp)                         \
	X(TS_FRAME, thread_state.current_frame)                   \
	X(TS_THREAD_ID, thread_state.thread_id)                   \
	X(TS_STATUS, thread_state.status)                         \
	X(FR_PREVIOUS, interpreter_frame.previous)                \
	X(FR_EXECUTABLE, interpreter_frame.executable)            \
	X(FR_INSTR_PTR, interpreter_frame.instr_ptr)              \
	X(FR_LOCALSPLUS, interpreter_frame.localsplus)            \
	X(FR_OWNER, interpreter_frame.owner)                      \
	X(CO_FILENAME, code_object.filename)                      \
	X(CO_NAME, code_object.name)                              \
	X(CO_QUALNAME, code_object.qualname)                      \
	X(CO_LINETABLE, code_object.linetable)                    \
	X(CO_FIRSTLINENO, code_object.firstlineno)                \
	X(CO_ADAPTIVE, code_object.co_code_adaptive)              \
	X(OB_TYPE, pyobject.ob_type)                              \
	X(MA_KEYS, dict_object.ma_keys)                           \
	X(MA_VALUES, dict_object.ma_values)                       \
	X(BYTES_SIZE, bytes_object.ob_size)                       \
	X(BYTES_SVAL, bytes_object.ob_sval)                       \
	X(UNI_STATE, unicode_object.state)                        \
	X(UNI_LENGTH, unicode_object.length)                      \
	X(UNI_ASCII_SIZE, unicode_object.asciiobject_size)        \
	X(CO_LOCALSPLUSNAMES, code_object.localsplusnames)        \
	X(CO_LOCALSPLUSKINDS, code_object.localspluskinds)        \
	X(TP_NAME, type_object.tp_name)                           \
	X(TP_FLAGS, type_object.tp_flags)                         \
	X(TUPLE_ITEM, tuple_object.ob_item)                       \
	X(TUPLE_SIZE, tuple_object.ob_size)                       \
	X(FLOAT_FVAL, float_object.ob_fval)                       \
	X(LONG_TAG, long_object.lv_tag)                           \
	X(LONG_DIGIT, long_object.ob_digit)                       \
	X(IMPORTS_MODULES, interpreter_state.imports_modules)
#define PY_DEBUG_FIELDS_314(X)                         \
	X(FR_TLBC_INDEX, interpreter_frame.tlbc_index) \
	X(CO_TLBC, code_object.co_tlbc)
#define PY_DEBUG_FIELDS_315(X)                             \
	X(TP_BASICSIZE, type_object.tp_basicsize)          \
	X(TP_DICTOFFSET, type_object.tp_dictoffset)        \
	X(HT_CACHED_KEYS, heap_type_object.ht_cached_keys) \
	X(UNI_COMPACT_SIZE, unicode_object.compactunicodeobject_size)

#define PY_DEBUG_ID(id, path) PY_DBG_##id,
enum py_debug_field {
	PY_DEBUG_FIELDS_313(PY_DEBUG_ID) PY_DEBUG_FIELDS_314(PY_DEBUG_ID) PY_DEBUG_FIELDS_315(PY_DEBUG_ID) PY_DBG__COUNT
};
#undef PY_DEBUG_ID

_Static_assert(sizeof(struct py_debug_offsets_313) == 584, "3.13's block");
_Static_assert(sizeof(struct py_debug_offsets_314) == 760, "3.14's block");
_Static_assert(sizeof(struct py_debug_offsets_315) == 888, "3.15's block");

#endif
