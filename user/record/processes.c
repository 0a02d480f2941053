// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/processes.h"

#include <stdlib.h>

#include "base/hashmap.h"
#include "base/util.h"
#include "record/request_labels.h"

/* How long an exited process's record stays for samples still in flight. */
#define EXIT_GRACE_NS (2 * 1000000000ULL)

struct processes {
	struct procs *syms;
	struct hashmap *by_pid; /* pid → struct process * */
};

struct processes *processes__new(struct procs *syms)
{
	struct processes *t = xcalloc(1, sizeof(*t));

	t->syms = syms;
	t->by_pid = hashmap__new();
	return t;
}

/* Every part but the mappings': what an exec makes wrong. */
static void process_parts_free(struct process *p)
{
	py_proc__free(p->python);
	proc_threads__free(p->threads);
	task_proc__free(p->tasks);
	unwind_session__free(p->native);
	request_proc__free(p->requests);
	p->requests = NULL;
	p->python = NULL;
	p->threads = NULL;
	p->tasks = NULL;
	p->native = NULL;
}

static void process_free(struct processes *t, struct process *p)
{
	process_parts_free(p);
	procs__drop(t->syms, p->maps);
	free(p);
}

void processes__free(struct processes *t)
{
	size_t pos = 0;
	struct process *p;

	if (!t)
		return;
	while (processes__next(t, &pos, &p))
		process_free(t, p);
	hashmap__free(t->by_pid);
	free(t);
}

struct process *processes__get(struct processes *t, uint32_t pid, uint64_t now)
{
	bool created;
	void **v = hashmap__put_ptr(t->by_pid, &pid, sizeof(pid), &created);
	struct process *p;

	if (created) {
		p = *v = xcalloc(1, sizeof(struct process));
		p->pid = pid;
	}
	p = *v;
	procs__get(t->syms, &p->maps, pid, now);
	return p;
}

struct process *processes__find(const struct processes *t, uint32_t pid)
{
	return hashmap__get_ptr(t->by_pid, &pid, sizeof(pid));
}

void processes__exec(struct processes *t, uint32_t pid)
{
	struct process *p = processes__find(t, pid);

	if (!p)
		return;
	process_parts_free(p);
	procs__exec(t->syms, p->maps);
	p->exited_ns = 0;
	p->py_main_tstate = 0; /* of the image it left */
}

void processes__exit(struct processes *t, uint32_t pid, uint64_t now)
{
	struct process *p = processes__find(t, pid);

	if (!p)
		return;
	p->exited_ns = now ? now : 1;
	procs__exit(p->maps, now);
}

void processes__gc(struct processes *t, uint64_t now, void (*gone)(uint32_t pid, void *ctx), void *ctx)
{
	size_t pos = 0, n = 0;
	uint32_t dead[256];
	struct process *p;

	/* Collect first: removing while iterating would skip entries; the
	 * rest waits for the next call. */
	while (n < ARRAY_SIZE(dead) && processes__next(t, &pos, &p))
		if (p->exited_ns && now - p->exited_ns > EXIT_GRACE_NS)
			dead[n++] = p->pid;
	for (size_t i = 0; i < n; i++) {
		p = hashmap__get_ptr(t->by_pid, &dead[i], sizeof(dead[i]));
		if (gone)
			gone(dead[i], ctx);
		process_free(t, p);
		hashmap__remove(t->by_pid, &dead[i], sizeof(dead[i]));
	}
	procs__sweep(t->syms, now);
}

bool processes__next(const struct processes *t, size_t *pos, struct process **p)
{
	const void *key;
	size_t len;
	void *v;

	if (!hashmap__next_ptr(t->by_pid, pos, &key, &len, &v))
		return false;
	*p = v;
	return true;
}
