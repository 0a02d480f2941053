// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `pyebpf dump -p PID`: one run of a BPF task iterator over PID's threads
 * (bpf/offcpu_flush.bpf.c: dump_threads) captures each thread's kernel
 * stack, user stack and Python stack (the walker every sample uses) and
 * what it waits on, within the same few microseconds and without stopping
 * or signalling the target; the records go through ingest as any sample
 * does (symbols, reasons, thread names, filters). --locals then reads each
 * Python frame's locals from userspace (python/locals.c), only from the
 * calls the capture saw, checked around the read (locals_try).
 * --container ID|NAME: the same for every process of a container.
 */
#include "live/dump.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "live/dump_args.h"
#include "record/ingest.h"
#include "profile/offcpu.h"
#include "record/preflight.h"
#include "profile/profile.h"
#include "python/asyncio_tasks.h"
#include "python/locals.h"
#include "sample_view.h"
#include "record/sampler.h"
#include "base/escape.h"
#include "base/util.h"
#include "system/cgroups.h"
#include "system/container_find.h"
#include "system/container_names.h"
#include "write/dump.h"

/* What --locals needs of a thread's capture: its thread state and code objects, leaf first. */
struct raw_thread {
	uint32_t tid;
	uint64_t tstate;
	uint64_t *codes;
	size_t ncodes;
};

struct dumper {
	struct dump_opts opts;
	struct sampler *sampler;
	struct ingest *ingest;
	struct profile *prof;
	struct py_interp interp; /* valid when python */
	bool python;
	struct raw_thread *raw;
	size_t nraw, raw_cap;
	uint64_t records;
	const char *container_name; /* --container: the name it was found by, if any */
};

static void hook_python(void *ctx, uint32_t pid, const struct py_interp *in)
{
	struct dumper *d = ctx;

	sampler__python(d->sampler, pid, in);
	if (in && pid == d->opts.pid) {
		d->interp = *in;
		d->python = true;
	}
}

static void hook_forget(void *ctx, uint32_t pid)
{
	sampler__forget(((struct dumper *)ctx)->sampler, pid);
}

static void hook_beyond_walk(void *ctx, uint32_t pid)
{
	sampler__index_threads(((struct dumper *)ctx)->sampler, pid);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct dumper *d = ctx;
	struct sample_view v;

	if (d->opts.locals && sample_decode(data, size, &v) == SAMPLE_OK && v.s->tstate &&
	    (v.s->flags & PYEBPF_SAMPLE_PY)) {
		struct raw_thread *r;

		xgrow(&d->raw, &d->raw_cap, d->nraw + 1, sizeof(*d->raw));
		r = &d->raw[d->nraw++];
		r->tid = v.s->h.tid;
		r->tstate = v.s->tstate;
		r->ncodes = v.npy;
		r->codes = xcalloc(v.npy ? v.npy : 1, sizeof(*r->codes));
		for (uint32_t i = 0; i < v.npy; i++)
			r->codes[i] = v.py[i].code;
	}
	d->records++;
	return ingest__event(d->ingest, data, size);
}

static int capture(struct dumper *d)
{
	const struct dump_opts *o = &d->opts;
	bool kernel = !o->filter.no_kernel && !o->filter.python_only;
	struct sampler_config sc = {
		.kernel_stacks = kernel,
		.ustack_copy = o->native ? o->stack_size : 0,
		.verbose = o->verbose,
		.dump = true,
	};
	struct ingest_config ic = {
		.filter = &o->filter,
		.native = o->native,
		.kallsyms = kernel ? "/proc/kallsyms" : NULL,
		.running_tasks = true, /* a thread's running task, and the pending ones after */
	};
	struct ingest_hooks hooks = { .ctx = d,
				      .python_changed = hook_python,
				      .forget_pid = hook_forget,
				      .thread_beyond_walk = hook_beyond_walk };

	if (!d->sampler)
		d->sampler = sampler__new(&sc, on_event, d);
	if (!d->sampler)
		return -1;
	d->records = 0;
	d->python = false;
	d->prof = profile__new();
	profile__meta(d->prof)->wall = 1;
	d->ingest = ingest__new(d->prof, &ic, &hooks);
	ingest__register(d->ingest, o->pid); /* Python or not, before the capture */
	if (sampler__dump(d->sampler, o->pid))
		return -1;
	if (!d->records) {
		err_msg("pid %u: no thread could be read (did it exit?)", o->pid);
		return -1;
	}
	/* Its asyncio tasks, read right after: pending tasks are on no thread's stack. */
	ingest__tasks_now(d->ingest, now_ns());
	return 0;
}

static const struct raw_thread *raw_of(const struct dumper *d, uint32_t tid)
{
	for (size_t i = 0; i < d->nraw; i++)
		if (d->raw[i].tid == tid)
			return &d->raw[i];
	return NULL;
}

/* Whole-thread reads of --locals before a frame that keeps changing is
 * given up on, and the pause after a read that found another chain than the
 * capture's: a busy thread comes back to the captured call within a few. */
#define LOCALS_TRIES 100
#define LOCALS_RETRY_NS 100000L

/* One captured frame's locals: its slots as the last try read them. */
struct frame_read {
	struct py_local *l; /* PY_LOCALS_MAX of them, n set */
	size_t n;
	bool held; /* read from the captured call, and it did not change meanwhile */
};

/* A thread's tries: each captured frame's slot count (its code's, fixed), slots and verdict. */
struct thread_read {
	size_t n, *nvals;
	uint64_t **vals;
	bool *held;
};

/*
 * One try at a thread's locals: walk its chain now, match it to the
 * capture, then read every matched frame's local slots between two looks
 * at it and its caller (py_frames_values_held). A frame whose code, caller
 * link or (below another frame) instruction moved meanwhile may hold
 * another call's values: not held. Whether every captured frame held;
 * *same_chain: the walk found the captured frames at all.
 */
static bool locals_try(const struct dumper *d, const struct raw_thread *r, struct thread_read *tr, bool *same_chain)
{
	pid_t pid = (pid_t)d->opts.pid;
	struct py_seen_frame *w = NULL;
	bool more, all = true;
	size_t nw = py_chain_read(pid, &d->interp, r->tstate, r->ncodes + PY_CHAIN_SLACK, &w, &more);
	uint64_t *codes = xcalloc(nw ? nw : 1, sizeof(*codes));
	size_t *match = xcalloc(tr->n ? tr->n : 1, sizeof(*match));

	for (size_t j = 0; j < nw; j++)
		codes[j] = w[j].look.code;
	*same_chain = py_chain_match(r->codes, r->ncodes, codes, nw, more, match) == r->ncodes;
	py_frames_values_held(pid, &d->interp, w, nw, match, tr->n, tr->nvals, tr->vals, tr->held);
	for (size_t i = 0; i < tr->n; i++)
		all &= tr->held[i];
	free(match);
	free(codes);
	free(w);
	return all;
}

/* A thread's locals, each frame's from the call the capture shows, or not held: changed. */
static struct frame_read *locals_of_thread(const struct dumper *d, const struct raw_thread *r)
{
	size_t n = r->ncodes, one = n ? n : 1;
	struct thread_read tr = { .n = n,
				  .nvals = xcalloc(one, sizeof(size_t)),
				  .vals = xcalloc(one, sizeof(uint64_t *)),
				  .held = xcalloc(one, sizeof(bool)) };
	struct frame_read *fr = xcalloc(one, sizeof(*fr));
	bool same;

	for (size_t i = 0; i < n; i++) {
		tr.nvals[i] = py_code_nlocals((pid_t)d->opts.pid, &d->interp, r->codes[i]);
		tr.vals[i] = xcalloc(tr.nvals[i] ? tr.nvals[i] : 1, sizeof(uint64_t));
	}
	for (int t = 0; t < LOCALS_TRIES; t++) {
		if (locals_try(d, r, &tr, &same))
			break;
		if (!same)
			nanosleep(&(struct timespec){ 0, LOCALS_RETRY_NS }, NULL);
	}
	for (size_t i = 0; i < n; i++) {
		fr[i].held = tr.held[i];
		if (tr.held[i]) { /* the objects are read after: a value freed meanwhile is <unreadable> */
			fr[i].l = xcalloc(PY_LOCALS_MAX, sizeof(*fr[i].l));
			fr[i].n = py_frame_locals((pid_t)d->opts.pid, &d->interp, tr.vals[i], tr.nvals[i], r->codes[i],
						  fr[i].l);
		}
		free(tr.vals[i]);
	}
	free(tr.vals);
	free(tr.nvals);
	free(tr.held);
	return fr;
}

/* --locals: each Python frame's, read under locals_try's check. */
static void read_locals(struct dumper *d, const struct raw_thread *r, struct dump_frame *frames, size_t n,
			struct py_local **owned, size_t *nowned)
{
	struct frame_read *fr;
	size_t k = 0, npy = 0;

	for (size_t i = 0; i < n; i++)
		npy += frames[i].kind == FRAME_PYTHON;
	if (!r || !d->python || npy != r->ncodes)
		return;
	fr = locals_of_thread(d, r);
	for (size_t i = 0; i < n; i++) {
		if (frames[i].kind != FRAME_PYTHON)
			continue;
		if (!fr[k].held) {
			frames[i].locals_changed = true;
			k++;
			continue;
		}
		struct dump_local *dl = xcalloc(fr[k].n ? fr[k].n : 1, sizeof(*dl));

		for (size_t j = 0; j < fr[k].n; j++)
			dl[j] = (struct dump_local){ fr[k].l[j].name, fr[k].l[j].value };
		frames[i].locals = dl;
		frames[i].nlocals = fr[k].n;
		owned[(*nowned)++] = fr[k].l; /* freed with PY_LOCALS_MAX entries: the rest are zero */
		k++;
	}
	free(fr);
}

static int cmp_tid(const void *a, const void *b)
{
	const struct dump_thread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Named tasks by name, then the unnamed ones, the most numerous first. */
static int cmp_task(const void *a, const void *b)
{
	const struct dump_task *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (!x->name[0] != !y->name[0])
		return x->name[0] ? -1 : 1;
	if (c)
		return c;
	return x->count > y->count ? -1 : x->count < y->count;
}

static void frame_of(const struct profile *p, const struct frame *f, struct dump_frame *out)
{
	*out = (struct dump_frame){ .kind = f->kind,
				    .name = profile__str_at(p, f->name),
				    .file = f->module ? profile__str_at(p, f->module) : NULL,
				    .line = f->line,
				    .offset = f->offset };
}

static bool is_task_mark(const struct profile *p, uint32_t id)
{
	const struct frame *f = profile__frame_at(p, id);

	return f->kind == FRAME_MARK && !strncmp(profile__str_at(p, f->name), "[task", 5);
}

/* An entry of task samples, root first: each awaiting task's `[task NAME]`
 * and coroutines, then the task's own, then `[await: X]`. As a dump_task:
 * the task's name and what it awaits in the header, its coroutines
 * innermost first, then each awaiter's mark and coroutines, nearest first. */
static void task_of(const struct profile *p, const struct profile_entry *e, struct dump_task *out)
{
	struct dump_frame *fr = xcalloc(e->nframes + 1, sizeof(*fr));
	uint32_t *marks = xcalloc(e->nframes + 1, sizeof(*marks)), nmarks = 0, end = e->nframes, n = 0, own;
	const char *text;

	*out = (struct dump_task){ .count = e->count, .awaits = "running", .frames = fr };
	if (end) {
		int r = asyncio_await_parse(profile__str_at(p, profile__frame_at(p, e->frames[end - 1])->name));

		if (r >= 0) {
			out->awaits = asyncio_await_name((enum asyncio_await)r);
			end--;
		}
	}
	for (uint32_t i = 0; i < end; i++)
		if (is_task_mark(p, e->frames[i]))
			marks[nmarks++] = i;
	own = nmarks ? marks[nmarks - 1] : 0;
	text = nmarks ? profile__str_at(p, profile__frame_at(p, e->frames[own])->name) : "";
	if (!strncmp(text, "[task ", 6) && strlen(text) > 7) { /* "[task NAME]"; "[task]": asyncio's own */
		char *name = xcalloc(1, strlen(text) - 6);

		memcpy(name, text + 6, strlen(text) - 7);
		out->name = name;
	} else {
		out->name = xstrdup("");
	}
	for (uint32_t i = end; i-- > (nmarks ? own + 1 : 0);) /* its own coroutines */
		frame_of(p, profile__frame_at(p, e->frames[i]), &fr[n++]);
	for (uint32_t k = nmarks ? nmarks - 1 : 0; k-- > 0;) { /* each awaiter, the nearest first */
		frame_of(p, profile__frame_at(p, e->frames[marks[k]]), &fr[n++]);
		for (uint32_t i = marks[k + 1]; i-- > marks[k] + 1;)
			frame_of(p, profile__frame_at(p, e->frames[i]), &fr[n++]);
	}
	free(marks);
	out->nframes = n;
}

static int write_dump(struct dumper *d)
{
	size_t nthreads = profile__nstacks(d->prof), pos = 0, t = 0, nowned = 0;
	struct dump_thread *threads = xcalloc(nthreads ? nthreads : 1, sizeof(*threads));
	struct py_local **owned = NULL;
	size_t owned_cap = 0;
	struct dump_doc doc = { .pid = d->opts.pid, .comm = "" };
	char cgroup[4096], cid[128];
	struct dump_task *tasks = NULL;
	size_t ntasks = 0, tasks_cap = 0;
	struct profile_entry e;
	int err;

	while (profile__next(d->prof, &pos, &e) && t < nthreads) {
		struct dump_thread *th;

		if (e.labels.flags & LABEL_TASK) {
			xgrow(&tasks, &tasks_cap, ntasks + 1, sizeof(*tasks));
			task_of(d->prof, &e, &tasks[ntasks++]);
			continue;
		}
		th = &threads[t++];
		struct dump_frame *uf = xcalloc(e.nframes + 1, sizeof(*uf)), *kf = xcalloc(e.nframes + 1, sizeof(*kf));
		size_t nu = 0, nk = 0;

		for (uint32_t i = e.nframes; i-- > 0;) { /* innermost first */
			const struct frame *f = profile__frame_at(d->prof, e.frames[i]);

			if (f->kind == FRAME_MARK && offcpu_is_reason_frame(profile__str_at(d->prof, f->name)))
				continue;
			frame_of(d->prof, f, f->kind == FRAME_KERNEL ? &kf[nk++] : &uf[nu++]);
		}
		*th = (struct dump_thread){ .tid = e.labels.tid,
					    .name = profile__str_at(d->prof, e.labels.thread),
					    .gil_known = e.labels.flags & LABEL_GIL_KNOWN,
					    .gil_held = e.labels.flags & LABEL_GIL_HELD,
					    .reason = e.labels.offcpu,
					    .frames = uf,
					    .nframes = nu,
					    .kframes = kf,
					    .nkframes = nk };
		doc.comm = profile__str_at(d->prof, e.labels.comm);
		if (e.labels.python)
			doc.python = profile__str_at(d->prof, e.labels.python);
		if (d->opts.locals) {
			xgrow(&owned, &owned_cap, nowned + nu + 1, sizeof(*owned));
			read_locals(d, raw_of(d, th->tid), uf, nu, owned, &nowned);
		}
	}
	/* Where it runs: its container (the id as `docker ps` shortens it, and its name) and its own pid there. */
	if (proc_cgroup_path((pid_t)d->opts.pid, cgroup, sizeof(cgroup)) == 0 &&
	    *container_id_of(cgroup, cid, sizeof(cid))) {
		static char name[CONTAINER_NAME_MAX];

		doc.container_name = d->container_name;
		if (!doc.container_name) { /* -p: named as samples are (Kubernetes', else the runtime's) */
			struct container_names cn = { .src = &container_sources_host, .k8s_dir = K8S_CONTAINERS_DIR };

			container_names__of(&cn, cid, now_ns(), name, sizeof(name));
			container_names__free(&cn);
			doc.container_name = name[0] ? name : NULL;
		}
		cid[12] = '\0';
		doc.container = cid;
	}
	doc.ns_pid = proc_ns_pid((pid_t)d->opts.pid);
	qsort(threads, t, sizeof(*threads), cmp_tid);
	if (ntasks)
		qsort(tasks, ntasks, sizeof(*tasks), cmp_task);
	doc.threads = threads;
	doc.nthreads = t;
	doc.tasks = tasks;
	doc.ntasks = ntasks;
	if (d->opts.json)
		dump_write_json(stdout, &doc);
	else
		dump_write_text(stdout, &doc);
	err = stream_finish(stdout);
	for (size_t i = 0; i < t; i++) {
		for (size_t j = 0; j < threads[i].nframes; j++)
			free((void *)threads[i].frames[j].locals);
		free((void *)threads[i].frames);
		free((void *)threads[i].kframes);
	}
	for (size_t i = 0; i < nowned; i++) {
		py_locals_free(owned[i], PY_LOCALS_MAX);
		free(owned[i]);
	}
	free(owned);
	free(threads);
	for (size_t i = 0; i < ntasks; i++) {
		free((void *)tasks[i].name);
		free((void *)tasks[i].frames);
	}
	free(tasks);
	if (err) {
		err_msg("writing the dump failed");
		return -1;
	}
	return 0;
}

/* Per process: what capture and write_dump made for the one before. */
static void dumper_reset(struct dumper *d)
{
	ingest__free(d->ingest);
	profile__free(d->prof);
	d->ingest = NULL;
	d->prof = NULL;
	for (size_t i = 0; i < d->nraw; i++)
		free(d->raw[i].codes);
	d->nraw = 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The processes in cgroup directory dir (under mount) or below, by /proc, ascending; how many (at most max). */
static size_t container_pids(const char *mount, const char *dir, uint32_t *pids, size_t max, bool *more)
{
	DIR *proc = opendir("/proc");
	struct dirent *e;
	size_t n = 0;

	*more = false;
	while (proc && (e = readdir(proc))) {
		char cgroup[4096], *end;
		unsigned long pid = strtoul(e->d_name, &end, 10);

		if (*end || !pid || pid > UINT32_MAX || proc_cgroup_path((pid_t)pid, cgroup, sizeof(cgroup)) ||
		    !dump_cgroup_within(mount, dir, cgroup))
			continue;
		if (n == max) {
			*more = true;
			break;
		}
		pids[n++] = (uint32_t)pid;
	}
	if (proc)
		closedir(proc);
	qsort(pids, n, sizeof(*pids), cmp_u32);
	return n;
}

/* --container: the container's cgroup and name; 0, or -1 after one line. */
static int find_container(const char *arg, char *mount, size_t msize, struct container_match *m)
{
	char why[2048];

	if (cgroup2_mount("/proc/mounts", mount, msize)) {
		err_msg("no cgroup v2 hierarchy is mounted (needed by --container)");
		return -1;
	}
	if (container_find(&container_sources_host, mount, arg, m, why, sizeof(why))) {
		err_msg("--container: %s", why);
		return -1;
	}
	return 0;
}

/*
 * Every process of the container, one dump each (text: one after the
 * other; --json: one document, {"container", "name", "processes": [...]}).
 * A process that exits between the listing and its dump is left out.
 */
static int dump_container(struct dumper *d)
{
	static struct container_match m; /* 4 KiB of paths: not on the stack */
	uint32_t *pids = xcalloc(DUMP_CONTAINER_PROCS_MAX, sizeof(*pids));
	char mount[1024], a[1024];
	bool more;
	size_t n, done = 0;
	int rc = -1;

	if (find_container(d->opts.container, mount, sizeof(mount), &m))
		goto out;
	n = container_pids(mount, m.dir, pids, DUMP_CONTAINER_PROCS_MAX, &more);
	if (!n) {
		err_msg("--container: container %.12s has no process", m.id);
		goto out;
	}
	if (more)
		err_msg("--container: more than %d processes: the first %d dumped", DUMP_CONTAINER_PROCS_MAX,
			DUMP_CONTAINER_PROCS_MAX);
	d->container_name = m.name[0] ? m.name : NULL;
	if (d->opts.json) {
		printf("{\"container\": \"%.12s\", \"name\": ", m.id);
		json_str(stdout, text_escape(m.name, a, sizeof(a)));
		fputs(", \"processes\": [\n", stdout);
	}
	for (size_t i = 0; i < n; i++) {
		dumper_reset(d);
		d->opts.pid = pids[i];
		if (capture(d))
			continue; /* gone since the listing: its line is printed */
		if (done++)
			fputs(d->opts.json ? ",\n" : "\n", stdout);
		if (write_dump(d))
			goto out;
	}
	if (d->opts.json)
		fputs("]}\n", stdout);
	rc = done ? 0 : -1;
	if (stream_finish(stdout))
		rc = -1;
out:
	free(pids);
	return rc;
}

int dump_main(int argc, char **argv)
{
	struct dumper d = { 0 };
	int rc = 1, p = dump_args__parse(argc, argv, &d.opts);

	if (p)
		return p > 0 ? 0 : 2;
	if (!preflight_privileged()) {
		err_msg("needs root, or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE (try: sudo pyebpf dump ...)");
		goto out;
	}
	if (d.opts.container) {
		rc = dump_container(&d) ? 1 : 0;
		goto out;
	}
	if (preflight_targets(&d.opts.pid, 1))
		goto out;
	if (capture(&d) == 0 && write_dump(&d) == 0)
		rc = 0;
out:
	dumper_reset(&d);
	sampler__free(d.sampler);
	free(d.raw);
	dump_args__free(&d.opts);
	return rc;
}
