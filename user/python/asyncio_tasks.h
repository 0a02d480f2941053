/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * asyncio's pending tasks, read from outside (3.14+): the per-thread task
 * lists and the interpreter's list of tasks whose thread ended, each task's
 * name, its coroutine chain (coroutine → the frame embedded in it → what it
 * awaits, to the innermost), what the innermost awaits and who awaits the
 * task. Pure: every read goes through a callback, so a unit test feeds it a
 * fake memory image. Bounded everywhere: a list that changes under the
 * reader, loops or cannot be read ends the walk of that list, counted.
 */
#ifndef PYEBPF_PY_ASYNCIO_TASKS_H
#define PYEBPF_PY_ASYNCIO_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 0 when all len bytes at addr were read into buf, else -1. */
typedef int (*asyncio_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* Where things are: _Py_DebugOffsets (the interpreter) and
 * _Py_AsyncioModuleDebugOffsets (the .AsyncioDebug section). */
struct asyncio_layout {
	uint64_t threads_head, ts_next, ts_native_thread_id;
	uint64_t ob_type, tp_name, tp_flags;
	uint64_t tp_base; /* 3.11–3.13: a Task subclass's base, up to _asyncio.Task */
	uint64_t gi_iframe, gi_frame_state;
	uint64_t fr_executable, fr_instr_ptr, fr_stackpointer, fr_owner;
	uint64_t co_adaptive;
	/* Free-threaded 3.14+: a frame runs its thread's copy of the bytecode,
	 * co_tlbc->entries[frame's tlbc_index] (index 0: co_code_adaptive);
	 * 0 on other builds. */
	uint64_t fr_tlbc_index, co_tlbc;
	uint64_t set_used, set_table, set_mask;
	uint64_t long_tag, long_digit;
	/* .AsyncioDebug */
	uint64_t task_name, task_awaited_by, task_is_task, task_awaited_by_is_set, task_coro, task_node;
	uint64_t interp_tasks_head;
	uint64_t ts_running_loop, ts_running_task, ts_tasks_head;
	int8_t frame_suspended_yield_from; /* gi_frame_state of a coroutine inside an await */
	uint32_t await_slot;               /* it is this many slots below the frame's stack pointer */
	uint64_t executable_mask;          /* tag bits of f_executable and of stack references */
	/* 3.11–3.13: the frame keeps its stack top as an index (fr_stacktop, an
	 * int) into its localsplus, not a pointer; no task_is_task (0) nor
	 * task_awaited_by (0); dicts read by ma_keys (3.11+ keys objects). */
	bool stack_index;
	uint64_t fr_stacktop, fr_localsplus;
	uint64_t ma_keys, wr_object;
};

/* The .AsyncioDebug section's bytes, as CPython 3.14/3.15 lay them out (13 u64). */
#define ASYNCIO_DEBUG_SECTION_SIZE 104
int asyncio_layout_from_section(struct asyncio_layout *l, const uint8_t *sec, size_t len);

#define ASYNCIO_MAX_CORO 32

struct asyncio_coro {
	uint64_t code;
	int32_t lasti; /* byte offset of the instruction in its code; -1 unknown */
};

struct asyncio_task {
	uint64_t addr;
	uint64_t coro;     /* its coroutine object, 0 none */
	uint64_t tid;      /* the thread whose list holds it (native id); 0: the interpreter's list */
	uint64_t context;  /* its contextvars.Context (task_context), 0 unread */
	uint64_t name_obj; /* its name: a str object, or ... */
	bool name_is_num;  /* ... a number: its name is "Task-<name_num>" */
	uint64_t name_num;
	uint32_t ncoro; /* coros[0] the task's coroutine, then each awaited one */
	struct asyncio_coro coros[ASYNCIO_MAX_CORO];
	char awaits[48];      /* the innermost awaits an object of this type ("" none: it runs, or is new) */
	bool running;         /* the thread's running task */
	uint64_t awaiter;     /* a task awaiting it (gather, TaskGroup, await task), 0 none */
	uint64_t awaits_obj;  /* what the innermost awaits (a future: not its iterator), 0 none */
	uint64_t inner_frame; /* the innermost coroutine's frame (in it), 0 none */
};

struct asyncio_walk_stats {
	uint64_t tasks;      /* tasks read */
	uint64_t lists_cut;  /* task lists not read to their end: unreadable, looping or changing */
	uint64_t beyond_max; /* lists cut where the caller's room ended (what it held is kept) */
};

/*
 * The tasks of the interpreter at `interp`: into out[0 .. returned). A list
 * that cannot be read to its end (a task freed under the reader) or that
 * loops gives none of its tasks that time, counted in lists_cut.
 */
size_t asyncio_walk(const struct asyncio_layout *l, asyncio_read_fn rd, void *ctx, uint64_t interp,
		    struct asyncio_task *out, size_t max, struct asyncio_walk_stats *st);

/*
 * 3.11–3.13 keep no task list in the interpreter: _asyncio's module holds
 * the sets of pending tasks (3.11 `_all_tasks`, 3.12+ `_scheduled_tasks`:
 * a weakref.WeakSet, whose `data` set holds weak references; 3.12+
 * `_eager_tasks`: a set of the tasks) and `_current_tasks` (a dict: loop →
 * its running task). Found by the caller, once a process; walked here.
 */
struct asyncio_sets {
	uint64_t set[2];    /* set objects; 0: none */
	bool weak[2];       /* its keys are weak references to the tasks */
	uint64_t current;   /* the _current_tasks dict, 0 none */
	uint64_t task_type; /* _asyncio.Task: a key of no type derived from it is no task */
	/* The tasks a GatheringFuture gathers (its `_children`, a Python
	 * attribute: the caller reads it), into out; NULL: awaiters of
	 * gathered tasks are not looked for. */
	size_t (*children)(void *children_ctx, uint64_t gathering_future, uint64_t *out, size_t max);
	/* The tasks a task waits for on a plain future, by where it waits (its
	 * innermost frame and code object: TaskGroup.__aexit__, asyncio.wait,
	 * 3.11's wait_for), into out; 0 for any other frame. NULL: not looked for. */
	size_t (*waited_children)(void *children_ctx, uint64_t inner_frame, uint64_t inner_code, uint64_t *out,
				  size_t max);
	void *children_ctx;
	/* The target's memory as it is now, past the walk's cache: a set's
	 * table and mask read again after its table, to tell a table that
	 * moved meanwhile (a resize). NULL: the walk's reader. */
	asyncio_read_fn fresh;
	void *fresh_ctx;
};

/* The tasks in those sets, as asyncio_walk gives them (tid 0: the sets
 * do not say which thread runs a task's loop). No task records who awaits
 * it here: a task's awaiter is the task whose innermost coroutine awaits
 * it (`await task`), a gather of it, or waits for it (waited_children). A set that changes under
 * the reader gives none of its tasks that time, counted in lists_cut. */
size_t asyncio_walk_sets(const struct asyncio_layout *l, asyncio_read_fn rd, void *ctx, const struct asyncio_sets *s,
			 struct asyncio_task *out, size_t max, struct asyncio_walk_stats *st);

/* The keys of a set object (3.11–3.13: a frame's set of tasks), into out:
 * none when its table is past max_slots. A task, or the dummy a removed
 * key leaves: the caller knows which are tasks. */
size_t asyncio_set_keys(const struct asyncio_layout *l, asyncio_read_fn rd, void *ctx, uint64_t set, uint64_t max_slots,
			uint64_t *out, size_t max);

/* The tasks _current_tasks says each loop runs now (3.11–3.13), into out. */
size_t asyncio_current_tasks(const struct asyncio_layout *l, asyncio_read_fn rd, void *ctx,
			     const struct asyncio_sets *s, uint64_t *out, size_t max);

/* One task read alone, as a walk gives it (not running, its awaiter if it
 * says): the task a thread was running when sampled. false: unreadable, or
 * no task. */
bool asyncio_read_task(const struct asyncio_layout *l, asyncio_read_fn rd, void *ctx, uint64_t task,
		       struct asyncio_task *t);

enum asyncio_await {
	AWAIT_NONE = 0, /* running: the task its loop's thread runs */
	AWAIT_READY,    /* awaiting nothing, not running: made or woken, its turn to come */
	AWAIT_SLEEP,
	AWAIT_LOCK,
	AWAIT_QUEUE,
	AWAIT_IO,
	AWAIT_TASK,
	AWAIT_GATHER,
	AWAIT_FUTURE,
};
/* What the innermost coroutine (its qualified name and file) awaiting an
 * object of type `awaits` ("" nothing) waits for; `running`: the task is
 * its loop's running one. */
enum asyncio_await asyncio_await_reason(const char *inner_qualname, const char *inner_file, const char *awaits,
					bool running);
#define AWAIT__COUNT (AWAIT_FUTURE + 1)
/* "[await: sleep]" ... ; "[task running]" for AWAIT_NONE, "[task ready]" for AWAIT_READY. */
const char *asyncio_await_frame(enum asyncio_await r);
/* Which of those frames `name` is; -1 none. */
int asyncio_await_parse(const char *name);
/* "sleep", ..., "running", "ready". */
const char *asyncio_await_name(enum asyncio_await r);

#endif
