// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/task_sampler.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hashmap.h"
#include "python/asyncio_tasks.h"
#include "python/debug_offsets.h"
#include "python/page_cache.h"
#include "python/procmem.h"
#include "python/threadname.h"
#include "system/target_fs.h"
#include "base/util.h"

#define MAX_TASKS 2048
#define MAX_AWAITERS 8 /* tasks awaiting tasks, above a task's own frames */
/* 3.14 maps _asyncio at `import asyncio`: look again, often at first (a
 * service imports it as it starts), then once a second. */
#define RETRY_FAST_NS 100000000ULL
#define RETRY_FAST_TRIES 50
#define RETRY_NS 1000000000ULL
#define NAMES_AGE_NS 1000000000ULL
#define RUNNING_MAX 65536         /* running tasks remembered before the second is over */
#define MAX_LOOPS 16              /* _current_tasks read: loops of a process */
#define CORO_WALK_NS 200000000ULL /* a walk for an unknown running coroutine, at most */
/* Lines of memory kept for one walk (16 KiB each): 1,000 tasks, their
 * coroutines and names fill about a hundred. */
#define WALK_PAGES 256
#define MAX_SHDRS 4096
#define MAX_SHSTRTAB (1u << 20)

/* Where a task waiting on a plain future waits for other tasks (3.11–3.13:
 * no task records its awaiter; asyncio's own frames say whom it waits for). */
#define WAITS_CODES 64
enum waits_in {
	WAITS_ELSEWHERE,
	WAITS_IN_GROUP,    /* TaskGroup.__aexit__ or _aexit: its self's `_tasks`, a set */
	WAITS_IN_WAIT,     /* asyncio.wait's _wait(fs, ...): fs, a set */
	WAITS_IN_WAIT_FOR, /* 3.11's wait_for(fut, ...): fut, made a task */
};

enum tproc_state {
	TP_UNKNOWN,
	TP_READY,
	TP_NEVER
};

struct task_proc {
	enum tproc_state state;
	uint64_t retry_ns;
	uint32_t tries;
	struct asyncio_layout l;
	bool sets; /* 3.11–3.13: the tasks are in _asyncio's sets (s), not lists */
	struct asyncio_sets s;
	uint32_t pid;
	struct py_layout y;    /* the interpreter's: GatheringFuture._children */
	uint64_t modules_used; /* sys.modules' size when _asyncio was not in it */
	uint64_t coro_walk_ns; /* no walk for a running coroutine before */
	/* Code objects seen waiting on a plain future, and where each is
	 * (direct-mapped: code objects live long). */
	uint64_t waits_code[WAITS_CODES];
	enum waits_in waits_in[WAITS_CODES];
};

/* The target's memory (ctx: its pid), past any cache. */
static int read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return procmem_read((pid_t)(uintptr_t)ctx, addr, buf, len);
}

#define MAX_LIST_ITEMS 4096

/* A _GatheringFuture's `_children` (a list of the futures it gathers). */
static size_t gather_children(void *ctx, uint64_t fut, uint64_t *out, size_t max)
{
	const struct task_proc *tp = ctx;
	uint64_t list = py_attr_lookup((pid_t)tp->pid, &tp->y, fut, "_children"), size, items;

	/* A list's ob_size is where a tuple's is (after the object header), its ob_item next. */
	if (!list || procmem_u64((pid_t)tp->pid, list + tp->y.tuple_size, &size) || size > MAX_LIST_ITEMS ||
	    procmem_u64((pid_t)tp->pid, list + tp->y.tuple_size + 8, &items) || !items)
		return 0;
	if (size > max)
		size = max;
	return procmem_read((pid_t)tp->pid, items, out, size * 8) ? 0 : size;
}

#define MAX_SET_SLOTS 4096

static bool ends_with(const char *s, const char *tail)
{
	size_t n = s ? strlen(s) : 0, t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* Which of those a code object is (asyncio's, by qualified name and file),
 * read once per code object. */
static enum waits_in waits_in(struct task_proc *tp, uint64_t code)
{
	size_t slot = (code >> 4) % WAITS_CODES;
	uint64_t qualname, file;
	enum waits_in w = WAITS_ELSEWHERE;
	char *q = NULL, *f = NULL;

	if (tp->waits_code[slot] == code)
		return tp->waits_in[slot];
	if (!procmem_u64((pid_t)tp->pid, code + tp->y.co_qualname, &qualname) && qualname &&
	    !procmem_u64((pid_t)tp->pid, code + tp->y.co_filename, &file) && file) {
		q = py_read_str((pid_t)tp->pid, &tp->y, qualname, 32);
		f = py_read_str((pid_t)tp->pid, &tp->y, file, 512);
	}
	/* Later patch releases wait in _aexit, which __aexit__ awaits (3.13.15, 3.14). */
	if (q && ends_with(f, "asyncio/taskgroups.py") &&
	    (!strcmp(q, "TaskGroup.__aexit__") || !strcmp(q, "TaskGroup._aexit")))
		w = WAITS_IN_GROUP;
	else if (q && ends_with(f, "asyncio/tasks.py") && !strcmp(q, "_wait"))
		w = WAITS_IN_WAIT;
	else if (q && ends_with(f, "asyncio/tasks.py") && !strcmp(q, "wait_for"))
		w = WAITS_IN_WAIT_FOR;
	free(q);
	free(f);
	tp->waits_code[slot] = code;
	tp->waits_in[slot] = w;
	return w;
}

/* The tasks a task waiting in one of those frames waits for: all three
 * keep what they wait for in the frame's first local. */
static size_t waited_children(void *ctx, uint64_t frame, uint64_t code, uint64_t *out, size_t max)
{
	struct task_proc *tp = ctx;
	enum waits_in w = frame ? waits_in(tp, code) : WAITS_ELSEWHERE;
	uint64_t first;

	if (w == WAITS_ELSEWHERE || procmem_u64((pid_t)tp->pid, frame + tp->l.fr_localsplus, &first) || !first)
		return 0;
	switch (w) {
	case WAITS_IN_GROUP: /* the group's tasks, a set */
		if (!(first = py_attr_lookup((pid_t)tp->pid, &tp->y, first, "_tasks")))
			return 0;
		/* fall through */
	case WAITS_IN_WAIT:
		return asyncio_set_keys(&tp->l, read_mem, (void *)(uintptr_t)tp->pid, first, MAX_SET_SLOTS, out, max);
	case WAITS_IN_WAIT_FOR:
		out[0] = first;
		return max ? 1 : 0;
	default:
		return 0;
	}
}

struct task_sampler {
	struct profile *prof;
	struct hashmap *names; /* (pid, name object) → string id + 1, cleared every second */
	uint64_t names_ns;
	/* (pid, task, its coroutine and name objects) → struct running_task *:
	 * the tasks thread samples found running, cleared every second. */
	struct hashmap *running;
	/* (pid, coroutine) → its task: what a 3.11–3.13 thread sample's
	 * running coroutine belongs to, from walks and _current_tasks; cleared
	 * every second with the names. */
	struct hashmap *coros;
	struct hashmap *index; /* task address → its place in tasks[] (for one walk) */
	struct asyncio_task *tasks;
	struct page_cache *pages; /* the target's memory, for one walk */
	struct task_stats stats;
};

struct task_sampler *task_sampler__new(struct profile *prof)
{
	struct task_sampler *ts = xcalloc(1, sizeof(*ts));

	ts->prof = prof;
	ts->names = hashmap__new();
	ts->running = hashmap__new();
	ts->coros = hashmap__new();
	ts->index = hashmap__new();
	return ts;
}

/* The walks' buffers (5 MB), made at the first walk: most recordings have
 * no asyncio program to walk, and every recording made them up front. */
static void walk_buffers(struct task_sampler *ts)
{
	if (ts->tasks)
		return;
	ts->tasks = xcalloc(MAX_TASKS, sizeof(*ts->tasks));
	ts->pages = page_cache__new(WALK_PAGES);
}

void task_sampler__free(struct task_sampler *ts)
{
	if (!ts)
		return;
	hashmap__free(ts->names);
	hashmap__free_values(ts->running, free);
	hashmap__free(ts->coros);
	hashmap__free(ts->index);
	free(ts->tasks);
	page_cache__free(ts->pages);
	free(ts);
}

void task_proc__free(struct task_proc *tp)
{
	free(tp);
}

const struct task_stats *task_sampler__stats(const struct task_sampler *ts)
{
	return &ts->stats;
}

/* ---- finding asyncio's layout ------------------------------------------ */

/* The .AsyncioDebug section of an ELF file (its bytes in the file: it is
 * initialized data that never changes). */
int asyncio_debug_section(int fd, uint8_t *out, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL, str;
	char *names = NULL;
	int rc = -1;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum ||
	    eh.e_shnum > MAX_SHDRS || eh.e_shstrndx >= eh.e_shnum)
		return -1;
	sh = xcalloc(eh.e_shnum, sizeof(*sh));
	if (pread(fd, sh, eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff) != (ssize_t)(eh.e_shnum * sizeof(*sh)))
		goto out;
	str = sh[eh.e_shstrndx];
	if (!str.sh_size || str.sh_size > MAX_SHSTRTAB)
		goto out;
	names = xcalloc(1, str.sh_size + 1);
	if (pread(fd, names, str.sh_size, (off_t)str.sh_offset) != (ssize_t)str.sh_size)
		goto out;
	for (size_t i = 0; i < eh.e_shnum; i++) {
		if (sh[i].sh_name >= str.sh_size || strcmp(names + sh[i].sh_name, ".AsyncioDebug") != 0 ||
		    sh[i].sh_type != SHT_PROGBITS || sh[i].sh_size < len)
			continue;
		if (pread(fd, out, len, (off_t)sh[i].sh_offset) == (ssize_t)len)
			rc = 0;
		break;
	}
out:
	free(names);
	free(sh);
	return rc;
}

static int section_in(uint32_t pid, const char *path, uint8_t *out, size_t len)
{
	int fd = target_open(pid, path), rc;

	if (fd < 0)
		return -1;
	rc = asyncio_debug_section(fd, out, len);
	close(fd);
	return rc;
}

/* The interpreter's file (3.15, a built-in _asyncio), else a mapped _asyncio extension (3.14). */
static int find_section(uint32_t pid, const struct py_interp *in, uint8_t *out, size_t len)
{
	char path[64], line[4200];
	FILE *f;
	int rc = -1;

	if (!section_in(pid, in->path, out, len))
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (rc && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');

		if (!file || !strstr(file, "/_asyncio."))
			continue;
		file[strcspn(file, "\n")] = '\0';
		rc = section_in(pid, file, out, len);
	}
	fclose(f);
	return rc;
}

#define FROM_DEBUG(d, l, mask, slot, yf)                                      \
	do {                                                                  \
		(l)->threads_head = (d).interpreter_state.threads_head;       \
		(l)->ts_next = (d).thread_state.next;                         \
		(l)->ts_native_thread_id = (d).thread_state.native_thread_id; \
		(l)->ob_type = (d).pyobject.ob_type;                          \
		(l)->tp_name = (d).type_object.tp_name;                       \
		(l)->tp_flags = (d).type_object.tp_flags;                     \
		(l)->gi_iframe = (d).gen_object.gi_iframe;                    \
		(l)->gi_frame_state = (d).gen_object.gi_frame_state;          \
		(l)->fr_executable = (d).interpreter_frame.executable;        \
		(l)->fr_instr_ptr = (d).interpreter_frame.instr_ptr;          \
		(l)->fr_stackpointer = (d).interpreter_frame.stackpointer;    \
		(l)->fr_owner = (d).interpreter_frame.owner;                  \
		(l)->co_adaptive = (d).code_object.co_code_adaptive;          \
		(l)->co_tlbc = (d).code_object.co_tlbc;                       \
		(l)->fr_tlbc_index = (d).interpreter_frame.tlbc_index;        \
		(l)->set_used = (d).set_object.used;                          \
		(l)->set_table = (d).set_object.table;                        \
		(l)->set_mask = (d).set_object.mask;                          \
		(l)->long_tag = (d).long_object.lv_tag;                       \
		(l)->long_digit = (d).long_object.ob_digit;                   \
		(l)->executable_mask = (mask);                                \
		(l)->await_slot = (slot);                                     \
		(l)->frame_suspended_yield_from = (yf);                       \
	} while (0)

/* Is obj's type named `name`? */
static bool type_is(uint32_t pid, const struct py_layout *y, uint64_t obj, const char *name)
{
	uint64_t type, at;
	char buf[16] = { 0 };

	if (!obj || procmem_u64((pid_t)pid, obj + y->ob_type, &type) || !type ||
	    procmem_u64((pid_t)pid, type + y->tp_name, &at) || !at ||
	    procmem_read((pid_t)pid, at, buf, strlen(name) + 1))
		return false;
	return !strcmp(buf, name);
}

/*
 * 3.11–3.13: sys.modules["_asyncio"], and in its dict the sets of tasks
 * (3.11 _all_tasks, 3.12+ _scheduled_tasks: WeakSets, their `data` a set of
 * weak references; 3.12+ _eager_tasks: a set), _current_tasks and Task.
 * They live as long as the module: found once. The frame and object
 * fields from the version's table. 0 found, -1 not (yet: asyncio not imported).
 */
static int find_sets(uint32_t pid, const struct py_interp *in, struct asyncio_layout *l, struct asyncio_sets *s,
		     uint64_t *modules_used)
{
	const struct py_layout *y = &in->layout;
	const struct py_asyncio_offsets *a = &y->asyncio;
	uint64_t interp, modules, mod, md, ws, eager, used = 0;
	pid_t p = (pid_t)pid;

	memset(l, 0, sizeof(*l));
	memset(s, 0, sizeof(*s));
	if (procmem_u64(p, in->interp_head_addr, &interp) || !interp ||
	    procmem_u64(p, interp + a->interp_modules, &modules) || !type_is(pid, y, modules, "dict"))
		return -1;
	/* sys.modules is a thousand names in a large service: looked through
	 * again only once it changed (ma_used, just before ma_keys and its
	 * version tag), so a process that never imports asyncio costs one
	 * read a retry. */
	if (!procmem_u64(p, modules + y->ma_keys - 16, &used) && used == *modules_used)
		return -1;
	mod = py_dict_lookup(p, y, modules, "_asyncio");
	if (!mod)
		*modules_used = used;
	if (!type_is(pid, y, mod, "module") || procmem_u64(p, mod + a->md_dict, &md) || !type_is(pid, y, md, "dict"))
		return -1;
	s->task_type = py_dict_lookup(p, y, md, "Task");
	s->current = py_dict_lookup(p, y, md, "_current_tasks");
	ws = py_dict_lookup(p, y, md, in->minor == 11 ? "_all_tasks" : "_scheduled_tasks");
	s->set[0] = py_attr_lookup(p, y, ws, "data");
	s->weak[0] = true;
	if (!s->task_type || !type_is(pid, y, s->set[0], "set"))
		return -1;
	if (!type_is(pid, y, s->current, "dict"))
		s->current = 0;
	eager = in->minor >= 12 ? py_dict_lookup(p, y, md, "_eager_tasks") : 0;
	if (type_is(pid, y, eager, "set"))
		s->set[1] = eager;
	l->ob_type = y->ob_type;
	l->tp_name = y->tp_name;
	l->tp_flags = y->tp_flags;
	l->tp_base = y->tp_base;
	l->gi_iframe = a->gi_iframe;
	l->gi_frame_state = a->gi_frame_state;
	l->fr_executable = y->bpf.frame_code;
	l->fr_instr_ptr = y->bpf.frame_lasti;
	l->fr_owner = y->bpf.frame_owner;
	l->co_adaptive = y->bpf.code_adaptive;
	l->set_table = a->set_table;
	l->set_mask = a->set_mask;
	if (in->minor >= 12) { /* a deferred name: the counter's int (3.11 formats it at once) */
		l->long_tag = y->long_size;
		l->long_digit = y->long_digits;
	}
	l->task_name = a->task_name;
	l->task_coro = a->task_coro;
	l->stack_index = true;
	l->fr_stacktop = a->frame_stacktop;
	l->fr_localsplus = y->frame_localsplus;
	l->ma_keys = y->ma_keys;
	l->wr_object = a->wr_object;
	l->await_slot = 1;
	l->frame_suspended_yield_from = a->suspended_yield_from;
	return 0;
}

/* 0: found; -1: not (yet); -2: never (a version without it). */
static int find_layout(uint32_t pid, const struct py_interp *in, struct asyncio_layout *l)
{
	uint8_t sec[ASYNCIO_DEBUG_SECTION_SIZE];
	uint64_t mask = in->layout.bpf.executable_mask;

	/* 3.14+, free-threaded too: the lists and every position come from the
	 * build's own block and section (32-byte headers included). */
	if (in->major != 3 || (in->minor != 14 && in->minor != 15) || !in->runtime)
		return -2;
	memset(l, 0, sizeof(*l));
	if (in->minor == 14) {
		struct py_debug_offsets_314 d = { 0 };

		if (procmem_read((pid_t)pid, in->runtime, &d, sizeof(d)) || memcmp(d.cookie, "xdebugpy", 8) != 0)
			return -2;
		/* FRAME_SUSPENDED_YIELD_FROM is -1; the awaited object is on top of the stack. */
		FROM_DEBUG(d, l, mask, 1, -1);
	} else {
		struct py_debug_offsets_315 d = { 0 };

		if (procmem_read((pid_t)pid, in->runtime, &d, sizeof(d)) || memcmp(d.cookie, "xdebugpy", 8) != 0)
			return -2;
		/* 3.15 renumbered the frame states (FRAME_SUSPENDED_YIELD_FROM 2) and
		 * keeps the awaited object one slot further down. */
		FROM_DEBUG(d, l, mask, 2, 2);
	}
	if (find_section(pid, in, sec, sizeof(sec)) || asyncio_layout_from_section(l, sec, sizeof(sec)))
		return -1;
	return 0;
}

static struct task_proc *tproc_of(struct task_proc **slot, uint32_t pid, const struct py_interp *in, uint64_t now)
{
	struct task_proc *tp;
	int rc;

	if (!*slot)
		*slot = xcalloc(1, sizeof(struct task_proc));
	tp = *slot;
	if (tp->state == TP_UNKNOWN && now >= tp->retry_ns) {
		tp->sets = in->major == 3 && in->layout.asyncio.task_coro;
		rc = tp->sets ? find_sets(pid, in, &tp->l, &tp->s, &tp->modules_used) : find_layout(pid, in, &tp->l);
		if (tp->sets && !rc) {
			tp->pid = pid;
			tp->y = in->layout;
			tp->s.children = gather_children;
			tp->s.waited_children = waited_children;
			tp->s.children_ctx = tp;
			tp->s.fresh = read_mem;
			tp->s.fresh_ctx = (void *)(uintptr_t)pid;
		}
		tp->state = rc == 0 ? TP_READY : rc == -2 ? TP_NEVER : TP_UNKNOWN;
		tp->retry_ns = now + (++tp->tries < RETRY_FAST_TRIES ? RETRY_FAST_NS : RETRY_NS);
	}
	return tp;
}

/* ---- samples ------------------------------------------------------------ */

/* The walk's reads: through pages kept for this walk. */
static int read_cached(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return page_cache__read(ctx, addr, buf, len);
}

static uint32_t mark(struct task_sampler *ts, const char *text)
{
	struct frame f = { .kind = FRAME_MARK };

	f.name = profile__str(ts->prof, text);
	return profile__frame(ts->prof, &f);
}

/* asyncio's own names, Task-1, Task-2...: one number per task ever made, so
 * a frame each would make every task of a service its own tower in a flame
 * graph, and its own stacks without bound. They share `[task]`. */
static bool task_name_is_auto(const char *name)
{
	size_t n;

	if (strncmp(name, "Task-", 5) != 0)
		return false;
	n = strspn(name + 5, "0123456789");
	return n > 0 && name[5 + n] == '\0';
}

static uint32_t task_frame(struct task_sampler *ts, uint32_t pid, const struct py_interp *in,
			   const struct asyncio_task *t)
{
	char text[96];
	struct {
		uint32_t pid, zero;
		uint64_t obj;
	} key = { pid, 0, t->name_obj };
	bool created;
	uint64_t *v;

	if (t->name_is_num)
		return mark(ts, "[task]");
	v = hashmap__put(ts->names, &key, sizeof(key), &created);
	if (created) {
		char *name = t->name_obj ? py_read_str((pid_t)pid, &in->layout, t->name_obj, 64) : NULL;

		if (name && task_name_is_auto(name))
			snprintf(text, sizeof(text), "[task]");
		else
			snprintf(text, sizeof(text), "[task %s]", name ? name : "?");
		free(name);
		*v = mark(ts, text) + 1ULL;
	}
	return (uint32_t)(*v - 1);
}

static void forget_running(struct task_sampler *ts)
{
	hashmap__free_values(ts->running, free);
	ts->running = hashmap__new();
	hashmap__free(ts->coros);
	ts->coros = hashmap__new();
}

struct coro_key {
	uint32_t pid, zero;
	uint64_t coro;
};

static void note_coro(struct task_sampler *ts, uint32_t pid, uint64_t coro, uint64_t task)
{
	struct coro_key key = { pid, 0, coro };

	if (coro && hashmap__size(ts->coros) < RUNNING_MAX)
		*hashmap__put(ts->coros, &key, sizeof(key), NULL) = task;
}

/* Names are kept a second: a name object freed, its address reused. */
static void age_names(struct task_sampler *ts, uint64_t now)
{
	if (now - ts->names_ns <= NAMES_AGE_NS)
		return;
	hashmap__free(ts->names);
	ts->names = hashmap__new();
	forget_running(ts);
	ts->names_ns = now;
}

/* A task's own frames: [task NAME], its coroutines; the leaf reason if asked. */
static uint32_t own_frames(struct task_sampler *ts, struct pyprocs *py, struct py_proc *p, const struct asyncio_task *t,
			   uint64_t now, uint32_t *out, uint32_t room, bool leaf)
{
	const struct py_interp *in = py_proc__interp(p);
	uint32_t n = 0, pid = py_proc__pid(p);
	const struct frame *inner = NULL;

	if (room < t->ncoro + 2)
		return 0;
	out[n++] = task_frame(ts, pid, in, t);
	for (uint32_t i = 0; i < t->ncoro; i++) {
		out[n] = py_proc__frame(py, p, t->coros[i].code, 0, t->coros[i].lasti, now);
		inner = profile__frame_at(ts->prof, out[n]);
		n++;
	}
	if (leaf) {
		const char *q = inner ? profile__str_at(ts->prof, inner->name) : NULL;
		const char *file = inner ? profile__str_at(ts->prof, inner->module) : NULL;

		out[n++] = mark(ts, asyncio_await_frame(asyncio_await_reason(q, file, t->awaits, t->running)));
	}
	return n;
}

static void walk_index(struct task_sampler *ts, size_t n)
{
	hashmap__free(ts->index);
	ts->index = hashmap__new();
	for (size_t i = 0; i < n; i++) {
		bool created;

		*hashmap__put(ts->index, &ts->tasks[i].addr, sizeof(uint64_t), &created) = i;
	}
}

void task_sampler__sample(struct task_sampler *ts, struct pyprocs *py, struct py_proc *p, struct task_proc **slot,
			  uint32_t ticks, uint64_t t, uint64_t now, task_labels_fn labels, void *ctx,
			  bool (*keep)(void *ctx, struct sample_labels *l))
{
	const struct py_interp *in = py_proc__interp(p);
	uint32_t pid = py_proc__pid(p);
	struct task_proc *tp = tproc_of(slot, pid, in, now);
	struct asyncio_walk_stats st = { 0 };
	uint64_t interp, walk_start, pages;
	size_t n;

	if (tp->state != TP_READY) {
		ts->stats.no_asyncio += tp->state == TP_UNKNOWN;
		return;
	}
	age_names(ts, now);
	if (procmem_u64((pid_t)pid, in->interp_head_addr, &interp) || !interp)
		return;
	walk_buffers(ts);
	walk_start = now_ns();
	pages = page_cache__stats(ts->pages)->page_reads;
	page_cache__reset(ts->pages, read_mem, (void *)(uintptr_t)pid);
	n = tp->sets ? asyncio_walk_sets(&tp->l, read_cached, ts->pages, &tp->s, ts->tasks, MAX_TASKS, &st)
		     : asyncio_walk(&tp->l, read_cached, ts->pages, interp, ts->tasks, MAX_TASKS, &st);
	ts->stats.ticks++;
	ts->stats.lists_cut += st.lists_cut;
	walk_index(ts, n);
	if (tp->sets)
		for (size_t i = 0; i < n; i++)
			note_coro(ts, pid, ts->tasks[i].coro, ts->tasks[i].addr);
	for (size_t i = 0; i < n; i++) {
		uint32_t frames[(MAX_AWAITERS + 1) * (ASYNCIO_MAX_CORO + 2)], m = 0;
		size_t chain[MAX_AWAITERS], depth = 0;
		struct sample_labels l = { 0 };
		const struct asyncio_task *at = &ts->tasks[i];
		uint64_t *awaited = at->awaits_obj ? hashmap__get(ts->index, &at->awaits_obj, sizeof(uint64_t)) : NULL;

		/* A task awaiting one task (`await task`, a server's connection
		 * task awaiting its request's) waits as long as that task is
		 * pending: that task's samples carry this one's frames above its
		 * own, so the same wait is not counted twice. */
		if (awaited && *awaited != i && ts->tasks[*awaited].awaiter == at->addr)
			continue;
		/* Who awaits it, and who awaits that...: a loop ends the chain. */
		for (uint64_t a = at->awaiter; a && depth < MAX_AWAITERS;) {
			uint64_t *j = hashmap__get(ts->index, &a, sizeof(a));
			bool seen = false;

			if (!j || *j == i)
				break;
			for (size_t k = 0; k < depth; k++)
				seen |= chain[k] == *j;
			if (seen)
				break;
			chain[depth++] = *j;
			a = ts->tasks[*j].awaiter;
		}
		while (depth--)
			m += own_frames(ts, py, p, &ts->tasks[chain[depth]], now, frames + m,
					(uint32_t)(sizeof(frames) / sizeof(frames[0])) - m, false);
		m += own_frames(ts, py, p, at, now, frames + m, (uint32_t)(sizeof(frames) / sizeof(frames[0])) - m,
				true);
		labels(ctx, pid, at->tid ? (uint32_t)at->tid : pid, in, at->context, &l);
		l.flags |= LABEL_TASK;
		if (keep && !keep(ctx, &l))
			continue;
		profile__add_at(ts->prof, &l, frames, m, ticks, t);
		ts->stats.samples += ticks;
	}
	ts->stats.walk_ns += now_ns() - walk_start;
	ts->stats.pages += page_cache__stats(ts->pages)->page_reads - pages;
}

/* ---- the running task of a thread sample --------------------------------- */

/* 3.11–3.13: the task whose coroutine a thread sample ran, 0 none known:
 * from the walks, else the task its loop runs now (_current_tasks: the
 * sample was taken moments ago), else one walk of the sets, at most every
 * CORO_WALK_NS a process (a coroutine no task drives, or a task made and
 * gone between two walks, is not looked for on every sample). */
static uint64_t task_of_coro(struct task_sampler *ts, struct task_proc *tp, uint32_t pid, uint64_t coro, uint64_t now)
{
	struct coro_key key = { pid, 0, coro };
	struct asyncio_walk_stats st = { 0 };
	uint64_t *v = hashmap__get(ts->coros, &key, sizeof(key)), cur[MAX_LOOPS], c;
	size_t n;

	if (v)
		return *v;
	n = asyncio_current_tasks(&tp->l, read_mem, (void *)(uintptr_t)pid, &tp->s, cur, MAX_LOOPS);
	for (size_t i = 0; i < n; i++)
		if (!procmem_u64((pid_t)pid, cur[i] + tp->l.task_coro, &c) && c == coro) {
			note_coro(ts, pid, coro, cur[i]);
			return cur[i];
		}
	if (now < tp->coro_walk_ns)
		return 0;
	tp->coro_walk_ns = now + CORO_WALK_NS;
	walk_buffers(ts);
	page_cache__reset(ts->pages, read_mem, (void *)(uintptr_t)pid);
	n = asyncio_walk_sets(&tp->l, read_cached, ts->pages, &tp->s, ts->tasks, MAX_TASKS, &st);
	for (size_t i = 0; i < n; i++)
		note_coro(ts, pid, ts->tasks[i].coro, ts->tasks[i].addr);
	v = hashmap__get(ts->coros, &key, sizeof(key));
	if (!v) /* no task's: not looked for again this second */
		note_coro(ts, pid, coro, 0);
	return v ? *v : 0;
}

bool task_sampler__running(struct task_sampler *ts, struct pyprocs *py, struct py_proc *p, struct task_proc **slot,
			   uint64_t task, bool is_coro, uint64_t now, struct running_task *out)
{
	const struct py_interp *in = py_proc__interp(p);
	uint32_t pid = py_proc__pid(p);
	struct task_proc *tp = tproc_of(slot, pid, in, now);
	struct {
		uint32_t pid, zero;
		uint64_t task, coro, name;
	} key = { pid, 0, task, 0, 0 };
	struct asyncio_task t;
	struct running_task *r;
	bool created;
	void **v;

	uint64_t coro = is_coro ? task : 0;

	if (is_coro) { /* 3.11–3.13: BPF read the coroutine; its task is known here */
		if (tp->state != TP_READY || !tp->sets)
			goto unread;
		age_names(ts, now);
		if (!(task = task_of_coro(ts, tp, pid, coro, now)))
			return false; /* a generator's frame C entered, no task's */
		key.task = task;
	} else if (tp->state != TP_READY || tp->sets || tp->l.ts_running_task != in->layout.bpf.tstate_running_task) {
		/* BPF read the task by the built-in table's offset: only a layout
		 * that agrees with it is trusted with what it points at. */
		goto unread;
	}
	/* A task's address is reused once it is freed: the coroutine and the
	 * name it holds now tell a new task from the one remembered. */
	if (procmem_u64((pid_t)pid, task + tp->l.task_coro, &key.coro) ||
	    procmem_u64((pid_t)pid, task + tp->l.task_name, &key.name) || !key.coro)
		goto unread;
	if (is_coro && key.coro != coro) { /* that task is gone, its address another's */
		struct coro_key gone = { pid, 0, coro };

		hashmap__remove(ts->coros, &gone, sizeof(gone));
		goto unread;
	}
	age_names(ts, now);
	if (hashmap__size(ts->running) >= RUNNING_MAX)
		forget_running(ts);
	v = hashmap__put_ptr(ts->running, &key, sizeof(key), &created);
	if (created) {
		const struct frame *f;

		*v = NULL;
		if (!asyncio_read_task(&tp->l, read_mem, (void *)(uintptr_t)pid, task, &t) || !t.ncoro)
			goto unread;
		f = profile__frame_at(ts->prof, py_proc__frame(py, p, t.coros[0].code, 0, t.coros[0].lasti, now));
		r = xcalloc(1, sizeof(*r));
		r->frame = task_frame(ts, pid, in, &t);
		r->coro_name = f->name;
		r->coro_file = f->module;
		*v = r;
	}
	if (!*v)
		goto unread;
	*out = *(struct running_task *)*v;
	return true;
unread:
	ts->stats.running_unread++;
	return false;
}
