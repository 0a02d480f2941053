/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The Python stack of the sampled thread, read in BPF for processes that
 * userspace registered in py_procs. Per sample: the thread's PyThreadState
 * (cached per tid and validated with one read), then the frame chain, one
 * read per frame, recording (code object, instruction offset). Names and
 * lines are userspace's job.
 *
 * The thread is found without disassembly: from the task's thread pointer
 * (bpf/arch.bpf.h) less the process's tp_to_self comes pthread_self(), which
 * CPython stores in tstate->thread_id in every version.
 *
 * Whose memory it reads is user_read()'s business (shared.bpf.h): the
 * running thread's, or a blocked one's for the stop flush.
 */
#ifndef PYEBPF_PYTHON_BPF_H
#define PYEBPF_PYTHON_BPF_H

#include "shared.bpf.h"
#include "context.bpf.h"

#define MAX_INTERPRETERS 4
#define MAX_THREADS 4096
/* A thread without a thread state is looked for again after this long. */
#define NO_TSTATE_RETRY_NS (20 * 1000 * 1000ULL)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* pid */
	__type(value, struct pyebpf_py_proc);
} py_procs SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PYEBPF_MAX_OFFSETS);
	__type(key, __u32);
	__type(value, struct pyebpf_py_offsets);
} py_offsets SEC(".maps") __weak;

struct tstate_cache {
	__u64 tstate; /* 0: the thread had none when last looked for */
	__u64 looked_ns;
	__u32 ambiguous; /* thread states in several interpreters: look again every time */
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct tstate_cache);
} py_tstates SEC(".maps") __weak;

/* Filled by userspace (include/pyebpf.h says when); LRU: the threads of
 * processes that are gone make room by themselves. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct pyebpf_tstate_key);
	__type(value, __u64);
} py_tstate_index SEC(".maps") __weak;

/*
 * 3.11+ frames live on the thread's data stack, each caller just below its
 * callee: one read takes the frame and everything below it down to the
 * start of its page (up to FRAME_BLOCK bytes), and the frames found in it
 * are parsed from the copy instead of read one by one (a read costs about
 * as much as the rest of a frame's work). Frames elsewhere (generators'
 * frames live in their objects; <= 3.10's frames are heap objects) are read
 * alone. Indexes are masked into a buffer twice the block: always in bounds.
 */
#define FRAME_PAGE 4096
#define FRAME_BLOCK (FRAME_PAGE + PYEBPF_MAX_FRAME_READ)
#define FRAME_BUF 8192 /* a power of two >= FRAME_BLOCK */

/* A code object's fields read for its check: masked into it, always in bounds. */
#define CODE_BUF 128 /* a power of two >= PYEBPF_MAX_CODE_READ */

struct py_scratch {
	__u8 blk[FRAME_BUF + 8];
	__u8 code[CODE_BUF + 8];
	/* Where a frame's locals and its code object's check fields are, set
	 * by python_stack for its walk: here, not in fwalk_ctx, whose every
	 * byte is on the stack of the wall-mode programs' deepest call chain
	 * (512 bytes at most: 24 more bytes there made it 576 on 6.1). */
	__u32 off_locals;
	__u32 code_start, code_len;            /* the code object's part read for its check */
	__u32 code_name, code_file, code_line; /* its fields in that part */
	__u64 ctx_tmp[5];                      /* read_context's (context.bpf.h) */
};

/* Indexed like `scratch` (shared.bpf.h), by SCRATCH_SLOT(). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_scratch);
} py_scratch SEC(".maps") __weak;

static __always_inline int read_ptr(__u64 addr, __u64 *out)
{
	*out = 0;
	return user_read(out, sizeof(*out), (const void *)addr);
}

/* ---- the walks' state ------------------------------------------------------ */

/* A walk of a thread list (find_tstate, tlist_step). */
struct tlist_ctx {
	__u64 t;
	__u64 thread_self;
	__u64 found;   /* the best match so far */
	__u64 current; /* <= 3.11: the GIL holder's thread state, or 0 */
	__u32 off_next, off_thread_id, off_status;
	__u32 seen;  /* thread states looked at */
	int several; /* more than one thread state of this thread (a flag, not a
			* count: a value that grows keeps the verifier from converging) */
	int active;  /* found is the current one: stop looking */
	int err;
};

/* A walk of a frame chain (python_stack, fwalk_step). */
struct fwalk_ctx {
	__u64 frame;
	__u64 blk_lo, blk_hi; /* the user addresses the scratch block holds */
	__u32 n;
	__u32 kind;
	__u32 read_size;
	__u32 off_back, off_code, off_lasti, off_owner, off_globals;
	__u32 lasti_mult, code_adaptive;
	__u32 code_tlbc, off_tlbc_index; /* free-threaded 3.14+: per-thread bytecode */
	__u32 gen_iframe, off_gen_owner; /* 3.11–3.13: see pyebpf_py_offsets */
	__u64 code_mask;
	__u64 prev_coro; /* the coroutine whose frame was recorded last, 0: not a generator's */
	__u64 coro;      /* the outermost coroutine frame C entered so far */
	int err, truncated;
};

/* A look for a loop in a frame chain (frame_cycle, cycle_step). */
struct cycle_ctx {
	__u64 start, frame;
	__u32 off_back, len;
};

/*
 * Each walk is a loop whose body is a global function: the verifier checks
 * a global function once, on its own, whatever calls it and however often,
 * where a loop body it has to follow would be explored again for every
 * iteration the verifier cannot prove alike (Linux 7.x explores bpf_loop
 * callbacks that way: the inlined walk exceeded its million instructions),
 * and each program that walks would verify its own copy. The loop is
 * bpf_loop, or without it (the compat build, kernel_compat.bpf.h) a bounded
 * loop. A global function takes no pointers on 5.10: the walk's state lives
 * in this per-CPU record, copied in before the loop and out after it.
 */
/* Copies of code objects (copy_new_code): not in the stop flush, which
 * reads other threads' memory, nor in the compat build (before 5.17),
 * whose wall-mode program the verifier refuses with them (E2BIG on 5.10). */
#if !defined(READ_OTHER_TASK) && !defined(PYEBPF_KERNEL_COMPAT)
#define PYEBPF_COPIES 1
#endif

/* A walk of a sample's frames for code objects to copy (copy_step). */
struct copy_ctx {
	__u32 pid, n, budget;
	__u32 code_len, off_name, off_file, off_linetable;
};

struct walks {
	struct tlist_ctx tlist_step;
	struct fwalk_ctx fwalk_step;
	struct cycle_ctx cycle_step;
	struct copy_ctx copy_step;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walks);
} walks SEC(".maps") __weak;

#ifndef PYEBPF_CU
#error "a file that includes python.bpf.h names itself: #define PYEBPF_CU name"
#endif
/* One name per file: each file of the object has its own copy (its own
 * SCRATCH_SLOT and user_read). */
#define WALK_CAT(a, b) a##_g_##b
#define WALK_FN(cb, cu) WALK_CAT(cb, cu)
#define WALK_GLOBAL(cb) WALK_FN(cb, PYEBPF_CU)
int WALK_GLOBAL(tlist_step)(__u32 i);
int WALK_GLOBAL(fwalk_step)(__u32 i);
int WALK_GLOBAL(cycle_step)(__u32 i);
int WALK_GLOBAL(copy_step)(__u32 i);

#ifdef PYEBPF_KERNEL_COMPAT
#define WALK_ITERATE(full, n, cb)          \
	for (__u32 _i = 0; _i < (n); _i++) \
		if (WALK_GLOBAL(cb)(_i))   \
			break;
#else
/* bpf_loop's callback: the global function's one caller. */
#define WALK_CALLBACK(cb)                                                      \
	static long WALK_CAT(cb, loop)(__u32 i, void *unused)                  \
	{                                                                      \
		return WALK_GLOBAL(cb)(i) ? 1 : 0; /* bpf_loop takes 0 or 1 */ \
	}
WALK_CALLBACK(tlist_step)
WALK_CALLBACK(fwalk_step)
WALK_CALLBACK(cycle_step)
#ifdef PYEBPF_COPIES
WALK_CALLBACK(copy_step)
#endif
#define WALK_ITERATE(full, n, cb) bpf_loop((full), WALK_CAT(cb, loop), NULL, 0);
#endif

/* Walk with cb (up to full iterations; n without bpf_loop) from the state in *ctx. */
#define LOOP(full, n, cb, ctx)                                          \
	do {                                                            \
		__u32 _zero = 0;                                        \
		struct walks *_w = bpf_map_lookup_elem(&walks, &_zero); \
		if (!_w)                                                \
			break;                                          \
		_w->cb = *(ctx);                                        \
		WALK_ITERATE(full, n, cb)                               \
		*(ctx) = _w->cb;                                        \
	} while (0)

/* ---- finding the thread state ------------------------------------------ */

/*
 * One OS thread can have a thread state in each interpreter it entered
 * (subinterpreters): all carry its thread id. The current one is marked
 * active (3.12+: _status.active), or (<= 3.11) is the GIL holder; when none
 * is (the thread released the GIL), the main interpreter's, which the walk
 * meets last (interpreters are listed newest first).
 */
#define TSTATE_ACTIVE_BIT 0x10

static long tlist_step(__u32 i, void *data)
{
	struct tlist_ctx *c = data;
	__u64 id;
	__u32 status = 0;

	if (!c->t)
		return 1;
	if (read_ptr(c->t + c->off_thread_id, &id)) {
		c->err = 1;
		return 1;
	}
	c->seen++;
	if (id == c->thread_self) {
		if (c->found)
			c->several = 1;
		c->found = c->t;
		if (c->off_status != PYEBPF_NO_OFFSET)
			user_read(&status, sizeof(status), (const void *)(c->t + c->off_status));
		if ((status & TSTATE_ACTIVE_BIT) || (c->current && c->t == c->current)) {
			c->active = 1;
			return 1;
		}
	}
	if (read_ptr(c->t + c->off_next, &c->t)) {
		c->err = 1;
		return 1;
	}
	return 0;
}

/* What the thread lists said; internal, apart from enum pyebpf_py_error,
 * which travels to userspace. */
enum tstate_lookup {
	TSTATE_FOUND,
	TSTATE_ABSENT,     /* the thread has no thread state */
	TSTATE_NONE_YET,   /* no thread state at all: the interpreter is starting */
	TSTATE_UNREADABLE, /* an interpreter or thread list could not be read */
	TSTATE_BEYOND,     /* not found, and a thread list goes on beyond the walk */
};

/* *ambiguous: the thread has thread states in several interpreters, so a
 * cached one cannot be trusted on its thread id alone. */
static __always_inline enum tstate_lookup find_tstate(const struct pyebpf_py_proc *pp,
						      const struct pyebpf_py_offsets *o, __u64 thread_self,
						      __u64 *tstate, int *ambiguous)
{
	struct tlist_ctx c = { .thread_self = thread_self,
			       .off_next = o->tstate_next,
			       .off_thread_id = o->tstate_thread_id,
			       .off_status = o->tstate_status };
	__u64 interp;
	int beyond = 0;

	if (o->gil_kind == PYEBPF_GIL_TSTATE_CURRENT && read_ptr(pp->gil_addr, &c.current))
		c.current = 0;
	if (read_ptr(pp->interp_head_addr, &interp))
		return TSTATE_UNREADABLE;
	for (int i = 0; i < MAX_INTERPRETERS && interp && !c.active; i++) {
		if (read_ptr(interp + o->interp_threads_head, &c.t))
			return TSTATE_UNREADABLE;
		LOOP(MAX_THREADS, COMPAT_MAX_THREADS, tlist_step, &c);
		if (c.err)
			return TSTATE_UNREADABLE;
		if (c.t && !c.active) /* the walk stopped before the list's end */
			beyond = 1;
		if (read_ptr(interp + o->interp_next, &interp))
			return TSTATE_UNREADABLE;
	}
	*ambiguous = c.several || (c.active && interp); /* more interpreters not looked at */
	if (c.found) {
		*tstate = c.found;
		return TSTATE_FOUND;
	}
	if (beyond)
		return TSTATE_BEYOND;
	return c.seen ? TSTATE_ABSENT : TSTATE_NONE_YET;
}

/*
 * Is a cached thread state (of this thread) still the current one? 3.12+
 * says so in its active bit. An inactive one may be a thread that released
 * the GIL, or one that entered another interpreter since (a new thread
 * state there): looked for again, at most every NO_TSTATE_RETRY_NS.
 */
static __always_inline int cached_current(const struct tstate_cache *cached, const struct pyebpf_py_offsets *o,
					  __u64 now)
{
	__u32 status = 0;

	if (o->tstate_status == PYEBPF_NO_OFFSET)
		return 1;
	if (user_read(&status, sizeof(status), (const void *)(cached->tstate + o->tstate_status)))
		return 0;
	return (status & TSTATE_ACTIVE_BIT) || now - cached->looked_ns < NO_TSTATE_RETRY_NS;
}

/* The thread state of the current thread, through the per-tid cache. */
/*
 * The thread's state in userspace's index, checked with one read (0: none).
 * Only while the process has one interpreter: a thread indexed before it
 * entered a subinterpreter has a second thread state now, which only the
 * walk tells from the first.
 */
static __always_inline __u64 indexed_tstate(const struct pyebpf_py_proc *pp, __u32 pid, __u64 thread_self,
					    const struct pyebpf_py_offsets *o)
{
	struct pyebpf_tstate_key key = { .pid = pid, .thread_id = thread_self };
	__u64 *t = bpf_map_lookup_elem(&py_tstate_index, &key), id, interp, next;

	if (!t || !*t || read_ptr(*t + o->tstate_thread_id, &id) || id != thread_self)
		return 0;
	if (read_ptr(pp->interp_head_addr, &interp) || !interp || read_ptr(interp + o->interp_next, &next) || next)
		return 0;
	return *t;
}

static __always_inline int current_tstate(const struct pyebpf_py_proc *pp, const struct pyebpf_py_offsets *o, __u32 pid,
					  __u32 tid, __u64 *tstate)
{
	__u64 thread_self = task_thread_pointer() - pp->tp_to_self, now = bpf_ktime_get_ns(), id;
	struct tstate_cache *cached = bpf_map_lookup_elem(&py_tstates, &tid), fresh = { 0 };
	enum tstate_lookup found;
	int ambiguous = 0;

	if (cached) {
		if (cached->tstate && !cached->ambiguous && !read_ptr(cached->tstate + o->tstate_thread_id, &id) &&
		    id == thread_self && cached_current(cached, o, now)) {
			*tstate = cached->tstate;
			return PYEBPF_PY_OK;
		}
		if (!cached->tstate && now - cached->looked_ns < NO_TSTATE_RETRY_NS)
			return PYEBPF_PY_NO_TSTATE;
	}
#ifdef READ_OTHER_TASK
	/* The stop flush: userspace indexed every thread just before, and a
	 * walk per blocked thread would walk the list again for each. */
	*tstate = indexed_tstate(pp, pid, thread_self, o);
	found = *tstate ? TSTATE_FOUND : find_tstate(pp, o, thread_self, tstate, &ambiguous);
#else
	/* The walk first: an index entry may be stale (a thread that exited,
	 * its pthread_self reused by the next); the index for a thread the
	 * walk does not reach, refreshed when that happens. */
	found = find_tstate(pp, o, thread_self, tstate, &ambiguous);
	if (found == TSTATE_BEYOND && (*tstate = indexed_tstate(pp, pid, thread_self, o)))
		found = TSTATE_FOUND;
#endif
	switch (found) {
	case TSTATE_FOUND:
	case TSTATE_ABSENT:
		fresh.tstate = found == TSTATE_FOUND ? *tstate : 0;
		fresh.looked_ns = now;
		fresh.ambiguous = ambiguous;
		bpf_map_update_elem(&py_tstates, &tid, &fresh, BPF_ANY);
		return found == TSTATE_FOUND ? PYEBPF_PY_OK : PYEBPF_PY_NO_TSTATE;
	case TSTATE_NONE_YET:
		/* Not worth remembering: the main thread gets its state any moment. */
		return PYEBPF_PY_NO_TSTATE;
	case TSTATE_BEYOND: /* userspace indexes the process when it sees this */
		return PYEBPF_PY_THREAD_LIMIT;
	default:
		return PYEBPF_PY_READ_INTERP;
	}
}

/* ---- walking the frames --------------------------------------------------- */

static __always_inline __u64 field_u64(const struct py_scratch *b, __u32 base, __u32 off)
{
	if (off > PYEBPF_MAX_FRAME_READ - 8)
		return 0;
	return *(const __u64 *)&b->blk[(base + off) & (FRAME_BUF - 1)];
}

static __always_inline __u32 field_u32(const struct py_scratch *b, __u32 base, __u32 off)
{
	if (off > PYEBPF_MAX_FRAME_READ - 4)
		return 0;
	return *(const __u32 *)&b->blk[(base + off) & (FRAME_BUF - 1)];
}

static __always_inline __u8 field_u8(const struct py_scratch *b, __u32 base, __u32 off)
{
	if (off > PYEBPF_MAX_FRAME_READ - 1)
		return 0;
	return b->blk[(base + off) & (FRAME_BUF - 1)];
}

/* Where frame c->frame starts in the scratch block, read if it is not there
 * yet; -1 when it cannot be read. */
static __always_inline int frame_in_block(struct fwalk_ctx *c, struct py_scratch *b, __u32 size)
{
	__u64 start = c->frame, len;

	if (c->frame >= c->blk_lo && c->frame + size <= c->blk_hi && c->blk_hi)
		return (int)((c->frame - c->blk_lo) & (FRAME_PAGE - 1));
	if (c->kind != PYEBPF_FRAMES_OBJECT)
		start = c->frame & ~(__u64)(FRAME_PAGE - 1); /* its page is mapped: the frame is on it */
	len = c->frame + size - start;
	if (len > FRAME_BLOCK || len < 8)
		return -1;
	if (user_read(b->blk, len, (const void *)start)) {
		/* The page start may be another object's, e.g. a guard: the frame alone. */
		start = c->frame;
		len = size;
		if (len > PYEBPF_MAX_FRAME_READ || user_read(b->blk, len, (const void *)start))
			return -1;
	}
	c->blk_lo = start;
	c->blk_hi = start + len;
	return (int)((c->frame - start) & (FRAME_PAGE - 1));
}

/* Largest per-thread bytecode index believed (one copy per thread that ran the code). */
#define MAX_TLBC_INDEX 65536

/*
 * Where the bytecode a frame runs starts: co_code_adaptive, or on
 * free-threaded 3.14+ the running thread's copy, co_tlbc->entries[index]
 * (a _PyCodeArray: size, then the entries). Index 0 is co_code_adaptive
 * itself, so a copy that cannot be read falls back to it.
 */
static __always_inline __u64 bytecode_of(const struct fwalk_ctx *c, const struct py_scratch *b, __u32 base, __u64 code)
{
	__u64 arr, copy;
	__s32 idx;

	if (!c->code_tlbc)
		return code + c->code_adaptive;
	idx = (__s32)field_u32(b, base, c->off_tlbc_index);
	if (idx <= 0 || idx >= MAX_TLBC_INDEX || read_ptr(code + c->code_tlbc, &arr) || !arr ||
	    read_ptr(arr + 8 + 8 * (__u64)idx, &copy) || !copy)
		return code + c->code_adaptive;
	return copy;
}

/*
 * The check (pyebpf_code_check) of the code object running a frame, read
 * now, for userspace to tell it from another code object at the same
 * address when it names the frame: one read of the part of the code object
 * that holds its name, file and first line; 0 when it fails.
 */
static __always_inline __u32 code_check(struct py_scratch *b, __u64 code)
{
	__u32 len = b->code_len;
	__u64 name, file;
	__s32 line;

	if (!len || len > PYEBPF_MAX_CODE_READ || user_read(b->code, len, (const void *)(code + b->code_start)))
		return 0;
	name = *(const __u64 *)&b->code[b->code_name & (CODE_BUF - 1)];
	file = *(const __u64 *)&b->code[b->code_file & (CODE_BUF - 1)];
	line = *(const __s32 *)&b->code[b->code_line & (CODE_BUF - 1)];
	return pyebpf_code_check(name, file, line);
}

static long fwalk_step(__u32 i, void *data)
{
	struct fwalk_ctx *c = data;
	struct pyebpf_sample *s;
	struct py_scratch *b;
	__u32 slot = SCRATCH_SLOT(), size = c->read_size, n = c->n, base;
	__u64 code, globals, locals;
	__s64 lasti;
	__u64 addr;
	__u32 flags = 0;
	int at;

	if (!c->frame)
		return 1;
	if (n >= PYEBPF_MAX_PY_FRAMES) {
		c->truncated = 1;
		return 1;
	}
	s = sample_buf();
	b = bpf_map_lookup_elem(&py_scratch, &slot);
	if (!s || !b)
		return 1;
	if (size > PYEBPF_MAX_FRAME_READ)
		size = PYEBPF_MAX_FRAME_READ;
	if (size < 8)
		size = 8;
	at = frame_in_block(c, b, size);
	if (at < 0) {
		c->err = 1;
		return 1;
	}
	base = (__u32)at;
	addr = c->frame;
	code = field_u64(b, base, c->off_code) & c->code_mask;
	c->frame = field_u64(b, base, c->off_back);

	if (c->kind == PYEBPF_FRAMES_OBJECT) {
		lasti = (__s32)field_u32(b, base, c->off_lasti) * (__s64)c->lasti_mult;
		flags = PYEBPF_PYFRAME_ENTRY; /* one evaluation loop per frame */
	} else {
		__u8 owner = field_u8(b, base, c->off_owner);

		if (c->kind == PYEBPF_FRAMES_312 && owner >= 3) {
			/* A shim pushed where C entered the evaluation loop: the frame
			 * recorded just before it is that loop's first. */
			if (n > 0)
				s->py[(n - 1) & (PYEBPF_MAX_PY_FRAMES - 1)].flags |= PYEBPF_PYFRAME_ENTRY;
			if (c->prev_coro)
				c->coro = c->prev_coro;
			return 0;
		}
		/* A coroutine's frame C entered: a task's step, if its outermost. */
		c->prev_coro = 0;
		if (c->gen_iframe && field_u8(b, base, c->off_gen_owner) == 1)
			c->prev_coro = addr - c->gen_iframe;
		if (c->kind == PYEBPF_FRAMES_311 && owner) { /* is_entry */
			flags = PYEBPF_PYFRAME_ENTRY;
			if (c->prev_coro)
				c->coro = c->prev_coro;
		}
		lasti = (__s64)(field_u64(b, base, c->off_lasti) - bytecode_of(c, b, base, code));
	}
	if (lasti > 0x7fffffff || lasti < -0x7fffffff)
		lasti = -1;
	n &= PYEBPF_MAX_PY_FRAMES - 1;
	globals = field_u64(b, base, c->off_globals);
	/* A locals dict: code that dies young (a module's, a class body's,
	 * exec'd), whose address userspace may find reused. */
	locals = field_u64(b, base, b->off_locals);
	if (locals && locals == globals)
		flags |= PYEBPF_PYFRAME_MODULE;
	s->py[n].code = code;
	s->py[n].globals = globals;
	s->py[n].lasti = (__s32)lasti;
	s->py[n].flags = flags;
	c->n = n + 1;
	/* Last, with the frame written: nothing else lives across its read
	 * (the stack of the wall-mode programs' deepest call chain is 512
	 * bytes at most, and a value kept over a helper call takes a slot). */
	if (locals)
		s->py[n].flags |= code_check(b, code) << PYEBPF_PYFRAME_CHECK_SHIFT;
	return 0;
}

/*
 * A chain that outlasted the frame limit: deep recursion, or a chain whose
 * f_back leads back into itself (memory the process controls). Walking on
 * from where the walk stopped tells them apart: a loop returns there. Only
 * cut stacks pay for it, and it is a callback of its own: a check inside
 * the main walk kept the verifier from converging on it (10x load time).
 * Returns the loop's length in frames, 0 for none.
 */

static long cycle_step(__u32 i, void *data)
{
	struct cycle_ctx *c = data;

	if (read_ptr(c->frame + c->off_back, &c->frame) || !c->frame)
		return 1;
	if (c->frame == c->start) {
		c->len = i + 1;
		return 1;
	}
	return 0;
}

static __always_inline __u32 frame_cycle(__u64 frame, __u32 off_back)
{
	struct cycle_ctx c = { .start = frame, .frame = frame, .off_back = off_back };

	LOOP(PYEBPF_MAX_PY_FRAMES, COMPAT_MAX_FRAMES, cycle_step, &c);
	return c.len;
}

static __always_inline void read_gil(struct pyebpf_sample *s, const struct pyebpf_py_proc *pp,
				     const struct pyebpf_py_offsets *o, __u64 tstate)
{
	__u64 holder = 0, interp, gil;
	__u32 locked = 0;

	switch (o->gil_kind) {
	case PYEBPF_GIL_TSTATE_CURRENT:
		if (read_ptr(pp->gil_addr, &holder))
			return;
		locked = holder != 0;
		break;
	case PYEBPF_GIL_INTERP_PTR:
	case PYEBPF_GIL_INTERP_EMBEDDED:
		if (read_ptr(tstate + o->tstate_interp, &interp))
			return;
		gil = interp + o->gil_off;
		if (o->gil_kind == PYEBPF_GIL_INTERP_PTR && read_ptr(gil, &gil))
			return;
		if (user_read(&locked, sizeof(locked), (const void *)(gil + o->gil_locked)) ||
		    read_ptr(gil + o->gil_holder, &holder))
			return;
		break;
	default:
		return;
	}
	s->flags |= PYEBPF_SAMPLE_GIL_KNOWN;
	if (locked && holder == tstate)
		s->flags |= PYEBPF_SAMPLE_GIL_HELD;
}

/* Where a code object's check fields are, relative to the part of it read. */
static __always_inline void code_fields(struct py_scratch *c, const struct pyebpf_py_offsets *o)
{
	__u32 start = o->code_name;

	if (o->code_filename < start)
		start = o->code_filename;
	if (o->code_firstlineno < start)
		start = o->code_firstlineno;
	c->code_start = start;
	c->code_len = o->code_check_len;
	c->code_name = o->code_name - start;
	c->code_file = o->code_filename - start;
	c->code_line = o->code_firstlineno - start;
}

/* Fill the Python part of a sample (py_len, tstate, py_error, flags). */
static __always_inline void python_stack(struct pyebpf_sample *s, __u32 pid, __u32 tid)
{
	const struct pyebpf_py_proc *pp = bpf_map_lookup_elem(&py_procs, &pid);
	const struct pyebpf_py_offsets *o;
	struct fwalk_ctx c = { 0 };
	struct py_scratch *b;
	__u64 tstate = 0, frame;
	__u32 oid;
	int err;

	s->py_len = 0;
	s->tstate = 0;
	s->running_task = 0;
	s->py_error = PYEBPF_PY_OK;
	if (!pp)
		return;
	s->flags |= PYEBPF_SAMPLE_PY;
	oid = pp->offsets_id;
	o = bpf_map_lookup_elem(&py_offsets, &oid);
	if (!o) {
		s->py_error = PYEBPF_PY_NO_OFFSETS;
		count(PYEBPF_CNT_PY_NO_OFFSETS);
		return;
	}
	/* Early, while few values are live: a value kept over a helper call
	 * takes a stack slot, and the stack of the wall-mode programs' deepest
	 * call chain is 512 bytes at most. */
	oid = SCRATCH_SLOT(); /* the key, now of this CPU's scratch */
	b = bpf_map_lookup_elem(&py_scratch, &oid);
	if (!b)
		return;
	b->off_locals = o->frame_locals;
	code_fields(b, o);
	err = current_tstate(pp, o, pid, tid, &tstate);
	if (err) {
		s->py_error = err;
		count(err == PYEBPF_PY_NO_TSTATE      ? PYEBPF_CNT_PY_NO_TSTATE
		      : err == PYEBPF_PY_THREAD_LIMIT ? PYEBPF_CNT_PY_THREAD_LIMIT
						      : PYEBPF_CNT_PY_READ_INTERP);
		return;
	}
	s->tstate = tstate;
	read_gil(s, pp, o, tstate);
	if (o->tstate_running_task && read_ptr(tstate + o->tstate_running_task, &s->running_task))
		s->running_task = 0;
	read_context(s, o, pid, tstate, b->ctx_tmp);

	if (read_ptr(tstate + o->tstate_frame, &frame)) {
		s->py_error = PYEBPF_PY_READ_FRAME;
		count(PYEBPF_CNT_PY_READ_FRAME);
		return;
	}
	if (o->cframe_current_frame != PYEBPF_NO_OFFSET && frame && read_ptr(frame + o->cframe_current_frame, &frame)) {
		s->py_error = PYEBPF_PY_READ_FRAME;
		count(PYEBPF_CNT_PY_READ_FRAME);
		return;
	}
	c.frame = frame;
	c.kind = o->frame_kind;
	c.read_size = o->frame_read_size;
	c.off_back = o->frame_back;
	c.off_code = o->frame_code;
	c.off_lasti = o->frame_lasti;
	c.off_owner = o->frame_owner;
	c.off_globals = o->frame_globals;
	c.lasti_mult = o->lasti_mult;
	c.code_adaptive = o->code_adaptive;
	c.code_mask = ~(__u64)o->executable_mask;
	c.code_tlbc = o->code_tlbc;
	c.off_tlbc_index = o->frame_tlbc_index;
	c.gen_iframe = o->tstate_running_task ? 0 : o->gen_iframe;
	/* FRAME_OWNED_BY_GENERATOR's byte: 3.11 keeps it after is_entry. */
	c.off_gen_owner = o->frame_owner + (o->frame_kind == PYEBPF_FRAMES_311);
	/* Shim frames take iterations too: allow some beyond the frame limit. */
	LOOP(PYEBPF_MAX_PY_FRAMES + 256, COMPAT_MAX_FRAMES, fwalk_step, &c);
	if (c.frame && !c.err)
		c.truncated = 1;
	s->py_len = c.n;
	if (c.coro) {
		s->running_task = c.coro;
		s->flags |= PYEBPF_SAMPLE_RUNNING_CORO;
	}
	if (c.err) {
		s->py_error = PYEBPF_PY_READ_FRAME;
		count(PYEBPF_CNT_PY_READ_FRAME);
	}
	if (c.truncated && (s->py_cycle = frame_cycle(c.frame, c.off_back))) {
		s->flags |= PYEBPF_SAMPLE_PY_LOOP;
		count(PYEBPF_CNT_PY_LOOP);
	} else if (c.truncated) {
		s->flags |= PYEBPF_SAMPLE_PY_TRUNCATED;
		count(PYEBPF_CNT_PY_TRUNCATED);
	}
}

/* Code objects whose copy was sent, per process (in every build: the
 * builds share their maps; only PYEBPF_COPIES fills it). */
struct code_copied_key {
	__u32 pid, reserved;
	__u64 code;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct code_copied_key);
	__type(value, __u8);
} codes_copied SEC(".maps") __weak;

#ifdef PYEBPF_COPIES
/*
 * Copies of code objects (PYEBPF_EVENT_MEM_COPY) for a sample that may be
 * its process's last: a script's final wait is sent as it ends, and the
 * process may exit a millisecond later, before the reader names it; the
 * code objects its frames ran would then be unreadable. For each code
 * object of the leaf-most COPY_FRAMES frames not copied before (for its
 * process), what userspace names a frame from goes into the ring ahead of
 * the sample: the code object's fields, its name, its file and its line
 * table, each up to PYEBPF_MEM_COPY_MAX bytes. Userspace reads them only
 * if the process is gone by then (user/python/mem_copies.h). Most samples
 * copy nothing: one lookup per frame.
 */
#define COPY_FRAMES 32
#define COPY_CODES 8 /* new code objects copied per sample at most: the next sample copies on */

/* len bytes at addr into the ring; only up to the end of addr's page when
 * the whole cannot be read (the object may end a mapping). */
static __always_inline void copy_out(__u32 pid, __u64 addr, __u32 len)
{
	struct pyebpf_mem_copy *e;
	__u32 room = 4096 - (__u32)(addr & 4095);

	if (!addr || !len)
		return;
	if (len > PYEBPF_MEM_COPY_MAX)
		len = PYEBPF_MEM_COPY_MAX;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(PYEBPF_CNT_COPY_LOST);
		return;
	}
	if (user_read(e->data, len, (const void *)addr)) {
		if (room >= len || !room || user_read(e->data, room & (PYEBPF_MEM_COPY_MAX - 1), (const void *)addr)) {
			bpf_ringbuf_discard(e, 0);
			return;
		}
		len = room & (PYEBPF_MEM_COPY_MAX - 1);
	}
	e->h.type = PYEBPF_EVENT_MEM_COPY;
	e->h.pid = pid;
	e->h.tid = (__u32)bpf_get_current_pid_tgid();
	e->h.cpu = bpf_get_smp_processor_id();
	e->h.ts_ns = bpf_ktime_get_ns();
	e->addr = addr;
	e->len = len;
	e->reserved = 0;
	bpf_ringbuf_submit(e, 0);
}

/* The object a code object's field at off points to, copied. */
static __always_inline void copy_field(__u32 pid, __u64 code, __u32 off)
{
	__u64 p;

	if (off && !read_ptr(code + off, &p))
		copy_out(pid, p, PYEBPF_MEM_COPY_MAX);
}

static long copy_step(__u32 i, void *data)
{
	struct copy_ctx *c = data;
	struct pyebpf_sample *s = sample_buf();
	struct code_copied_key key = { .pid = c->pid };
	__u8 one = 1;
	__u64 k;

	if (!s || i >= c->n || i >= COPY_FRAMES || !c->budget)
		return 1;
	k = i;
	/* The bound as the verifier sees it: clang drops a C mask after the check above. */
	asm volatile("%[k] &= %[m]" : [k] "+r"(k) : [m] "i"(COPY_FRAMES - 1));
	key.code = s->py[k].code;
	if (!key.code || bpf_map_lookup_elem(&codes_copied, &key))
		return 0;
	bpf_map_update_elem(&codes_copied, &key, &one, BPF_ANY);
	c->budget--;
	copy_out(c->pid, key.code, c->code_len);
	copy_field(c->pid, key.code, c->off_name);
	copy_field(c->pid, key.code, c->off_file);
	copy_field(c->pid, key.code, c->off_linetable);
	return 0;
}

/* Copy the new code objects of the sample in this CPU's buffer (s): sent before it. */
static __always_inline void copy_new_code(const struct pyebpf_sample *s)
{
	__u32 pid = s->h.pid, oid;
	const struct pyebpf_py_proc *pp = bpf_map_lookup_elem(&py_procs, &pid);
	const struct pyebpf_py_offsets *o;
	struct copy_ctx c = { .pid = pid, .n = s->py_len, .budget = COPY_CODES };

	if (!pp || !c.n)
		return;
	oid = pp->offsets_id;
	o = bpf_map_lookup_elem(&py_offsets, &oid);
	if (!o || !o->code_copy_len)
		return;
	c.code_len = o->code_copy_len;
	c.off_name = o->code_name;
	c.off_file = o->code_filename;
	c.off_linetable = o->code_linetable;
	LOOP(COPY_FRAMES, COPY_FRAMES, copy_step, &c);
}
#endif

/* The walks' loop bodies (see struct walks). */
#define WALK_BODY(cb)                                                 \
	__noinline int WALK_GLOBAL(cb)(__u32 i)                       \
	{                                                             \
		__u32 zero = 0;                                       \
		struct walks *w = bpf_map_lookup_elem(&walks, &zero); \
		return w ? (int)cb(i, &w->cb) : 1;                    \
	}
WALK_BODY(tlist_step)
WALK_BODY(fwalk_step)
WALK_BODY(cycle_step)
#ifdef PYEBPF_COPIES
WALK_BODY(copy_step)
#endif

#endif
