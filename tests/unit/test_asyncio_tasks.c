/* The asyncio task walker (python/asyncio_tasks.c) over a fake memory image:
 * lists per thread and per interpreter, coroutine chains through awaits, a
 * future behind its iterator, awaiters, numbered names, and lists that loop
 * or point nowhere. */
#include "unit.h"

#include "python/asyncio_tasks.h"

#define PAGES 16
#define PAGE 0x1000

/* A sparse image: PAGES pages at 0x10000, 0x11000, ... */
struct image {
	uint8_t mem[PAGES][PAGE];
};

#define BASE 0x10000ULL

static int img_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *m = ctx;

	if (addr < BASE || addr + len > BASE + PAGES * PAGE || addr + len < addr)
		return -1;
	memcpy(buf, &m->mem[0][0] + (addr - BASE), len);
	return 0;
}

static void put64(struct image *m, uint64_t addr, uint64_t v)
{
	memcpy(&m->mem[0][0] + (addr - BASE), &v, 8);
}

static void put8(struct image *m, uint64_t addr, int8_t v)
{
	memcpy(&m->mem[0][0] + (addr - BASE), &v, 1);
}

static void puts_at(struct image *m, uint64_t addr, const char *s)
{
	memcpy(&m->mem[0][0] + (addr - BASE), s, strlen(s) + 1);
}

/* CPython 3.14.10's .AsyncioDebug section, as its _asyncio module carries it. */
static const uint64_t section_314[13] = { 0xa8,    0x88,   0x60,  0x6c,  0x6d,  0x80, 0x98,
					  0x37248, 0x2a80, 0x3a8, 0x360, 0x368, 0x370 };

/* Object layout of the image (made up, as _Py_DebugOffsets would give it). */
static void layout(struct asyncio_layout *l)
{
	memset(l, 0, sizeof(*l));
	cr_assert_eq(asyncio_layout_from_section(l, (const uint8_t *)section_314, sizeof(section_314)), 0);
	cr_assert_eq(l->task_coro, 128);
	cr_assert_eq(l->task_name, 136);
	cr_assert_eq(l->task_node, 152);
	cr_assert_eq(l->task_awaited_by, 96);
	cr_assert_eq(l->ts_running_task, 872);
	cr_assert_eq(l->ts_tasks_head, 880);
	l->threads_head = 0x10;
	l->ts_next = 0x8;
	l->ts_native_thread_id = 0x20;
	l->ob_type = 8;
	l->tp_name = 24;
	l->tp_flags = 168;
	l->gi_iframe = 0x40;
	l->gi_frame_state = 0x30;
	l->fr_executable = 0;
	l->fr_instr_ptr = 0x38;
	l->fr_stackpointer = 0x28;
	l->co_adaptive = 0xc8;
	l->long_tag = 16;
	l->long_digit = 24;
	l->await_slot = 1;
	l->frame_suspended_yield_from = -1;
	l->executable_mask = 3;
}

enum {
	INTERP = 0x10000, /* interp at page 0, tstate at page 1 */
	TSTATE = 0x11000,
	TASK_A = 0x12000,
	TASK_B = 0x12400,
	TASK_TYPE = 0x13000,
	CORO_TYPE = 0x13200,
	ITER_TYPE = 0x13400,
	FUT_TYPE = 0x13600,
	LONG_TYPE = 0x13800,
	CORO_A = 0x14000,
	CORO_A2 = 0x14400,
	CORO_B = 0x14800,
	STACK_A = 0x15000,
	STACK_A2 = 0x15100,
	ITER = 0x15200,
	FUT = 0x15300,
	NAME_A = 0x15400,
	CODE_A = 0x16000,
	CODE_A2 = 0x16400,
	CODE_B = 0x16800,
	NAMES = 0x17000,
};

static void coro(struct image *m, const struct asyncio_layout *l, uint64_t c, uint64_t code, int8_t state,
		 uint64_t stack, uint64_t awaits)
{
	put64(m, c + l->ob_type, CORO_TYPE);
	put64(m, c + l->gi_iframe + l->fr_executable, code | 1); /* a tagged reference */
	put64(m, c + l->gi_iframe + l->fr_instr_ptr, code + l->co_adaptive + 6);
	put8(m, c + l->gi_frame_state, state);
	if (stack) {
		put64(m, c + l->gi_iframe + l->fr_stackpointer, stack + 8);
		put64(m, stack, awaits);
	}
}

static void build(struct image *m, const struct asyncio_layout *l)
{
	memset(m, 0, sizeof(*m));
	put64(m, INTERP + l->threads_head, TSTATE);
	put64(m, INTERP + l->interp_tasks_head, INTERP + l->interp_tasks_head); /* empty */
	put64(m, TSTATE + l->ts_native_thread_id, 77);
	put64(m, TSTATE + l->ts_running_loop, 0x99);
	put64(m, TSTATE + l->ts_running_task, TASK_B);
	/* head → A → B → head */
	put64(m, TSTATE + l->ts_tasks_head, TASK_A + l->task_node);
	put64(m, TASK_A + l->task_node, TASK_B + l->task_node);
	put64(m, TASK_B + l->task_node, TSTATE + l->ts_tasks_head);
	puts_at(m, NAMES, "_asyncio.Task");
	puts_at(m, NAMES + 0x40, "coroutine");
	puts_at(m, NAMES + 0x80, "_asyncio.FutureIter");
	puts_at(m, NAMES + 0xc0, "_asyncio.Future");
	puts_at(m, NAMES + 0x100, "int");
	put64(m, TASK_TYPE + l->tp_name, NAMES);
	put64(m, CORO_TYPE + l->tp_name, NAMES + 0x40);
	put64(m, ITER_TYPE + l->tp_name, NAMES + 0x80);
	put64(m, FUT_TYPE + l->tp_name, NAMES + 0xc0);
	put64(m, LONG_TYPE + l->tp_name, NAMES + 0x100);
	put64(m, LONG_TYPE + l->tp_flags, 1UL << 24);
	/* A: named by the number 12, awaits A2, which awaits a future through its iterator. */
	put64(m, TASK_A + l->ob_type, TASK_TYPE);
	put8(m, TASK_A + l->task_is_task, 1);
	put64(m, TASK_A + l->task_coro, CORO_A);
	put64(m, TASK_A + l->task_name, NAME_A);
	put64(m, NAME_A + l->ob_type, LONG_TYPE);
	put64(m, NAME_A + l->long_tag, 1 << 3);
	put64(m, NAME_A + l->long_digit, 12);
	coro(m, l, CORO_A, CODE_A, -1, STACK_A, CORO_A2);
	coro(m, l, CORO_A2, CODE_A2, -1, STACK_A2, ITER | 1);
	put64(m, ITER + l->ob_type, ITER_TYPE);
	put64(m, ITER + l->ob_type + 8, FUT);
	put64(m, FUT + l->ob_type, FUT_TYPE);
	/* B: running, awaited by A. */
	put64(m, TASK_B + l->ob_type, TASK_TYPE);
	put8(m, TASK_B + l->task_is_task, 1);
	put64(m, TASK_B + l->task_coro, CORO_B);
	put64(m, TASK_B + l->task_awaited_by, TASK_A);
	coro(m, l, CORO_B, CODE_B, 0, 0, 0);
}

Test(asyncio_tasks, walks_lists_chains_and_awaiters)
{
	static struct image m;
	struct asyncio_layout l;
	struct asyncio_task t[8];
	struct asyncio_walk_stats st = { 0 };
	size_t n;

	layout(&l);
	build(&m, &l);
	n = asyncio_walk(&l, img_read, &m, INTERP, t, 8, &st);
	cr_assert_eq(n, 2);
	cr_assert_eq(st.lists_cut, 0);
	cr_assert_eq(t[0].addr, TASK_A);
	cr_assert_eq(t[0].tid, 77);
	cr_assert(t[0].name_is_num);
	cr_assert_eq(t[0].name_num, 12);
	cr_assert_eq(t[0].ncoro, 2);
	cr_assert_eq(t[0].coros[0].code, CODE_A);
	cr_assert_eq(t[0].coros[0].lasti, 6);
	cr_assert_eq(t[0].coros[1].code, CODE_A2);
	cr_assert_str_eq(t[0].awaits, "_asyncio.Future");
	cr_assert(!t[0].running);
	cr_assert_eq(t[0].awaiter, 0);
	cr_assert_eq(t[1].addr, TASK_B);
	cr_assert(t[1].running);
	cr_assert_eq(t[1].ncoro, 1);
	cr_assert_str_eq(t[1].awaits, "");
	cr_assert_eq(t[1].awaiter, TASK_A);
}

Test(asyncio_tasks, lists_that_loop_or_point_nowhere_are_cut_and_counted)
{
	static struct image m;
	struct asyncio_layout l;
	struct asyncio_task t[8];
	struct asyncio_walk_stats st = { 0 };
	size_t n;

	layout(&l);
	build(&m, &l);
	put64(&m, TASK_B + l.task_node, TASK_B + l.task_node); /* B → B → ... */
	n = asyncio_walk(&l, img_read, &m, INTERP, t, 8, &st);
	cr_assert_eq(n, 0, "a list that loops gives no task");
	cr_assert_eq(st.lists_cut, 1);
	cr_assert_eq(st.beyond_max, 1);

	/* More tasks than room: what the room held. */
	build(&m, &l);
	memset(&st, 0, sizeof(st));
	n = asyncio_walk(&l, img_read, &m, INTERP, t, 1, &st);
	cr_assert_eq(n, 1);
	cr_assert_eq(t[0].addr, TASK_A);
	cr_assert_eq(st.beyond_max, 1);

	build(&m, &l);
	put64(&m, TASK_A + l.task_node, 0x7fff0000); /* unmapped */
	memset(&st, 0, sizeof(st));
	n = asyncio_walk(&l, img_read, &m, INTERP, t, 8, &st);
	cr_assert_eq(n, 0, "a list not read to its end gives no task");
	cr_assert_eq(st.lists_cut, 1);

	/* A chain that awaits itself ends at ASYNCIO_MAX_CORO. */
	build(&m, &l);
	coro(&m, &l, CORO_A, CODE_A, -1, STACK_A, CORO_A);
	memset(&st, 0, sizeof(st));
	n = asyncio_walk(&l, img_read, &m, INTERP, t, 8, &st);
	cr_assert_eq(n, 2);
	cr_assert_eq(t[0].ncoro, ASYNCIO_MAX_CORO);
}

/* Free-threaded 3.14+: a coroutine suspended in a thread with a bytecode
 * copy of its own (tlbc_index 2) points into that copy, not into
 * co_code_adaptive; index 0, or a copy that cannot be read, is the code's own. */
Test(asyncio_tasks, free_threaded_offsets_count_in_the_threads_bytecode_copy)
{
	static struct image m;
	struct asyncio_layout l;
	struct asyncio_task t[8];
	struct asyncio_walk_stats st = { 0 };
	const uint64_t tlbc = 0x15800, copy = 0x15a00;
	size_t n;

	layout(&l);
	l.ob_type = 24; /* 32-byte headers: nothing below depends on 8 */
	l.executable_mask = 1;
	l.fr_tlbc_index = 0x48;
	l.co_tlbc = 0xe0;
	build(&m, &l);
	put64(&m, CODE_A + l.co_tlbc, tlbc);
	put64(&m, tlbc, 3);             /* size */
	put64(&m, tlbc + 8 + 16, copy); /* entries[2] */
	put64(&m, CORO_A + l.gi_iframe + l.fr_tlbc_index, 2);
	put64(&m, CORO_A + l.gi_iframe + l.fr_instr_ptr, copy + 10);
	n = asyncio_walk(&l, img_read, &m, INTERP, t, 8, &st);
	cr_assert_eq(n, 2);
	cr_assert_eq(t[0].coros[0].code, CODE_A);
	cr_assert_eq(t[0].coros[0].lasti, 10, "relative to the thread's copy: %d", t[0].coros[0].lasti);
	cr_assert_eq(t[0].coros[1].lasti, 6, "index 0: co_code_adaptive");
	cr_assert_str_eq(t[0].awaits, "_asyncio.Future");

	/* The copy's entry unreadable: the code's own bytecode, whose offset is out of range. */
	put64(&m, CODE_A + l.co_tlbc, 0x7fff0000);
	n = asyncio_walk(&l, img_read, &m, INTERP, t, 8, &st);
	cr_assert_eq(n, 2);
	cr_assert_eq(t[0].coros[0].lasti, -1);
}

Test(asyncio_tasks, reasons_from_the_innermost_coroutine_and_what_it_awaits)
{
	const char *f = "/usr/lib/python3.14/asyncio/tasks.py", *lk = "/usr/lib/python3.14/asyncio/locks.py";

	cr_assert_eq(asyncio_await_reason("sleep", f, "_asyncio.Future", false), AWAIT_SLEEP);
	cr_assert_eq(asyncio_await_reason("Lock.acquire", lk, "_asyncio.Future", false), AWAIT_LOCK);
	cr_assert_eq(asyncio_await_reason("Queue.get", "/x/asyncio/queues.py", "_asyncio.Future", false), AWAIT_QUEUE);
	cr_assert_eq(asyncio_await_reason("StreamReader.read", "/x/asyncio/streams.py", "_asyncio.Future", false),
		     AWAIT_IO);
	cr_assert_eq(asyncio_await_reason("handler", "/srv/app.py", "_GatheringFuture", false), AWAIT_GATHER);
	cr_assert_eq(asyncio_await_reason("handler", "/srv/app.py", "_asyncio.Task", false), AWAIT_TASK);
	cr_assert_eq(asyncio_await_reason("sleep", "/srv/app.py", "_asyncio.Future", false), AWAIT_FUTURE);
	cr_assert_eq(asyncio_await_reason("handler", "/srv/app.py", "", false), AWAIT_READY);
	cr_assert_eq(asyncio_await_reason("handler", "/srv/app.py", "", true), AWAIT_NONE);
	cr_assert_eq(asyncio_await_reason("sleep", f, "_asyncio.Future", true), AWAIT_NONE);
	cr_assert_str_eq(asyncio_await_frame(AWAIT_SLEEP), "[await: sleep]");
	cr_assert_eq(asyncio_await_parse("[await: lock]"), AWAIT_LOCK);
	cr_assert_eq(asyncio_await_parse("[off-cpu: lock]"), -1);
}

/* ---- 3.11–3.13: tasks in _asyncio's sets -------------------------------- */

/* 3.12's offsets (user/python/offsets.c's table). */
static void layout_312(struct asyncio_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->ob_type = 8;
	l->tp_name = 24;
	l->tp_flags = 168;
	l->gi_iframe = 72;
	l->gi_frame_state = 67;
	l->fr_executable = 0;
	l->fr_instr_ptr = 56;
	l->co_adaptive = 192;
	l->set_mask = 32;
	l->set_table = 40;
	l->long_tag = 16;
	l->long_digit = 24;
	l->task_coro = 136;
	l->task_name = 144;
	l->stack_index = true;
	l->fr_stacktop = 64;
	l->fr_localsplus = 72;
	l->ma_keys = 32;
	l->wr_object = 16;
	l->await_slot = 1;
	l->frame_suspended_yield_from = -1;
}

enum {
	S_WEAKSET = 0x10000,
	S_EAGER = 0x10100,
	S_TABLE = 0x10200, /* 8 slots */
	S_ETABLE = 0x10300,
	S_CURRENT = 0x10400,
	S_KEYS = 0x10500,
	S_TASK_TYPE = 0x11000,
	S_CORO_TYPE = 0x11200,
	S_ITER_TYPE = 0x11400,
	S_GATHER_TYPE = 0x11600,
	S_STR_TYPE = 0x11800,
	S_SUB_TYPE = 0x11a00, /* a subclass of _asyncio.Task */
	S_REF_A = 0x12000,
	S_REF_B = 0x12100,
	S_DUMMY = 0x12200,
	S_TASK_A = 0x13000,
	S_TASK_B = 0x13400,
	S_TASK_C = 0x13800,
	S_CORO_A = 0x14000,
	S_CORO_B = 0x14400,
	S_CORO_C = 0x14800,
	S_ITER = 0x15000,
	S_GATHER = 0x15100,
	S_CODE = 0x16000,
	S_NAMES = 0x17000,
	S_LOOP = 0x17800,
};

static void s_coro(struct image *m, const struct asyncio_layout *l, uint64_t c, int8_t state, uint64_t awaits)
{
	int32_t top = 3;

	put64(m, c + l->ob_type, S_CORO_TYPE);
	put64(m, c + l->gi_iframe + l->fr_executable, S_CODE);
	put64(m, c + l->gi_iframe + l->fr_instr_ptr, S_CODE + l->co_adaptive + 10);
	put8(m, c + l->gi_frame_state, state);
	memcpy(&m->mem[0][0] + (c + l->gi_iframe + l->fr_stacktop - BASE), &top, 4);
	put64(m, c + l->gi_iframe + l->fr_localsplus + 8 * (top - 1), awaits);
}

static size_t s_children(void *ctx, uint64_t fut, uint64_t *out, size_t max)
{
	(void)ctx;
	if (fut != S_GATHER || max < 1)
		return 0;
	out[0] = S_TASK_C;
	return 1;
}

Test(asyncio_tasks, sets_weak_and_eager_tasks_their_awaiters_and_the_running_one)
{
	static struct image m;
	struct asyncio_layout l;
	struct asyncio_task out[8];
	struct asyncio_walk_stats st = { 0 };
	struct asyncio_sets s = { .set = { S_WEAKSET, S_EAGER },
				  .weak = { true, false },
				  .current = S_CURRENT,
				  .task_type = S_TASK_TYPE,
				  .children = s_children };

	layout_312(&l);
	memset(&m, 0, sizeof(m));
	puts_at(&m, S_NAMES, "_asyncio.FutureIter");
	puts_at(&m, S_NAMES + 0x40, "_GatheringFuture");
	put64(&m, S_ITER_TYPE + l.tp_name, S_NAMES);
	put64(&m, S_GATHER_TYPE + l.tp_name, S_NAMES + 0x40);
	put64(&m, S_TASK_TYPE + l.tp_name, S_NAMES + 0x80);
	puts_at(&m, S_NAMES + 0x80, "_asyncio.Task");
	/* The WeakSet's data: refs to A and B, a dummy of a removed key. */
	put64(&m, S_WEAKSET + l.set_mask, 7);
	put64(&m, S_WEAKSET + l.set_table, S_TABLE);
	put64(&m, S_TABLE + 16 * 1, S_REF_A);
	put64(&m, S_TABLE + 16 * 4, S_DUMMY);
	put64(&m, S_TABLE + 16 * 6, S_REF_B);
	put64(&m, S_REF_A + l.wr_object, S_TASK_A);
	put64(&m, S_REF_B + l.wr_object, S_TASK_B);
	/* The eager set: C, and A again (moving between the sets). */
	put64(&m, S_EAGER + l.set_mask, 7);
	put64(&m, S_EAGER + l.set_table, S_ETABLE);
	put64(&m, S_ETABLE + 16 * 2, S_TASK_C);
	put64(&m, S_ETABLE + 16 * 3, S_TASK_A);
	/* _current_tasks: {loop: B}: general keys, 8 index bytes. */
	put64(&m, S_CURRENT + l.ma_keys, S_KEYS);
	put8(&m, S_KEYS + 9, 3);
	put8(&m, S_KEYS + 10, 0);
	put64(&m, S_KEYS + 24, 1);
	put64(&m, S_KEYS + 32 + 8 + 8, S_LOOP);
	put64(&m, S_KEYS + 32 + 8 + 16, S_TASK_B);
	/* A awaits B (through its FutureIter); B runs; C awaits a gather (of itself: no awaiter). */
	for (uint64_t t = S_TASK_A; t <= S_TASK_C; t += 0x400)
		put64(&m, t + l.ob_type, S_TASK_TYPE);
	put64(&m, S_TASK_A + l.task_coro, S_CORO_A);
	put64(&m, S_TASK_B + l.task_coro, S_CORO_B);
	put64(&m, S_TASK_C + l.task_coro, S_CORO_C);
	put64(&m, S_ITER + l.ob_type, S_ITER_TYPE);
	put64(&m, S_ITER + 16, S_TASK_B);
	put64(&m, S_GATHER + l.ob_type, S_GATHER_TYPE);
	s_coro(&m, &l, S_CORO_A, -1, S_ITER);
	s_coro(&m, &l, S_CORO_B, 0, 0);         /* executing */
	s_coro(&m, &l, S_CORO_C, -1, S_GATHER); /* its gather's child is itself: no awaiter */

	size_t n = asyncio_walk_sets(&l, img_read, &m, &s, out, 8, &st);

	cr_assert_eq(n, 3, "%zu tasks", n);
	cr_assert_eq(st.lists_cut, 0);
	cr_assert_eq(out[0].addr, S_TASK_A);
	cr_assert_eq(out[1].addr, S_TASK_B);
	cr_assert_eq(out[2].addr, S_TASK_C);
	cr_assert_str_eq(out[0].awaits, "_asyncio.Task");
	cr_assert_eq(out[0].awaits_obj, S_TASK_B);
	cr_assert_eq(out[0].ncoro, 1);
	cr_assert_eq(out[0].coros[0].code, S_CODE);
	cr_assert_eq(out[0].coros[0].lasti, 10);
	cr_assert_eq(out[1].awaiter, S_TASK_A, "B is awaited by A");
	cr_assert(out[1].running && !out[0].running && !out[2].running);
	cr_assert_str_eq(out[2].awaits, "_GatheringFuture");
	cr_assert_eq(out[2].awaiter, 0);
	cr_assert_eq(out[0].awaiter, 0);
	cr_assert_eq(out[1].coro, S_CORO_B);

	/* _current_tasks' values: the task each loop runs now. */
	uint64_t cur[4];

	cr_assert_eq(asyncio_current_tasks(&l, img_read, &m, &s, cur, 4), 1);
	cr_assert_eq(cur[0], S_TASK_B);
	/* A set's keys, in table order; none past the caller's bound. */
	cr_assert_eq(asyncio_set_keys(&l, img_read, &m, S_EAGER, 8, cur, 4), 2);
	cr_assert(cur[0] == S_TASK_C && cur[1] == S_TASK_A);
	cr_assert_eq(asyncio_set_keys(&l, img_read, &m, S_EAGER, 4, cur, 4), 0, "8 slots, 4 at most");

	/* C of a class derived from _asyncio.Task (a custom task factory's) is
	 * a task; a key whose type's bases never reach it (a coroutine) is not. */
	l.tp_base = 256;
	put64(&m, S_TASK_C + l.ob_type, S_SUB_TYPE);
	put64(&m, S_SUB_TYPE + l.tp_base, S_TASK_TYPE);
	put64(&m, S_ETABLE + 16 * 5, S_CORO_A);
	n = asyncio_walk_sets(&l, img_read, &m, &s, out, 8, &st);
	cr_assert_eq(n, 3, "%zu tasks", n);
	cr_assert_eq(out[2].addr, S_TASK_C);
	put64(&m, S_SUB_TYPE + l.tp_base, 0);
	cr_assert_eq(asyncio_walk_sets(&l, img_read, &m, &s, out, 8, &st), 2, "a type derived from no task");
	put64(&m, S_SUB_TYPE + l.tp_base, S_TASK_TYPE);
	put64(&m, S_ETABLE + 16 * 5, 0);

	/* Resized while its table was read: the walk's reader (a cache) still
	 * sees the old table, the target's memory now a new one. */
	static struct image now;

	now = m;
	put64(&now, S_WEAKSET + l.set_table, S_TABLE + 0x80);
	s.fresh = img_read;
	s.fresh_ctx = &now;
	st = (struct asyncio_walk_stats){ 0 };
	n = asyncio_walk_sets(&l, img_read, &m, &s, out, 8, &st);
	cr_assert_eq(n, 2, "the eager set's tasks: %zu", n);
	cr_assert_eq(st.lists_cut, 1);
	s.fresh_ctx = &m;
	st = (struct asyncio_walk_stats){ 0 };
	cr_assert_eq(asyncio_walk_sets(&l, img_read, &m, &s, out, 8, &st), 3);
	cr_assert_eq(st.lists_cut, 0);

	/* A table that moves under the reader: the set gives nothing, counted. */
	st = (struct asyncio_walk_stats){ 0 };
	put64(&m, S_WEAKSET + l.set_mask, 1u << 20);
	n = asyncio_walk_sets(&l, img_read, &m, &s, out, 8, &st);
	cr_assert_eq(n, 2, "the eager set's tasks: %zu", n);
	cr_assert_eq(st.lists_cut, 1);
}
