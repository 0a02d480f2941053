/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The Python name of a thread: threading.Thread runs its threads from
 * Thread._bootstrap(self); the name is self._name (2.7: _Thread__name),
 * read from the instance's attributes in each version's dict layout.
 */
#ifndef PYEBPF_PY_THREADNAME_H
#define PYEBPF_PY_THREADNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "python/detect.h"

/*
 * Where the thread's Thread._bootstrap frame was found: it stays there while
 * the thread runs, so the next look reads the name from it in a few reads
 * instead of walking the whole stack again (a stack of hundreds of frames
 * costs a millisecond to walk). Zero: not found yet. A thread whose stack
 * was walked to its root without one never has one (threading.Thread's
 * threads start in it): `none`, and it is not walked again.
 */
struct py_thread_hint {
	uint64_t frame, code;
	bool none;
};

/* A new string, or NULL when the thread was not started by threading.Thread.
 * hint (may be NULL) is used and updated. */
char *py_thread_name(pid_t pid, const struct py_interp *in, uint64_t tstate, struct py_thread_hint *hint);

/* The name multiprocessing gave the process (`SpawnPoolWorker-1`), from
 * BaseProcess._bootstrap(self) on the thread's stack (its main thread's); a
 * new string, or NULL. One walk of the stack: asked rarely. */
char *py_process_name(pid_t pid, const struct py_interp *in, uint64_t tstate);

/* dict[name] of a dict with str keys (a module's dict, sys.modules), and
 * obj.name from an instance's attributes: the object, or 0. */
uint64_t py_dict_lookup(pid_t pid, const struct py_layout *l, uint64_t dict, const char *name);
uint64_t py_attr_lookup(pid_t pid, const struct py_layout *l, uint64_t obj, const char *name);
/* The (key, value) pairs of a combined dict (not a split table), into kv:
 * at most max of them, of its first 4 x max entries; returns how many. */
size_t py_dict_items(pid_t pid, const struct py_layout *l, uint64_t dict, uint64_t *kv, size_t max);
/* How BPF finds obj.name (span_how, span_off, span_index, dict_values of
 * *out; the rest zeroed); false where it cannot (no split or managed values). */
bool py_attr_where(pid_t pid, const struct py_layout *l, uint64_t obj, const char *name, struct pyebpf_py_ctx *out);

#endif
