// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"

#define REFRESH_NS 1000000000ULL   /* names found are checked again after this */
#define RETRY_NS (50 * 1000000ULL) /* a thread without a Python name yet */

struct thread_info {
	uint32_t name;
	bool python;        /* the name came from Python */
	uint64_t looked_ns; /* OS name read */
	uint64_t asked_ns;  /* Python name looked for (0: never) */
	struct py_thread_hint hint;
};

struct threads {
	struct profile *prof;
};

/* A process's threads: its part, kept in its record of the process table. */
struct proc_threads {
	struct hashmap *by_tid; /* tid → struct thread_info * */
};

struct threads *threads__new(struct profile *prof)
{
	struct threads *t = xcalloc(1, sizeof(*t));

	t->prof = prof;
	return t;
}

void threads__free(struct threads *t)
{
	free(t);
}

void proc_threads__free(struct proc_threads *pt)
{
	if (!pt)
		return;
	hashmap__free_values(pt->by_tid, free);
	free(pt);
}

static uint32_t os_name(struct threads *t, uint32_t pid, uint32_t tid, uint32_t fallback)
{
	char path[64], name[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return fallback;
	if (!fgets(name, sizeof(name), f))
		name[0] = '\0';
	fclose(f);
	name[strcspn(name, "\n")] = '\0';
	return name[0] ? profile__str(t->prof, name) : fallback;
}

static struct thread_info *info(struct proc_threads **slot, uint32_t tid, bool *created)
{
	void **v;

	if (!*slot) {
		*slot = xcalloc(1, sizeof(**slot));
		(*slot)->by_tid = hashmap__new();
	}
	v = hashmap__put_ptr((*slot)->by_tid, &tid, sizeof(tid), created);

	if (*created)
		*v = xcalloc(1, sizeof(struct thread_info));
	return *v;
}

uint32_t threads__name(struct threads *t, struct proc_threads **slot, uint32_t pid, uint32_t tid, uint32_t comm,
		       bool own_comm, uint64_t now, bool *ask_python, bool *from_python)
{
	bool created;
	struct thread_info *ti = info(slot, tid, &created);

	if (!ti->python && own_comm) {
		ti->name = comm; /* what /proc would say, without opening it per thread */
	} else if (!ti->python && (created || now - ti->looked_ns > REFRESH_NS)) {
		ti->name = os_name(t, pid, tid, ti->name ? ti->name : comm);
		ti->looked_ns = now;
	}
	*from_python = ti->python;
	*ask_python = !ti->asked_ns || now - ti->asked_ns > (ti->python ? REFRESH_NS : RETRY_NS);
	return ti->name;
}

struct py_thread_hint *threads__hint(struct proc_threads **slot, uint32_t tid)
{
	bool created;

	return &info(slot, tid, &created)->hint;
}

void threads__set_python_name(struct threads *t, struct proc_threads **slot, uint32_t tid, const char *name,
			      uint64_t now)
{
	bool created;
	struct thread_info *ti = info(slot, tid, &created);

	ti->asked_ns = now ? now : 1;
	if (name) {
		ti->name = profile__str(t->prof, name);
		ti->python = true;
	}
}
