// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Every sample is named as it arrives: the process may be gone by the end
 * of the recording, and with it /proc/PID/maps and its memory.
 */
#include "record/ingest.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hashmap.h"
#include "symbols/kallsyms.h"
#include "profile/offcpu.h"
#include "symbols/procs.h"
#include "record/mem_ledger.h"
#include "record/processes.h"
#include "record/request_labels.h"
#include "python/frames.h"
#include "python/mem_copies.h"
#include "python/symbolize.h"
#include "python/version.h"
#include "python/threadname.h"
#include "sample_view.h"
#include "record/stack_cache.h"
#include "record/threads.h"
#include "base/util.h"

/* How long after first sight or exec a process may still turn out to be Python. */
#define YOUNG_NS (2 * 1000000000ULL)
/* A sample named this long after it was taken: naming is behind sampling,
 * and its process is looked at while it lives (procs__refresh_behind). */
#define BEHIND_NS (100 * 1000000ULL)
/* Raw stacks named before: at most this much memory (an interval of
 * continuous mode starts it over), named again after a second or more (as
 * often as a code object's identity is checked). */
#define STACK_CACHE_BYTES (32u << 20)
#define STACK_CACHE_AGE_NS 1000000000ULL

/* What decides a sample's frames, besides the arrays that follow it in the
 * cache key (Python frames or user addresses, then kernel addresses). */
struct raw_stack_head {
	uint64_t maps_id; /* the process and its mappings: unique over time (procs.h) */
	uint32_t flags;   /* the sample's flags that change how it is named */
	uint32_t py_cycle;
	uint32_t npy, nustack, nkstack;
	uint32_t python; /* the process is known to be Python */
	uint32_t offcpu; /* the reason (the stack's leaf) */
	uint32_t task;   /* the running task's [task] frame + 1, 0 none (also: no padding, hashed as bytes) */
};

#define RAW_STACK_NAMING_FLAGS \
	(PYEBPF_SAMPLE_PY | PYEBPF_SAMPLE_PY_TRUNCATED | PYEBPF_SAMPLE_PY_LOOP | PYEBPF_SAMPLE_OFFCPU)
#define RAW_STACK_MAX                                                                                   \
	(sizeof(struct raw_stack_head) + (size_t)PYEBPF_MAX_PY_FRAMES * sizeof(struct pyebpf_pyframe) + \
	 2UL * PYEBPF_MAX_STACK * sizeof(uint64_t))

struct ingest {
	struct profile *prof;
	const struct filter *filter;
	struct filter keep_all; /* when the config gives none */
	struct ingest_hooks hooks;
	struct kallsyms *ksyms;
	const char *kallsyms_path;               /* read at the first kernel frame to name, then NULL */
	struct kallsyms_loader *kallsyms_loader; /* ... being read in a thread (kernel_frames_later) */
	bool kernel_frames_later;
	bool requests;             /* ingest_config's */
	const char *context_label; /* ingest_config's */
	/* Processes whose request variables are looked for on a timer
	 * (request_proc__look), a few at a time. */
	uint32_t looking[INGEST_LOOKING_MAX];
	size_t nlooking;
	struct waiting_sample **waiting; /* for the kernel's symbols, in arrival order */
	size_t nwaiting, waiting_cap;
	struct procs *procs;     /* the files' symbols, shared by the processes */
	struct processes *table; /* all known of each process */
	struct pyprocs *py;
	struct threads *threads;
	struct native_stacks *native; /* --native */
	struct stack_cache *stacks;   /* raw stack → profile stack id */
	uint64_t stacks_gen;          /* of the profile's stack ids the cache holds */
	struct ingest_stats stats;
	uint64_t python_seen; /* processes found to be Python */
	uint64_t time_base_ns;
	struct mem_ledger *mem;       /* --mode memory: the memory still held, by the stack it grew under */
	struct task_sampler *tasks;   /* --mode wall: asyncio tasks; running tasks */
	struct running_task run_task; /* this sample's, if run_task_set */
	bool run_task_set;
	uint64_t task_period_ns, task_last_ns, task_t;
	uint64_t task_next_ns;             /* no walk before: walks take at most 1/TASK_COST_SHARE of the time */
	uint32_t task_comm_pid, task_comm; /* the process name of one walk's tasks, read once a walk */
	/* By profile stack id: STACK_* bits, what the summary counts per sample. */
	uint8_t *stack_bits;
	size_t nstack_bits;
	uint64_t bits_gen;
	uint32_t frames[INGEST_MAX_FRAMES];
	uint8_t raw_key[RAW_STACK_MAX];
};

#define STACK_KNOWN 0x1  /* bits computed */
#define STACK_NO_FP 0x2  /* cut where frame pointers ended */
#define STACK_NO_SYM 0x4 /* a native frame has no symbol */
#define STACK_NO_SYM_LEAF 0x8
#define STACK_MP_BOOT 0x10 /* multiprocessing's BaseProcess._bootstrap runs it */

struct ingest *ingest__new(struct profile *prof, const struct ingest_config *c, const struct ingest_hooks *h)
{
	struct ingest *in = xcalloc(1, sizeof(*in));

	in->prof = prof;
	filter__init(&in->keep_all);
	in->filter = c->filter ? c->filter : &in->keep_all;
	if (h)
		in->hooks = *h;
	in->procs = procs__new(prof);
	if (c->debug_dirs)
		procs__set_debug_dirs(in->procs, c->debug_dirs);
	in->table = processes__new(in->procs);
	in->py = pyprocs__new(prof);
	in->threads = threads__new(prof);
	in->stacks = stack_cache__new(STACK_CACHE_BYTES, STACK_CACHE_AGE_NS);
	if (c->native)
		in->native = native_stacks__new(prof, in->procs, in->py);
	in->kallsyms_path = c->kallsyms;
	in->kernel_frames_later = c->kernel_frames_later;
	in->requests = c->requests;
	in->context_label = c->context_label;
	if (c->memory)
		in->mem = mem_ledger__new();
	if (c->task_period_ns || c->running_tasks) {
		in->tasks = task_sampler__new(prof);
		in->task_period_ns = c->task_period_ns;
	}
	return in;
}

void ingest__free(struct ingest *in)
{
	if (!in)
		return;
	kallsyms__free(kallsyms__wait(in->kallsyms_loader));
	kallsyms__free(in->ksyms);
	mem_copies__clear(); /* one ingest a recording: the copies were its samples' */
	for (size_t i = 0; i < in->nwaiting; i++)
		free(in->waiting[i]);
	free(in->waiting);
	processes__free(in->table);
	pyprocs__free(in->py);
	task_sampler__free(in->tasks);
	mem_ledger__free(in->mem);
	threads__free(in->threads);
	stack_cache__free(in->stacks);
	free(in->stack_bits);
	native_stacks__free(in->native);
	procs__free(in->procs);
	filter__free(&in->keep_all);
	free(in);
}

void ingest__set_time_base(struct ingest *in, uint64_t start_ns)
{
	in->time_base_ns = start_ns;
}

const struct ingest_stats *ingest__stats(const struct ingest *in)
{
	return &in->stats;
}

size_t ingest__processes(const struct ingest *in)
{
	return procs__seen(in->procs);
}

uint64_t ingest__python_processes(const struct ingest *in)
{
	return in->python_seen;
}

const struct native_stats *ingest__native_stats(const struct ingest *in)
{
	return in->native ? native_stacks__stats(in->native) : NULL;
}

void ingest__stack_cache_counts(const struct ingest *in, uint64_t *named, uint64_t *cached)
{
	const struct stack_cache_stats *st = stack_cache__stats(in->stacks);

	*named = st->misses;
	*cached = st->hits;
}

/* ---- the state of a process ------------------------------------------- */

/* What BPF knows of a process that exec'd or is gone (its record is the table's). */
static void forget_in_bpf(uint32_t pid, void *ctx)
{
	struct ingest *in = ctx;

	if (in->hooks.forget_pid)
		in->hooks.forget_pid(in->hooks.ctx, pid);
}

void ingest__gc(struct ingest *in, uint64_t now)
{
	ingest__name_waiting(in, false);
	processes__gc(in->table, now, forget_in_bpf, in); /* exited, and the grace period passed */
}

/* The Python state of a sampled process, asked at first sight and whenever its
 * maps change; changes go to the BPF walker through the hook. */
static struct py_proc *python_of(struct ingest *in, struct process *pr, uint64_t now)
{
	struct py_proc *py = NULL;
	bool changed;

	for (int pass = 0; pass < 2; pass++) {
		py = pyprocs__lookup(in->py, &pr->python, pr->pid, procs__maps_gen(pr->maps), &changed);
		if (changed && in->hooks.python_changed)
			in->hooks.python_changed(in->hooks.ctx, pr->pid, py ? py_proc__interp(py) : NULL);
		if (changed && py)
			in->python_seen += procs__mark_python(pr->maps);
		if (py)
			break;
		procs__refresh_young(in->procs, pr->maps, now, YOUNG_NS); /* libpython may not be mapped yet */
	}
	return py;
}

void ingest__register(struct ingest *in, uint32_t pid)
{
	uint64_t now = now_ns();

	python_of(in, processes__get(in->table, pid, now), now);
}

/* ---- labels ------------------------------------------------------------- */

static bool thread_alive(uint32_t pid, uint32_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/task/%u", pid, tid);
	return access(path, F_OK) == 0;
}

/* The thread's name: from threading.Thread when it has one, else the OS name. */
static uint32_t thread_label(struct ingest *in, const struct pyebpf_sample *s, struct process *pr, struct py_proc *py,
			     uint32_t comm, uint64_t now)
{
	bool ask, from_python, walked = py && (s->flags & PYEBPF_SAMPLE_PY) && s->tstate;
	uint32_t name_id = threads__name(in->threads, &pr->threads, s->h.pid, s->h.tid, comm, s->task_comm[0] != 0, now,
					 &ask, &from_python);
	char *name;

	/* A Python process's main thread is MainThread from its first sample,
	 * before BPF walks it, so that one thread is not two in a flame graph. */
	if (py && s->h.tid == s->h.pid && !from_python && (!walked || !ask))
		return profile__str(in->prof, "MainThread");
	if (!walked || !ask)
		return name_id;
	name = py_thread_name((pid_t)s->h.pid, py_proc__interp(py), s->tstate, threads__hint(&pr->threads, s->h.tid));
	/* A thread gone by now left its thread state to be freed, and reused by
	 * the next thread (a Timer after a Timer): what it holds may be another
	 * thread's name. No name beats a wrong one. */
	if (name && s->h.tid != s->h.pid && !thread_alive(s->h.pid, s->h.tid)) {
		free(name);
		name = NULL;
	}
	if (!name && s->h.tid == s->h.pid)
		name = xstrdup("MainThread");
	threads__set_python_name(in->threads, &pr->threads, s->h.tid, name, now);
	if (name)
		name_id = profile__str(in->prof, name);
	free(name);
	return name_id;
}

/* "3.12.1", "3.15.0a2", or "3.11" when only the file name told the version;
 * "3.13.15t" free-threaded. */
static uint32_t python_label(struct ingest *in, const struct py_interp *pi)
{
	const char *ft = pi->layout.free_threaded ? "t" : ""; /* as the build names itself: 3.13.15t */
	char v[32], num[24];

	if (pi->version_hex) {
		py_version_format(pi->version_hex, num, sizeof(num));
		snprintf(v, sizeof(v), "%s%s", num, ft);
	} else {
		snprintf(v, sizeof(v), "%d.%d%s", pi->major, pi->minor, ft);
	}
	return profile__str(in->prof, v);
}

/* The id of a fixed-size, maybe unterminated kernel name. */
static uint32_t comm_str(struct ingest *in, const char *raw)
{
	char comm[PYEBPF_COMM_LEN + 1];

	memcpy(comm, raw, PYEBPF_COMM_LEN);
	comm[PYEBPF_COMM_LEN] = '\0';
	return profile__str(in->prof, comm[0] ? comm : "[unknown]");
}

static void base_labels(struct ingest *in, const struct pyebpf_sample *s, struct sample_labels *l)
{
	l->pid = s->h.pid;
	l->tid = s->h.tid;
	l->comm = comm_str(in, s->comm);
	l->flags = (s->flags & PYEBPF_SAMPLE_GIL_KNOWN ? LABEL_GIL_KNOWN : 0) |
		   (s->flags & PYEBPF_SAMPLE_GIL_HELD ? LABEL_GIL_HELD : 0);
	l->cgroup = s->cgroup_id;
}

/* ---- frames ------------------------------------------------------------- */

/* Kernel symbols, read when a kernel frame first needs a name (reading
 * /proc/kallsyms is the largest part of a start-up, and many recordings
 * never need it); with kernel_frames_later, taken from the thread that read
 * them (kernel_symbols_pending). */
static const struct kallsyms *ksyms(struct ingest *in)
{
	if (in->kallsyms_path || in->kallsyms_loader) {
		in->ksyms = in->kallsyms_loader ? kallsyms__wait(in->kallsyms_loader)
						: kallsyms__load(in->kallsyms_path);
		if (!in->ksyms)
			err_msg("kernel symbols unavailable (%s): kernel frames will read [unknown]", strerror(errno));
		in->kallsyms_path = NULL;
		in->kallsyms_loader = NULL;
	}
	return in->ksyms;
}

/*
 * Are the kernel's symbols still being read? With kernel_frames_later the
 * first kernel frame to name starts a thread that reads them, and samples
 * with kernel frames wait for it (waiting_sample) rather than the reader:
 * read in the reader, they held the ring up 135 ms (250 ms on a loaded
 * machine), and with it the registration of a Python process starting then
 * (its first 0.25 s had no Python frames). Without a thread: read at once.
 */
static bool kernel_symbols_pending(struct ingest *in)
{
	if (!in->kernel_frames_later)
		return false;
	if (in->kallsyms_path && !in->kallsyms_loader) {
		in->kallsyms_loader = kallsyms__load_async(in->kallsyms_path);
		if (in->kallsyms_loader)
			in->kallsyms_path = NULL;
	}
	return in->kallsyms_loader && !kallsyms__ready(in->kallsyms_loader);
}

static uint32_t kernel_frame(struct ingest *in, uint64_t addr, bool leaf)
{
	struct frame f = { .kind = FRAME_KERNEL };
	const char *name = ksyms(in) ? kallsyms__lookup(in->ksyms, leaf ? addr : addr - 1, NULL) : NULL;

	f.name = profile__str(in->prof, name ? name : "[unknown]");
	return profile__frame(in->prof, &f);
}

static uint32_t mark_frame(struct ingest *in, const char *text)
{
	struct frame f = { .kind = FRAME_MARK };

	f.name = profile__str(in->prof, text);
	return profile__frame(in->prof, &f);
}

/*
 * A frame chain that ends in a loop of `cycle` frames (leaf first, as BPF
 * sends it): how many frames to keep so that the loop appears once. The
 * frames repeat with that period from some point on; everything from one
 * period past that point is the loop going round again.
 */
uint32_t ingest_frames_before_loop(const struct pyebpf_pyframe *f, uint32_t n, uint32_t cycle)
{
	uint32_t j;

	if (!cycle || cycle >= n)
		return n;
	for (j = n - cycle; j > 0; j--) {
		const struct pyebpf_pyframe *a = &f[j - 1], *b = &f[j - 1 + cycle];

		if (a->code != b->code || a->globals != b->globals || a->lasti != b->lasti)
			break;
	}
	return j + cycle;
}

/*
 * A frame-pointer stack, root first. The kernel follows saved frame pointers
 * blindly: through code built without them (the dynamic loader, start-up
 * code, most of libc) the chain turns into values that are no return
 * address at all. The first return address outside every mapped file ends
 * the stack, marked once, rather than a tower of [unknown] frames.
 */
static uint32_t native_frames(struct ingest *in, const struct sample_view *v, struct process *pr, uint64_t now,
			      uint32_t *out)
{
	uint32_t keep = v->nustack;

	for (uint32_t i = 0; i < v->nustack; i++) { /* leaf first */
		uint32_t id = procs__user_frame(in->procs, pr->maps, v->ustack[i], i == 0, now);

		if (i && !profile__frame_at(in->prof, id)->module) {
			keep = i;
			break;
		}
		out[i] = id;
	}
	if (keep < v->nustack) {
		out[keep] = mark_frame(in, "[no frame pointers]");
		keep++;
	} else if (v->nustack == PYEBPF_MAX_STACK) { /* the kernel stops at 127 frames: not the root */
		out[keep++] = mark_frame(in, "[truncated]");
	}
	for (uint32_t i = 0; i < keep / 2; i++) { /* root first */
		uint32_t t = out[i];

		out[i] = out[keep - 1 - i];
		out[keep - 1 - i] = t;
	}
	return keep;
}

/* The user part, root first: merged native/Python (--native), the Python
 * stack standing for the interpreter's native frames, or the native stack. */
static uint32_t user_frames(struct ingest *in, const struct sample_view *v, struct process *pr, struct py_proc *py,
			    uint64_t now, uint32_t *out)
{
	const uint32_t room = INGEST_MAX_FRAMES - PYEBPF_MAX_STACK;
	uint32_t n = 0;

	if (v->regs)
		return (uint32_t)native_stacks__frames(in->native, v, pr->maps, &pr->native,
						       v->s->flags & PYEBPF_SAMPLE_PY ? py : NULL, now, out, room);
	if (py && v->npy) {
		uint32_t npy = v->npy;

		if (v->s->flags & PYEBPF_SAMPLE_PY_TRUNCATED) {
			out[n++] = mark_frame(in, "[truncated]");
		} else if (v->s->flags & PYEBPF_SAMPLE_PY_LOOP) {
			out[n++] = mark_frame(in, "[frame loop]");
			npy = ingest_frames_before_loop(v->py, npy, v->s->py_cycle);
		}
		py_proc__frames(in->py, py, v->py, npy, now, out + n, NULL);
		return n + npy;
	}
	if (!v->nustack)
		return 0;
	return native_frames(in, v, pr, now, out);
}

/* --native: does the stack (root first) show the thread taking the GIL? It
 * turns a lock wait into a GIL wait where the GIL's address is not known. */
static bool native_gil_wait(struct ingest *in, const uint32_t *frames, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) { /* frames[i - 1] called frames[i] */
		const struct frame *f = profile__frame_at(in->prof, frames[i]);
		const struct frame *caller = i ? profile__frame_at(in->prof, frames[i - 1]) : NULL;

		if (f->kind == FRAME_NATIVE &&
		    offcpu_gil_call(caller ? profile__str_at(in->prof, caller->name) : "",
				    caller && caller->kind == FRAME_PYTHON, profile__str_at(in->prof, f->name)))
			return true;
	}
	return false;
}

/* Kernel frames (nk of them, leaf first) root first; an off-CPU stack leaves
 * out the scheduler at its leaf (every one of them ends in schedule ->
 * __schedule -> finish_task_switch). */
static uint32_t kernel_frames(struct ingest *in, const __u64 *kstack, uint32_t nk, bool offcpu, uint32_t *out)
{
	uint32_t skip = 0, n = 0;

	if (offcpu)
		while (skip < nk && ksyms(in)) {
			const char *name = kallsyms__lookup(in->ksyms, skip ? kstack[skip] - 1 : kstack[skip], NULL);

			if (!name || !offcpu_scheduler_function(name))
				break;
			skip++;
		}
	for (uint32_t i = nk; i-- > skip;)
		out[n++] = kernel_frame(in, kstack[i], i == 0);
	return n;
}

/* The cache key of a sample's stack: only what user_frames(),
 * kernel_frames() and the reason mark read (a Python sample's native
 * addresses are not: they change from sample to sample in the eval loop). */
static size_t raw_stack_key(struct ingest *in, const struct sample_view *v, struct process *pr, struct py_proc *py,
			    uint32_t offcpu)
{
	bool python = py && v->npy;
	struct raw_stack_head h = {
		.maps_id = procs__maps_id(pr->maps),
		.flags = v->s->flags & RAW_STACK_NAMING_FLAGS,
		.py_cycle = v->s->py_cycle,
		.npy = python ? v->npy : 0,
		.nustack = python ? 0 : v->nustack,
		.nkstack = v->nkstack,
		.python = python,
		.offcpu = offcpu,
		.task = in->run_task_set ? in->run_task.frame + 1 : 0,
	};
	size_t n = sizeof(h);

	memcpy(in->raw_key, &h, sizeof(h));
	if (python) {
		memcpy(in->raw_key + n, v->py, h.npy * sizeof(*v->py));
		n += h.npy * sizeof(*v->py);
	} else {
		memcpy(in->raw_key + n, v->ustack, h.nustack * sizeof(*v->ustack));
		n += h.nustack * sizeof(*v->ustack);
	}
	memcpy(in->raw_key + n, v->kstack, h.nkstack * sizeof(*v->kstack));
	return n + h.nkstack * sizeof(*v->kstack);
}

#define STACK_FILTERED UINT32_MAX

/* What the summary counts of a stack (root first), kept by its id. */
static void note_stack_bits(struct ingest *in, uint32_t id, const uint32_t *frames, uint32_t n)
{
	uint64_t gen = profile__stacks_gen(in->prof);
	uint8_t bits = STACK_KNOWN;
	uint32_t leaf = UINT32_MAX;

	if (gen != in->bits_gen) { /* a new interval: ids start again */
		memset(in->stack_bits, 0, in->nstack_bits);
		in->bits_gen = gen;
	}
	if (id >= in->nstack_bits) {
		size_t old = in->nstack_bits;

		xgrow(&in->stack_bits, &in->nstack_bits, (size_t)id + 1, 1);
		memset(in->stack_bits + old, 0, in->nstack_bits - old);
	}
	if (in->stack_bits[id])
		return;
	for (uint32_t i = 0; i < n; i++) { /* the leaf: the last frame that is user code */
		uint32_t kind = profile__frame_at(in->prof, frames[i])->kind;

		if (kind == FRAME_NATIVE || kind == FRAME_PYTHON)
			leaf = i;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct frame *f = profile__frame_at(in->prof, frames[i]);

		if (f->kind == FRAME_NATIVE && !f->name)
			bits |= STACK_NO_SYM | (i == leaf ? STACK_NO_SYM_LEAF : 0);
		else if (f->kind == FRAME_MARK && !strcmp(profile__str_at(in->prof, f->name), "[no frame pointers]"))
			bits |= STACK_NO_FP;
		else if (f->kind == FRAME_PYTHON && str_ends_with(profile__str_at(in->prof, f->name), "_bootstrap") &&
			 str_ends_with(profile__str_at(in->prof, f->module), "/multiprocessing/process.py"))
			bits |= STACK_MP_BOOT;
	}
	in->stack_bits[id] = bits;
}

static uint8_t stack_bits(const struct ingest *in, uint32_t id)
{
	return id < in->nstack_bits && profile__stacks_gen(in->prof) == in->bits_gen ? in->stack_bits[id] : 0;
}

/* Count a sample by what its stack holds. */
static void count_stack(struct ingest *in, uint32_t id, uint32_t weight)
{
	uint8_t bits = stack_bits(in, id);

	if (bits & STACK_NO_FP)
		in->stats.fp_cut += weight;
	if (bits & STACK_NO_SYM)
		in->stats.no_symbol += weight;
	if (bits & STACK_NO_SYM_LEAF)
		in->stats.no_symbol_leaf += weight;
}

/* The running task's frame, above the outermost call of its coroutine in the
 * user frames (root first): asyncio's loop calls every task's step from the
 * same frames, so the task tells them apart. No such call (its step is
 * over, or between two): no frame. */
static uint32_t with_running_task(struct ingest *in, uint32_t n)
{
	if (n >= INGEST_MAX_FRAMES - PYEBPF_MAX_STACK)
		return n;
	for (uint32_t i = 0; i < n; i++) {
		const struct frame *f = profile__frame_at(in->prof, in->frames[i]);

		if (f->kind == FRAME_PYTHON && f->name == in->run_task.coro_name &&
		    f->module == in->run_task.coro_file) {
			memmove(in->frames + i + 1, in->frames + i, (n - i) * sizeof(in->frames[0]));
			in->frames[i] = in->run_task.frame;
			return n + 1;
		}
	}
	return n;
}

/* A sample's user frames in in->frames (nuser of them there already, or
 * -1), with its running task's: how many. */
static uint32_t user_part(struct ingest *in, const struct sample_view *v, struct process *pr, struct py_proc *py,
			  int nuser, uint64_t now)
{
	uint32_t n = nuser >= 0 ? (uint32_t)nuser : user_frames(in, v, pr, py, now, in->frames);

	return in->run_task_set ? with_running_task(in, n) : n;
}

/* Name a stack whose n user frames are in in->frames: kernel frames, the
 * filters, the off-CPU reason (offcpu) as the leaf. */
static uint32_t finish_stack(struct ingest *in, uint32_t n, const __u64 *kstack, uint32_t nk, bool offcpu_sample,
			     uint32_t offcpu)
{
	n += kernel_frames(in, kstack, nk, offcpu_sample, in->frames + n);
	n = filter__frames(in->filter, in->prof, in->frames, n);
	filter__functions(in->filter, in->prof, in->frames, n);
	if (!n && in->filter->python_only)
		return STACK_FILTERED;
	if (offcpu) /* the reason is the leaf, whatever the filters kept */
		in->frames[n++] = mark_frame(in, offcpu_reason_frame(offcpu));
	uint32_t id = profile__stack(in->prof, in->frames, n);

	note_stack_bits(in, id, in->frames, n);
	return id;
}

/* Name a sample's stack: user frames (nuser of them already in in->frames,
 * or -1), then finish_stack. */
static uint32_t name_stack(struct ingest *in, const struct sample_view *v, struct process *pr, struct py_proc *py,
			   int nuser, uint32_t offcpu, uint64_t now)
{
	uint32_t n = user_part(in, v, pr, py, nuser, now);

	return finish_stack(in, n, v->kstack, v->nkstack, v->s->flags & PYEBPF_SAMPLE_OFFCPU, offcpu);
}

/* The profile's stack id of a sample, or STACK_FILTERED: named once per raw
 * stack and second (stack_cache.h); --native stacks are unwound every time. */
static uint32_t sample_stack(struct ingest *in, const struct sample_view *v, struct process *pr, struct py_proc *py,
			     int nuser, uint32_t offcpu, uint64_t now)
{
	uint64_t gen = profile__stacks_gen(in->prof);
	uint32_t id;
	size_t len;

	if (v->regs || nuser >= 0)
		return name_stack(in, v, pr, py, nuser, offcpu, now);
	if (gen != in->stacks_gen) { /* a new interval: the ids cached are gone */
		stack_cache__clear(in->stacks);
		in->stacks_gen = gen;
	}
	len = raw_stack_key(in, v, pr, py, offcpu);
	if (stack_cache__get(in->stacks, in->raw_key, len, now, gen, &id))
		return id;
	id = name_stack(in, v, pr, py, -1, offcpu, now);
	/* Naming may have read the maps again (an address outside them): the key
	 * holds the generation it was asked with, later samples the new one. */
	stack_cache__put(in->stacks, in->raw_key, len, now, gen, id);
	return id;
}

/* How long an on-CPU sample waited in the ring buffer to be named (an
 * off-CPU one is sent when its wait ends, by design); true when naming is
 * behind (over BEHIND_NS). */
static bool note_delay(struct ingest_stats *st, const struct sample_view *v, uint64_t now)
{
	uint64_t behind = now > v->s->h.ts_ns ? now - v->s->h.ts_ns : 0;

	if (v->s->flags & PYEBPF_SAMPLE_OFFCPU)
		return false;
	if (behind > st->most_behind_ns)
		st->most_behind_ns = behind;
	if (behind > INGEST_LATE_NS)
		st->late++;
	return behind > BEHIND_NS;
}

/* A named sample into the profile (or counted filtered); false when filtered. */
static bool add_named(struct ingest *in, const struct sample_labels *l, uint32_t stack, uint32_t weight, uint64_t t,
		      bool oncpu)
{
	if (stack == STACK_FILTERED) {
		in->stats.filtered++;
		return false;
	}
	count_stack(in, stack, weight);
	if (oncpu)
		in->stats.oncpu_extra += weight - 1;
	profile__add_stack_at(in->prof, l, stack, weight, t);
	return true;
}

/*
 * A sample whose kernel frames wait for the kernel's symbols: everything
 * else of it is named on arrival (its process's Python code, maps and
 * labels may be gone later), its kernel addresses are kept.
 */
struct waiting_sample {
	struct sample_labels l;
	uint64_t t;
	uint32_t weight, nuser, nkstack;
	bool offcpu;
	__u64 kstack[]; /* nkstack addresses, leaf first; then nuser user frames, root first */
};

/* Samples held at most: beyond, the reader waits for the symbols (a
 * recorder starved of CPU must not grow without bound meanwhile). */
#define WAITING_MAX 16384

static uint32_t *waiting_frames(struct waiting_sample *w)
{
	return (uint32_t *)(w->kstack + w->nkstack);
}

/* Name and add a waiting sample now that the kernel's symbols are here. */
static void name_waiting(struct ingest *in, struct waiting_sample *w)
{
	uint32_t stack;

	memcpy(in->frames, waiting_frames(w), w->nuser * sizeof(uint32_t));
	stack = finish_stack(in, w->nuser, w->kstack, w->nkstack, w->offcpu, w->l.offcpu);
	add_named(in, &w->l, stack, w->weight, w->t, !w->offcpu);
}

void ingest__kernel_symbols(struct ingest *in)
{
	ksyms(in);
	ingest__name_waiting(in, true);
}

void ingest__name_waiting(struct ingest *in, bool wait)
{
	if (!in->nwaiting || (!wait && !kallsyms__ready(in->kallsyms_loader)))
		return;
	ksyms(in); /* waits for the thread: it has ended unless `wait` */
	for (size_t i = 0; i < in->nwaiting; i++) {
		name_waiting(in, in->waiting[i]);
		free(in->waiting[i]);
	}
	in->nwaiting = 0;
}

/* Hold a sample (its nuser user frames in in->frames) until the kernel's symbols are read. */
static void wait_for_kernel_symbols(struct ingest *in, const struct sample_view *v, uint32_t nuser,
				    const struct sample_labels *l, uint64_t t, uint32_t weight)
{
	struct waiting_sample *w = xmalloc(sizeof(*w) + v->nkstack * sizeof(__u64) + (size_t)nuser * sizeof(uint32_t));

	*w = (struct waiting_sample){ .l = *l,
				      .t = t,
				      .weight = weight,
				      .nuser = nuser,
				      .nkstack = v->nkstack,
				      .offcpu = v->s->flags & PYEBPF_SAMPLE_OFFCPU };
	memcpy(w->kstack, v->kstack, v->nkstack * sizeof(__u64));
	memcpy(waiting_frames(w), in->frames, (size_t)nuser * sizeof(uint32_t));
	xgrow(&in->waiting, &in->waiting_cap, in->nwaiting + 1, sizeof(*in->waiting));
	in->waiting[in->nwaiting++] = w;
	if (in->nwaiting >= WAITING_MAX)
		ingest__name_waiting(in, true);
}

/* pid's request variables are looked for by ingest__look_for_requests. */
static void look_later(struct ingest *in, uint32_t pid)
{
	for (size_t i = 0; i < in->nlooking; i++)
		if (in->looking[i] == pid)
			return;
	if (in->nlooking < INGEST_LOOKING_MAX)
		in->looking[in->nlooking++] = pid;
}

/* The spans just named, to BPF (after py_ctx: their generation is its). */
static void tell_named_spans(struct ingest *in, struct process *pr, uint32_t pid)
{
	uint64_t spans[32];
	uint32_t gen;
	size_t n;

	if (!in->hooks.span_named)
		return;
	while ((n = request_proc__named(pr->requests, spans, 32, &gen)))
		for (size_t i = 0; i < n; i++)
			in->hooks.span_named(in->hooks.ctx, pid, spans[i], gen);
}

bool ingest__look_for_requests(struct ingest *in)
{
	size_t kept = 0;
	uint64_t now = in->nlooking ? now_ns() : 0;

	for (size_t i = 0; i < in->nlooking; i++) {
		uint32_t pid = in->looking[i];
		struct process *pr = processes__find(in->table, pid);
		struct pyebpf_py_ctx tell;

		if (!pr || !pr->python || pr->exited_ns)
			continue;
		if (request_proc__look(pr->requests, pid, py_proc__interp(pr->python), in->context_label, now, &tell) &&
		    in->hooks.requests_found)
			in->hooks.requests_found(in->hooks.ctx, pid, &tell);
		if (request_proc__wants_look(pr->requests, in->context_label))
			in->looking[kept++] = pid;
	}
	in->nlooking = kept;
	return kept > 0;
}

static void ingest_sample(struct ingest *in, const void *data, size_t size)
{
	struct sample_view v;
	struct sample_labels l = { 0 };
	uint64_t now = now_ns(), t, at;
	struct py_proc *py;
	struct process *pr;
	uint32_t weight = 1, stack;
	int nuser = -1; /* the user frames are in in->frames already when >= 0 */

	if (sample_decode(data, size, &v) != SAMPLE_OK || (v.regs && !in->native)) {
		in->stats.bad++;
		return;
	}
	base_labels(in, v.s, &l);
	pr = processes__get(in->table, l.pid, now);
	procs__container_labels(in->procs, pr->maps, &l);
	/* Before any filter: a process must be known to be Python to be sampled as Python. */
	py = python_of(in, pr, now);
	if (py && v.s->py_error == PYEBPF_PY_THREAD_LIMIT && in->hooks.thread_beyond_walk)
		in->hooks.thread_beyond_walk(in->hooks.ctx, l.pid);
	l.process = procs__process_name(pr->maps);
	l.thread = thread_label(in, v.s, pr, py, v.s->task_comm[0] ? comm_str(in, v.s->task_comm) : l.comm, now);
	l.python = py ? python_label(in, py_proc__interp(py)) : 0;
	/* An off-CPU sample is timed at its interval's start: timelines draw it
	 * from there, weight x period long. */
	at = v.s->flags & PYEBPF_SAMPLE_OFFCPU ? v.s->off.since_ns : v.s->h.ts_ns;
	t = at > in->time_base_ns ? at - in->time_base_ns : 0;
	/* Ticks the sample stands for: a wait's length; on a CPU, 1 and the
	 * ticks the timer skipped before it (bpf/sample.bpf.c). */
	weight = v.s->off.weight ? v.s->off.weight : 1;
	if (note_delay(&in->stats, &v, now))
		procs__refresh_behind(in->procs, pr->maps, now);
	if (v.s->flags & PYEBPF_SAMPLE_OFFCPU) {
		l.offcpu = offcpu_classify(&v.s->off, py ? py_proc__gil(py) : NULL);
		in->stats.offcpu_ticks += weight;
		in->stats.offcpu_records++;
		/* A lock wait may be the GIL's, as the native frames tell: named
		 * before the filters then, which may ask for the reason. */
		if (l.offcpu == OFFCPU_LOCK && v.regs) {
			nuser = (int)user_frames(in, &v, pr, py, now, in->frames);
			if (native_gil_wait(in, in->frames, (uint32_t)nuser))
				l.offcpu = OFFCPU_GIL;
		}
	}
	if (py && in->requests) {
		struct pyebpf_py_ctx tell;

		if (request_labels(&pr->requests, in->prof, l.pid, py_proc__interp(py), v.s, in->context_label, now, &l,
				   &tell) &&
		    in->hooks.requests_found)
			in->hooks.requests_found(in->hooks.ctx, l.pid, &tell);
		tell_named_spans(in, pr, l.pid);
		if (request_proc__wants_look(pr->requests, in->context_label))
			look_later(in, l.pid);
	}
	if (!filter__keep(in->filter, in->prof, &l, t)) {
		in->stats.filtered++;
		return;
	}
	procs__note_exe(in->procs, pr->maps); /* a process the filters keep */
	in->run_task_set = py && in->tasks && v.s->running_task &&
			   task_sampler__running(in->tasks, in->py, py, &pr->tasks, v.s->running_task,
						 v.s->flags & PYEBPF_SAMPLE_RUNNING_CORO, now, &in->run_task);
	if (v.nkstack && kernel_symbols_pending(in)) {
		wait_for_kernel_symbols(in, &v, user_part(in, &v, pr, py, nuser, now), &l, t, weight);
		in->run_task_set = false;
		return;
	}
	/* Samples the filters leave out are never named. */
	stack = sample_stack(in, &v, pr, py, nuser, l.offcpu, now);
	in->run_task_set = false;
	if (!add_named(in, &l, stack, weight, t, !(v.s->flags & (PYEBPF_SAMPLE_OFFCPU | PYEBPF_SAMPLE_MEM))))
		return;
	if ((v.s->flags & PYEBPF_SAMPLE_MEM) && in->mem) {
		uint32_t n;
		const uint32_t *frames = profile__stack_frames(in->prof, stack, &n);

		mem_ledger__grow(in->mem, &l, v.s->mem.addr, weight, frames, n); /* the points the profile counted */
		if (l.tid == l.pid && py && (v.s->flags & PYEBPF_SAMPLE_PY) && v.s->tstate)
			pr->py_main_tstate = v.s->tstate;
	}
	/* A multiprocessing child: its name, read once its main thread shows it
	 * (labels from the next sample on; writers use it for the whole pid). */
	if ((stack_bits(in, stack) & STACK_MP_BOOT) && l.tid == l.pid && py && v.s->tstate &&
	    (v.s->flags & PYEBPF_SAMPLE_PY) && procs__want_process_name(pr->maps)) {
		char *name = py_process_name((pid_t)l.pid, py_proc__interp(py), v.s->tstate);

		procs__set_process_name(pr->maps, name ? profile__str(in->prof, name) : 0);
		free(name);
	}
}

/* ---- asyncio tasks ------------------------------------------------------ */

#define TASK_COST_SHARE 50

static void task_labels(void *ctx, uint32_t pid, uint32_t tid, const struct py_interp *pi, uint64_t task_context,
			struct sample_labels *l)
{
	struct ingest *in = ctx;
	uint64_t now = now_ns();
	struct process *pr = processes__get(in->table, pid, now);
	bool ask, from_python;

	if (in->task_comm_pid != pid) { /* once per process and walk, not per task */
		char path[64], comm[64] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%u/comm", pid);
		f = fopen(path, "re");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		in->task_comm_pid = pid;
		in->task_comm = profile__str(in->prof, comm[0] ? comm : "[unknown]");
	}
	l->pid = pid;
	l->tid = tid;
	l->comm = in->task_comm;
	procs__container_labels(in->procs, pr->maps, l);
	l->process = procs__process_name(pr->maps);
	l->thread = tid == pid ? profile__str(in->prof, "MainThread")
			       : threads__name(in->threads, &pr->threads, pid, tid, l->comm, false, now, &ask,
					       &from_python);
	l->python = python_label(in, pi);
	if (in->requests)
		request_labels_of_task(pr->requests, in->prof, pid, pi, task_context, in->context_label, l);
}

static bool task_keep(void *ctx, struct sample_labels *l)
{
	struct ingest *in = ctx;

	return filter__keep(in->filter, in->prof, l, in->task_t);
}

/* Every Python process's tasks, each one sample of `ticks` at time t. */
static void walk_tasks(struct ingest *in, uint32_t ticks, uint64_t t, uint64_t now)
{
	struct process *pr;
	size_t pos = 0;

	in->task_t = t;
	in->task_comm_pid = 0;
	while (processes__next(in->table, &pos, &pr))
		if (py_proc__supported(pr->python))
			task_sampler__sample(in->tasks, in->py, pr->python, &pr->tasks, ticks, t, now, task_labels, in,
					     task_keep);
}

void ingest__tasks_now(struct ingest *in, uint64_t now)
{
	if (in->tasks)
		walk_tasks(in, 1, 0, now);
}

void ingest__tasks_tick(struct ingest *in, uint64_t now)
{
	uint64_t ticks, t;

	if (!in->tasks || !in->task_period_ns)
		return;
	if (!in->task_last_ns || in->task_last_ns < in->time_base_ns)
		in->task_last_ns = in->time_base_ns;
	if (now < in->task_last_ns + in->task_period_ns || now < in->task_next_ns)
		return;
	ticks = (now - in->task_last_ns) / in->task_period_ns;
	in->task_last_ns += ticks * in->task_period_ns;
	t = now > in->time_base_ns ? now - in->time_base_ns : 0;
	uint64_t cpu = thread_cpu_ns();
	walk_tasks(in, (uint32_t)(ticks > UINT32_MAX ? UINT32_MAX : ticks), t, now);
	/* Thousands of tasks make a walk long: walk less often (each walk
	 * weighs the ticks since the last, so task time holds at a coarser
	 * grain), so that walking costs at most 1/TASK_COST_SHARE of one CPU:
	 * 2%, 1,000 pending tasks walked every ~120 ms (bench/asyncio.sh).
	 * The walk's CPU time, not its wall time: one walk preempted for 20 ms
	 * on a busy machine put the next a second away, and a second's ticks
	 * weighed on the tasks of one instant read an aiohttp service's task
	 * time 12% high. */
	in->task_next_ns = now + (thread_cpu_ns() - cpu) * TASK_COST_SHARE;
}

const struct task_stats *ingest__task_stats(const struct ingest *in)
{
	return in->tasks ? task_sampler__stats(in->tasks) : NULL;
}

/* pid replaced its image: all known of it goes, here and in BPF. An exec
 * event read late (the ring was busy) comes after samples of the new image
 * may have registered it already: a Python found then is looked for again
 * at once, or its next sample would lose its Python frames. */
static void exec_event(struct ingest *in, uint32_t pid)
{
	struct process *pr = processes__find(in->table, pid);
	bool was_python = pr && py_proc__supported(pr->python);

	processes__exec(in->table, pid);
	forget_in_bpf(pid, in);
	if (was_python)
		python_of(in, pr, now_ns());
}

/*
 * Whether pid gives memory back as it ends: a Python whose main thread ran
 * Python code and runs none now (its frame chain is empty, or the process
 * is gone) is past its program, in its interpreter's teardown (Py_Finalize
 * frees what the program's modules kept: a program that kept 200 MiB
 * munmaps it all before it exits). What it gives back then is what it held
 * at its end, as memray's leaks view shows it. Read now, not when it was
 * given back: a release read late (the ring behind) of a program that ends
 * right after it counts as held at its end.
 */
static bool mem_ending(struct ingest *in, const struct pyebpf_mem_event *e)
{
	struct process *pr = processes__find(in->table, e->h.pid);
	const struct py_layout *lo;
	uint64_t frame, back;

	if (!pr || !pr->py_main_tstate || !py_proc__supported(pr->python) ||
	    !mem_ledger__holds(in->mem, e->h.pid, e->start, e->len))
		return false;
	lo = &py_proc__interp(pr->python)->layout;
	frame = py_frame_first((pid_t)e->h.pid, lo, pr->py_main_tstate);
	/* Frames without code (a C-stack shim, the interpreter's own base frame) are no program running. */
	for (int i = 0; frame && i < 4; i++, frame = back)
		if (py_frame_step((pid_t)e->h.pid, lo, frame, &back))
			return false;
	return !frame;
}

/* --mode memory: a target gave memory back or moved it. */
static void mem_event(struct ingest *in, const void *data, size_t size)
{
	const struct pyebpf_mem_event *e = data;

	if (size < sizeof(*e)) {
		in->stats.bad++;
		return;
	}
	if (!in->mem)
		return;
	if (e->op == PYEBPF_MEM_MOVE)
		mem_ledger__move(in->mem, e->h.pid, e->start, e->len, e->to, e->to_len);
	else if (mem_ending(in, e))
		mem_ledger__release_ending(in->mem, e->h.pid, e->start, e->len);
	else
		mem_ledger__release(in->mem, e->h.pid, e->start, e->len);
}

/* Sample points held now, into the profile: at most this many an add. */
#define HELD_ADD_MAX UINT32_MAX

static void add_moment(struct ingest *in, const struct sample_labels *l, uint32_t flag, const uint32_t *frames,
		       uint32_t nframes, uint64_t points)
{
	struct sample_labels held = *l;

	held.flags |= flag;
	for (; points; points -= points > HELD_ADD_MAX ? HELD_ADD_MAX : points)
		profile__add(in->prof, &held, frames, nframes, points > HELD_ADD_MAX ? HELD_ADD_MAX : (uint32_t)points);
}

static void add_held(void *ctx, const struct sample_labels *l, const uint32_t *frames, uint32_t nframes,
		     uint64_t points)
{
	add_moment(ctx, l, LABEL_MEM_HELD, frames, nframes, points);
}

static void add_peak(void *ctx, const struct sample_labels *l, const uint32_t *frames, uint32_t nframes,
		     uint64_t points)
{
	add_moment(ctx, l, LABEL_MEM_PEAK, frames, nframes, points);
}

void ingest__mem_held(struct ingest *in)
{
	if (!in->mem)
		return;
	mem_ledger__settle(in->mem); /* what running ones gave back "as they ended": they had not */
	mem_ledger__held(in->mem, add_held, in);
	mem_ledger__peak(in->mem, add_peak, in);
	mem_ledger__tidy(in->mem);
}

void ingest__mem_tidy(struct ingest *in)
{
	if (in->mem)
		mem_ledger__tidy(in->mem);
}

void ingest__clear_samples(struct ingest *in)
{
	size_t n = 0;
	uint32_t *ids = in->mem ? mem_ledger__requests(in->mem, &n) : NULL;

	profile__clear_samples_carrying(in->prof, ids, n);
	if (in->mem)
		mem_ledger__renumber_requests(in->mem, ids);
	free(ids);
}

const struct mem_ledger *ingest__mem_ledger(const struct ingest *in)
{
	return in->mem;
}

/* What BPF copied of a process's memory for the sample that follows. */
static void mem_copy_event(struct ingest *in, const void *data, size_t size)
{
	const struct pyebpf_mem_copy *c = data;
	size_t head = offsetof(struct pyebpf_mem_copy, data);

	if (size < head || c->len > PYEBPF_MEM_COPY_MAX || size - head < c->len) {
		in->stats.bad++;
		return;
	}
	mem_copies__add(c->h.pid, c->addr, c->data, c->len);
}

int ingest__event(void *ctx, void *data, size_t size)
{
	struct ingest *in = ctx;
	const struct pyebpf_event_header *h = data;

	if (size < sizeof(*h)) {
		in->stats.bad++;
		return 0;
	}
	ingest__name_waiting(in, false); /* before this sample: in the order they came */
	switch (h->type) {
	case PYEBPF_EVENT_SAMPLE:
		in->stats.samples++;
		ingest_sample(in, data, size);
		break;
	case PYEBPF_EVENT_EXEC:
		if (in->mem) /* a new address space: the old one's memory is gone */
			mem_ledger__forget(in->mem, h->pid);
		mem_copies__forget(h->pid);
		exec_event(in, h->pid);
		break;
	case PYEBPF_EVENT_EXIT:
		if (in->mem)
			mem_ledger__exited(in->mem, h->pid);
		/* Every sample it sent is named by now: they came before. */
		mem_copies__forget(h->pid);
		processes__exit(in->table, h->pid, now_ns());
		break;
	case PYEBPF_EVENT_MEM:
		mem_event(in, data, size);
		break;
	case PYEBPF_EVENT_MEM_COPY:
		mem_copy_event(in, data, size);
		break;
	case PYEBPF_EVENT_BLOCKED: /* a process only off-CPU samples will name: is it Python? */
	case PYEBPF_EVENT_FORK:    /* a new target: its first waits need its Python stacks */
		ingest__register(in, h->pid);
		break;
	default:
		in->stats.bad++;
	}
	return 0;
}
