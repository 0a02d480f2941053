// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/asyncio_tasks.h"

#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 4096
#define MAX_LIST 65536
#define MAX_SET_SLOTS 1024
#define TPFLAGS_LONG_SUBCLASS (1UL << 24)
#define MAX_TLBC_INDEX 65536 /* as bpf/python.bpf.h: one copy per thread that ran the code */

int asyncio_layout_from_section(struct asyncio_layout *l, const uint8_t *sec, size_t len)
{
	uint64_t v[ASYNCIO_DEBUG_SECTION_SIZE / 8];

	if (len < sizeof(v))
		return -1;
	memcpy(v, sec, sizeof(v));
	/* asyncio_task_object: size, name, awaited_by, is_task, awaited_by_is_set, coro, node;
	 * asyncio_interpreter_state: size, tasks_head;
	 * asyncio_thread_state: size, running_loop, running_task, tasks_head. */
	for (size_t i = 1; i < 7; i++)
		if (v[i] >= v[0] || !v[0] || v[0] > 4096)
			return -1;
	if (!v[7] || v[8] >= (1u << 20) || !v[9] || v[10] >= v[9] || v[11] >= v[9] || v[12] >= v[9] || v[9] > 65536)
		return -1;
	l->task_name = v[1];
	l->task_awaited_by = v[2];
	l->task_is_task = v[3];
	l->task_awaited_by_is_set = v[4];
	l->task_coro = v[5];
	l->task_node = v[6];
	l->interp_tasks_head = v[8];
	l->ts_running_loop = v[10];
	l->ts_running_task = v[11];
	l->ts_tasks_head = v[12];
	return 0;
}

struct walker {
	const struct asyncio_layout *l;
	asyncio_read_fn rd;
	void *ctx;
};

static int ptr(const struct walker *w, uint64_t addr, uint64_t *v)
{
	return addr ? w->rd(w->ctx, addr, v, sizeof(*v)) : -1;
}

static int byte(const struct walker *w, uint64_t addr, int8_t *v)
{
	return addr ? w->rd(w->ctx, addr, v, sizeof(*v)) : -1;
}

/* A type's tp_name, cut to room. */
static void type_name(const struct walker *w, uint64_t type, char *out, size_t room)
{
	uint64_t at;
	size_t n;

	out[0] = '\0';
	if (ptr(w, type + w->l->tp_name, &at) || !at)
		return;
	for (n = room - 1; n >= 8; n /= 2) /* a shorter read where the longer one crosses into nothing */
		if (!w->rd(w->ctx, at, out, n))
			break;
	if (n < 8) {
		out[0] = '\0';
		return;
	}
	out[n] = '\0';
	out[strnlen(out, n)] = '\0';
}

/* Where the bytecode a frame runs starts: co_code_adaptive, or on
 * free-threaded 3.14+ the copy of the thread that last ran it (a
 * _PyCodeArray: size, then entries); one that cannot be read falls back. */
static uint64_t bytecode_of(const struct walker *w, uint64_t frame, uint64_t code)
{
	const struct asyncio_layout *l = w->l;
	uint64_t arr, copy;
	int32_t idx;

	if (!l->co_tlbc || !l->fr_tlbc_index || w->rd(w->ctx, frame + l->fr_tlbc_index, &idx, sizeof(idx)) ||
	    idx <= 0 || idx >= MAX_TLBC_INDEX || ptr(w, code + l->co_tlbc, &arr) || !arr ||
	    ptr(w, arr + 8 + 8 * (uint64_t)idx, &copy) || !copy)
		return code + l->co_adaptive;
	return copy;
}

/* The coroutine chain of a task, from its coroutine to the innermost. */
static void coro_chain(const struct walker *w, uint64_t coro, struct asyncio_task *t)
{
	const struct asyncio_layout *l = w->l;
	uint64_t coro_type = 0;

	if (ptr(w, coro + l->ob_type, &coro_type))
		return;
	while (coro && t->ncoro < ASYNCIO_MAX_CORO) {
		uint64_t frame = coro + l->gi_iframe, code, ip, sp, aw, aw_type;
		int8_t state;
		int64_t lasti;

		if (ptr(w, frame + l->fr_executable, &code) || ptr(w, frame + l->fr_instr_ptr, &ip))
			return;
		code &= ~l->executable_mask;
		if (!code)
			return;
		lasti = (int64_t)(ip - bytecode_of(w, frame, code));
		t->coros[t->ncoro].code = code;
		t->coros[t->ncoro].lasti = lasti >= 0 && lasti < 0x7fffffff ? (int32_t)lasti : -1;
		t->ncoro++;
		t->inner_frame = frame;
		if (byte(w, coro + l->gi_frame_state, &state) || state != l->frame_suspended_yield_from)
			return;
		/* Inside an await: what it awaits is on top of its stack. */
		if (l->stack_index) {
			int32_t top;

			if (!w->rd(w->ctx, frame + l->fr_stacktop, &top, sizeof(top)) && top > 0 && top < (1 << 20))
				sp = frame + l->fr_localsplus + 8ULL * (uint32_t)top;
			else
				return;
		} else if (ptr(w, frame + l->fr_stackpointer, &sp) || !sp) {
			return;
		}
		if (ptr(w, sp - 8ULL * l->await_slot, &aw))
			return;
		aw &= ~l->executable_mask; /* a tagged stack reference */
		if (!aw || ptr(w, aw + l->ob_type, &aw_type))
			return;
		if (aw_type == coro_type) {
			coro = aw;
			continue;
		}
		type_name(w, aw_type, t->awaits, sizeof(t->awaits));
		t->awaits_obj = aw;
		/* `await future` awaits its iterator, which holds the future right after the header. */
		if (!strcmp(t->awaits, "_asyncio.FutureIter") || !strcmp(t->awaits, "FutureIter")) {
			uint64_t fut, fut_type;

			t->awaits_obj = 0;
			if (!ptr(w, aw + l->ob_type + 8, &fut) && fut && !ptr(w, fut + l->ob_type, &fut_type)) {
				type_name(w, fut_type, t->awaits, sizeof(t->awaits));
				t->awaits_obj = fut;
			}
		}
		return;
	}
}

/* A task awaiting this one: the awaited_by object, or the first task of the set. */
static uint64_t awaiter_of(const struct walker *w, uint64_t task, uint64_t task_type)
{
	const struct asyncio_layout *l = w->l;
	uint64_t ab, table, mask, type;
	int8_t is_set = 0, is_task = 0;

	if (!l->task_awaited_by || ptr(w, task + l->task_awaited_by, &ab) || !ab ||
	    byte(w, task + l->task_awaited_by_is_set, &is_set))
		return 0;
	if (is_set) {
		uint64_t set = ab, found = 0;

		if (ptr(w, set + l->set_table, &table) || ptr(w, set + l->set_mask, &mask))
			return 0;
		for (uint64_t i = 0; i <= mask && i < MAX_SET_SLOTS && !found; i++) {
			uint64_t key;

			if (ptr(w, table + i * 16, &key))
				return 0;
			if (key && !ptr(w, key + l->ob_type, &type) && type == task_type)
				found = key;
		}
		ab = found;
	}
	if (!ab || ptr(w, ab + l->ob_type, &type) || type != task_type || byte(w, ab + l->task_is_task, &is_task) ||
	    !is_task)
		return 0;
	return ab;
}

static bool read_task(const struct walker *w, uint64_t task, uint64_t running, struct asyncio_task *t)
{
	const struct asyncio_layout *l = w->l;
	uint64_t coro, name, name_type, flags, task_type;
	int8_t is_task;

	memset(t, 0, sizeof(*t));
	t->addr = task;
	if ((l->task_is_task && (byte(w, task + l->task_is_task, &is_task) || !is_task)) ||
	    ptr(w, task + l->ob_type, &task_type) || ptr(w, task + l->task_coro, &coro) ||
	    ptr(w, task + l->task_name, &name))
		return false;
	t->name_obj = name;
	t->coro = coro;
	/* task_context follows task_name in every TaskObj (3.11-3.15's
	 * Modules/_asynciomodule.c); a miss costs the task its request. */
	if (ptr(w, task + l->task_name + 8, &t->context))
		t->context = 0;
	if (name && l->long_tag && !ptr(w, name + l->ob_type, &name_type) && !ptr(w, name_type + l->tp_flags, &flags) &&
	    (flags & TPFLAGS_LONG_SUBCLASS)) {
		uint64_t tag;
		uint32_t digit = 0;

		/* A small int: lv_tag = ndigits << 3 | sign; one 30-bit digit. */
		if (!ptr(w, name + l->long_tag, &tag) && (tag >> 3) <= 1 &&
		    ((tag >> 3) == 0 || !w->rd(w->ctx, name + l->long_digit, &digit, sizeof(digit)))) {
			t->name_is_num = true;
			t->name_num = digit & 0x3fffffff;
		}
	}
	t->running = task == running;
	if (coro)
		coro_chain(w, coro, t);
	t->awaiter = awaiter_of(w, task, task_type);
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Does a task appear twice in out[from .. to)? (A list that changed under
 * the reader and now loops.) */
static bool repeats(const struct asyncio_task *out, size_t from, size_t to)
{
	uint64_t *a;
	bool dup = false;

	if (to - from < 2)
		return false;
	a = malloc((to - from) * sizeof(*a));
	if (!a)
		return true;
	for (size_t i = from; i < to; i++)
		a[i - from] = out[i].addr;
	qsort(a, to - from, sizeof(*a), cmp_u64);
	for (size_t i = 1; i < to - from && !dup; i++)
		dup = a[i] == a[i - 1];
	free(a);
	return dup;
}

/* One list: its head node at `head`. Returns false when it was cut. */
static bool walk_list_once(const struct walker *w, uint64_t head, uint64_t tid, uint64_t running,
			   struct asyncio_task *out, size_t max, size_t *n, struct asyncio_walk_stats *st)
{
	uint64_t node;
	size_t steps = 0;

	if (ptr(w, head, &node))
		return false;
	while (node != head) {
		if (!node || ++steps > MAX_LIST)
			return false;
		if (*n >= max) { /* no room: the rest goes (a list that loops ends here too) */
			st->beyond_max++;
			return false;
		}
		if (read_task(w, node - w->l->task_node, running, &out[*n])) {
			out[*n].tid = tid;
			(*n)++;
			st->tasks++;
		} else {
			return false; /* freed under the reader: the list moved on */
		}
		if (ptr(w, node, &node))
			return false;
	}
	return true;
}

/* A list read whole, or what the room held of it; a list that could not be
 * read to its end, or loops, gives no task. */
static bool walk_list(const struct walker *w, uint64_t head, uint64_t tid, uint64_t running, struct asyncio_task *out,
		      size_t max, size_t *n, struct asyncio_walk_stats *st)
{
	size_t start = *n;
	uint64_t beyond = st->beyond_max;
	bool whole = walk_list_once(w, head, tid, running, out, max, n, st);

	if (repeats(out, start, *n) || (!whole && st->beyond_max == beyond)) {
		st->tasks -= *n - start;
		*n = start;
		return false;
	}
	return whole;
}

bool asyncio_read_task(const struct asyncio_layout *l, asyncio_read_fn rd, void *ctx, uint64_t task,
		       struct asyncio_task *t)
{
	struct walker w = { l, rd, ctx };

	return task && read_task(&w, task, 0, t);
}

size_t asyncio_walk(const struct asyncio_layout *l, asyncio_read_fn rd, void *ctx, uint64_t interp,
		    struct asyncio_task *out, size_t max, struct asyncio_walk_stats *st)
{
	struct walker w = { l, rd, ctx };
	uint64_t ts;
	size_t n = 0;

	if (!interp || ptr(&w, interp + l->threads_head, &ts)) {
		st->lists_cut++;
		return 0;
	}
	for (int i = 0; ts && i < MAX_THREADS; i++) {
		uint64_t tid = 0, running = 0, loop = 0;

		ptr(&w, ts + l->ts_native_thread_id, &tid);
		ptr(&w, ts + l->ts_running_loop, &loop);
		if (loop)
			ptr(&w, ts + l->ts_running_task, &running);
		if (!walk_list(&w, ts + l->ts_tasks_head, tid, running, out, max, &n, st))
			st->lists_cut++;
		if (ptr(&w, ts + l->ts_next, &ts))
			break;
	}
	if (!walk_list(&w, interp + l->interp_tasks_head, 0, 0, out, max, &n, st))
		st->lists_cut++;
	return n;
}

/* ---- 3.11–3.13: sets of tasks ------------------------------------------ */

#define MAX_SET_TABLE (1u << 17) /* slots: 2 MiB of table */
#define MAX_CURRENT 64

/* The values of a dict (3.11+ keys objects: the keys here are loops, so
 * general entries of hash, key, value). */
static size_t dict_values(const struct walker *w, uint64_t dict, uint64_t *out, size_t max)
{
	const struct asyncio_layout *l = w->l;
	uint64_t keys, nentries, entries;
	uint8_t hdr[3];
	size_t n = 0;

	if (!dict || ptr(w, dict + l->ma_keys, &keys) || !keys || w->rd(w->ctx, keys + 8, hdr, sizeof(hdr)) ||
	    ptr(w, keys + 24, &nentries) || nentries > MAX_CURRENT || hdr[1] > 40 || hdr[2] != 0)
		return 0;
	entries = keys + 32 + (1ULL << hdr[1]);
	for (uint64_t i = 0; i < nentries && n < max; i++) {
		uint64_t kv[2];

		if (w->rd(w->ctx, entries + i * 24 + 8, kv, sizeof(kv)))
			return n;
		if (kv[0] && kv[1])
			out[n++] = kv[1];
	}
	return n;
}

size_t asyncio_current_tasks(const struct asyncio_layout *l, asyncio_read_fn rd, void *ctx,
			     const struct asyncio_sets *s, uint64_t *out, size_t max)
{
	const struct walker w = { l, rd, ctx };

	return dict_values(&w, s->current, out, max);
}

#define MAX_TASK_BASES 8

/* Is a set's key of type `type` a task: _asyncio.Task, or a class derived
 * from it (a custom task factory's; CPython's own subclasses none). */
static bool is_task_type(const struct walker *w, const struct asyncio_sets *s, uint64_t type)
{
	for (int depth = 0; type && depth < MAX_TASK_BASES; depth++) {
		if (type == s->task_type)
			return true;
		if (!w->l->tp_base || ptr(w, type + w->l->tp_base, &type))
			return false;
	}
	return false;
}

/* A set object's hash table, its mask + 1 slots of (key, hash) read at
 * once (the caller frees them); NULL when unreadable, not a power of two or
 * past max_slots. */
static uint64_t *set_slots(const struct walker *w, uint64_t set, uint64_t max_slots, uint64_t *table, uint64_t *mask)
{
	uint64_t *slots;

	if (ptr(w, set + w->l->set_table, table) || ptr(w, set + w->l->set_mask, mask) || !*table ||
	    *mask >= max_slots || ((*mask + 1) & *mask))
		return NULL;
	slots = malloc((*mask + 1) * 16);
	if (slots && w->rd(w->ctx, *table, slots, (*mask + 1) * 16)) {
		free(slots);
		return NULL;
	}
	return slots;
}

size_t asyncio_set_keys(const struct asyncio_layout *l, asyncio_read_fn rd, void *ctx, uint64_t set, uint64_t max_slots,
			uint64_t *out, size_t max)
{
	const struct walker w = { l, rd, ctx };
	uint64_t table, mask, *slots = set_slots(&w, set, max_slots, &table, &mask);
	size_t n = 0;

	for (uint64_t i = 0; slots && i <= mask && n < max; i++)
		if (slots[2 * i])
			out[n++] = slots[2 * i];
	free(slots);
	return n;
}

/* One set: its tasks into out. False when it was cut. */
static bool walk_set(const struct walker *w, const struct asyncio_sets *s, int which, const uint64_t *running,
		     size_t nrunning, struct asyncio_task *out, size_t max, size_t *n, struct asyncio_walk_stats *st)
{
	const struct asyncio_layout *l = w->l;
	const struct walker now = { l, s->fresh ? s->fresh : w->rd, s->fresh ? s->fresh_ctx : w->ctx };
	uint64_t set = s->set[which], table, mask, table2, mask2, *slots;
	size_t start = *n;
	bool whole = true;

	if (!(slots = set_slots(w, set, MAX_SET_TABLE, &table, &mask)))
		return false;
	if (ptr(&now, set + l->set_table, &table2) || ptr(&now, set + l->set_mask, &mask2) || table2 != table ||
	    mask2 != mask) {
		free(slots);
		return false;
	}
	for (uint64_t i = 0; i <= mask; i++) {
		uint64_t key = slots[2 * i], task = key, type;

		if (!key)
			continue;
		if (s->weak[which] && ptr(w, key + l->wr_object, &task))
			continue; /* the dummy of a removed key, or a weakref gone */
		if (!task || ptr(w, task + l->ob_type, &type) || !is_task_type(w, s, type))
			continue;
		bool dup = false; /* an eager task moving to the scheduled set */

		for (size_t k = 0; k < start && which; k++)
			dup |= out[k].addr == task;
		if (dup)
			continue;
		if (*n >= max) {
			st->beyond_max++;
			whole = false;
			break;
		}
		bool run = false;

		for (size_t r = 0; r < nrunning; r++)
			run |= running[r] == task;
		if (read_task(w, task, run ? task : 0, &out[*n])) {
			(*n)++;
			st->tasks++;
		}
	}
	free(slots);
	return whole;
}

struct by_addr {
	uint64_t addr;
	size_t i;
};

static int cmp_by_addr(const void *a, const void *b)
{
	return cmp_u64(&((const struct by_addr *)a)->addr, &((const struct by_addr *)b)->addr);
}

static void set_awaiter(const struct by_addr *idx, size_t n, struct asyncio_task *out, uint64_t task, uint64_t awaiter)
{
	struct by_addr key = { task, 0 }, *at = bsearch(&key, idx, n, sizeof(*idx), cmp_by_addr);

	if (at && task != awaiter && !out[at->i].awaiter)
		out[at->i].awaiter = awaiter;
}

#define MAX_CHILDREN 256

/* Who awaits each task: a task whose innermost awaits it, a gather of it, or waits for it. */
static void awaiters(const struct asyncio_sets *s, struct asyncio_task *out, size_t n)
{
	struct by_addr *idx = malloc(n * sizeof(*idx));
	uint64_t kids[MAX_CHILDREN];

	if (!idx)
		return;
	for (size_t i = 0; i < n; i++)
		idx[i] = (struct by_addr){ out[i].addr, i };
	qsort(idx, n, sizeof(*idx), cmp_by_addr);
	for (size_t i = 0; i < n; i++) {
		if (!out[i].awaits_obj)
			continue;
		set_awaiter(idx, n, out, out[i].awaits_obj, out[i].addr);
		if (s->children && strstr(out[i].awaits, "GatheringFuture")) {
			size_t k = s->children(s->children_ctx, out[i].awaits_obj, kids, MAX_CHILDREN);

			for (size_t j = 0; j < k && j < MAX_CHILDREN; j++)
				set_awaiter(idx, n, out, kids[j], out[i].addr);
		} else if (s->waited_children && out[i].ncoro && strstr(out[i].awaits, "Future")) {
			/* TaskGroup.__aexit__, asyncio.wait, 3.11's wait_for: a plain future waited on for tasks. */
			size_t k = s->waited_children(s->children_ctx, out[i].inner_frame,
						      out[i].coros[out[i].ncoro - 1].code, kids, MAX_CHILDREN);

			for (size_t j = 0; j < k && j < MAX_CHILDREN; j++)
				set_awaiter(idx, n, out, kids[j], out[i].addr);
		}
	}
	free(idx);
}

size_t asyncio_walk_sets(const struct asyncio_layout *l, asyncio_read_fn rd, void *ctx, const struct asyncio_sets *s,
			 struct asyncio_task *out, size_t max, struct asyncio_walk_stats *st)
{
	struct walker w = { l, rd, ctx };
	uint64_t running[MAX_CURRENT];
	size_t n = 0, nrunning = dict_values(&w, s->current, running, MAX_CURRENT);

	for (int i = 0; i < 2; i++)
		if (s->set[i] && !walk_set(&w, s, i, running, nrunning, out, max, &n, st))
			st->lists_cut++;
	if (n)
		awaiters(s, out, n);
	return n;
}

static bool has(const char *s, const char *part)
{
	return s && strstr(s, part);
}

enum asyncio_await asyncio_await_reason(const char *q, const char *file, const char *awaits, bool running)
{
	bool in_asyncio = has(file, "asyncio/");

	if (running)
		return AWAIT_NONE;
	if (!awaits || !awaits[0])
		return AWAIT_READY;
	if (in_asyncio && q) {
		if (!strcmp(q, "sleep"))
			return AWAIT_SLEEP;
		if (has(q, "Lock.") || has(q, "Semaphore.") || has(q, "Condition.") || has(q, "Event.") ||
		    has(q, "Barrier."))
			return AWAIT_LOCK;
		if (has(q, "Queue."))
			return AWAIT_QUEUE;
		if (has(q, "Stream") || has(q, "open_connection") || has(file, "asyncio/streams") || has(q, "sock_") ||
		    has(q, "getaddrinfo"))
			return AWAIT_IO;
	}
	if (has(awaits, "GatheringFuture"))
		return AWAIT_GATHER;
	if (has(awaits, "Task"))
		return AWAIT_TASK;
	return AWAIT_FUTURE;
}

int asyncio_await_parse(const char *name)
{
	for (int r = 0; r < AWAIT__COUNT && name; r++)
		if (!strcmp(name, asyncio_await_frame((enum asyncio_await)r)))
			return r;
	return -1;
}

const char *asyncio_await_name(enum asyncio_await r)
{
	static const char *const names[] = {
		[AWAIT_NONE] = "running", [AWAIT_READY] = "ready",   [AWAIT_SLEEP] = "sleep",
		[AWAIT_LOCK] = "lock",    [AWAIT_QUEUE] = "queue",   [AWAIT_IO] = "io",
		[AWAIT_TASK] = "task",    [AWAIT_GATHER] = "gather", [AWAIT_FUTURE] = "future",
	};

	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : names[AWAIT_FUTURE];
}

const char *asyncio_await_frame(enum asyncio_await r)
{
	static const char *const names[] = {
		[AWAIT_NONE] = "[task running]", [AWAIT_READY] = "[task ready]",     [AWAIT_SLEEP] = "[await: sleep]",
		[AWAIT_LOCK] = "[await: lock]",  [AWAIT_QUEUE] = "[await: queue]",   [AWAIT_IO] = "[await: io]",
		[AWAIT_TASK] = "[await: task]",  [AWAIT_GATHER] = "[await: gather]", [AWAIT_FUTURE] = "[await: future]",
	};

	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : names[AWAIT_FUTURE];
}
