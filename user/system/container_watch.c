// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "system/container_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/escape.h"
#include "base/util.h"

/* Gone this long, a container is looked for by its argument less often: a
 * long absence costs a /proc and cgroup tree walk every few seconds, not every second. */
#define SLOW_AFTER_NS (60 * 1000000000ULL)
#define FIND_SLOW_NS (5 * 1000000000ULL)

struct watched {
	char follow[128];         /* what container_find() is asked again: the name, or the whole id */
	struct container_match m; /* the container now (or last): id, name, directory, cgroup id */
	uint64_t old_cgroup;      /* the cgroup it had when it went */
	bool present;             /* m.dir holds m.cgroup_id */
	uint64_t seen_ns;         /* the last look that found it */
	uint64_t gone_ns;         /* the look that found it gone */
	uint64_t next_check_ns;   /* the next stat of m.dir */
	uint64_t next_find_ns;    /* the next container_find(), while gone */
};

struct container_watch {
	struct runtime_sources src;
	char mount[1024];
	struct watched *v;
	size_t n, cap;
	uint64_t start_ns;
	bool ends, ended;
	struct container_event *ev; /* this tick's; room for two per container and the end */
	size_t nev;
};

struct container_watch *container_watch__new(const struct runtime_sources *src, const char *mount)
{
	struct container_watch *w = xcalloc(1, sizeof(*w));

	w->src = *src;
	snprintf(w->mount, sizeof(w->mount), "%s", mount);
	return w;
}

void container_watch__free(struct container_watch *w)
{
	if (!w)
		return;
	free(w->v);
	free(w->ev);
	free(w);
}

void container_watch__add(struct container_watch *w, const char *arg, const struct container_match *m)
{
	struct watched *t;
	const char *a = arg[0] == '/' ? arg + 1 : arg; /* as container_find() reads it */

	xgrow(&w->v, &w->cap, w->n + 1, sizeof(*w->v));
	t = &w->v[w->n++];
	memset(t, 0, sizeof(*t));
	t->m = *m;
	t->present = true;
	/* A name stands for whichever container has it (a recreate is a new id under the same name);
	 * an id, or the start of one, for that container alone: a new container whose id starts the
	 * same way is another's. */
	snprintf(t->follow, sizeof(t->follow), "%s",
		 m->name[0] && !strcmp(a, m->name) && strcmp(a, m->id) != 0 ? m->name : m->id);
}

size_t container_watch__count(const struct container_watch *w)
{
	return w->n;
}

void container_watch__begin(struct container_watch *w, uint64_t start_ns, bool ends)
{
	w->start_ns = start_ns;
	w->ends = ends;
	w->ev = xcalloc(2 * w->n + 1, sizeof(*w->ev));
	for (size_t i = 0; i < w->n; i++) {
		w->v[i].seen_ns = start_ns;
		w->v[i].next_check_ns = start_ns + CONTAINER_WATCH_CHECK_NS;
	}
}

/* "web (5b84082deb38)", or "5b84082deb38" unnamed: escaped, the name comes from a runtime's state. */
static const char *shown(const struct container_match *m, char *buf, size_t size)
{
	char name[4 * CONTAINER_NAME_MAX];

	if (m->name[0])
		snprintf(buf, size, "%s (%.12s)", text_escape(m->name, name, sizeof(name)), m->id);
	else
		snprintf(buf, size, "%.12s", m->id);
	return buf;
}

static struct container_event *event(struct container_watch *w, enum container_event_kind kind)
{
	struct container_event *e = &w->ev[w->nev++];

	memset(e, 0, sizeof(*e));
	e->kind = kind;
	return e;
}

/* The cgroup id a directory holds now (its inode); 0: none there. */
static uint64_t dir_cgroup(const char *dir)
{
	struct stat st;

	return stat(dir, &st) || !S_ISDIR(st.st_mode) ? 0 : (uint64_t)st.st_ino;
}

static void went(struct container_watch *w, struct watched *t, uint64_t now)
{
	struct container_event *e = event(w, CONTAINER_STOPPED);
	char who[4 * CONTAINER_NAME_MAX + 32];

	t->present = false;
	t->gone_ns = now;
	t->old_cgroup = t->m.cgroup_id;
	t->next_find_ns = now + CONTAINER_WATCH_FIND_NS;
	e->old_cgroup = t->old_cgroup;
	snprintf(e->line, sizeof(e->line), "container %s stopped at %.1f s: waiting for it to start again",
		 shown(&t->m, who, sizeof(who)), (double)(now - w->start_ns) / 1e9);
}

/* Back as m: the same container restarted (its id), or a new one under the name followed. */
static void back(struct container_watch *w, struct watched *t, const struct container_match *m, uint64_t now)
{
	bool same = !strcmp(m->id, t->m.id);
	struct container_event *e = event(w, same ? CONTAINER_BACK : CONTAINER_NEW);
	char who[4 * CONTAINER_NAME_MAX + 32];
	char when[48];

	/* Gone and back between two looks: it was away for less than the time between them. */
	if (now == t->gone_ns)
		snprintf(when, sizeof(when), "within %.2f s", (double)(now - t->seen_ns) / 1e9);
	else
		snprintf(when, sizeof(when), "after %.1f s", (double)(now - t->gone_ns) / 1e9);
	e->new_cgroup = m->cgroup_id;
	shown(&t->m, who, sizeof(who));
	if (same)
		snprintf(e->line, sizeof(e->line), "container %s started again %s%s: recording it", who, when,
			 m->cgroup_id != t->old_cgroup ? " (a new cgroup)" : "");
	else
		snprintf(e->line, sizeof(e->line), "container %s is back as a new container %.12s %s: recording it",
			 who, m->id, when);
	t->m = *m;
	t->present = true;
	t->seen_ns = now;
	t->next_check_ns = now + CONTAINER_WATCH_CHECK_NS;
}

/* The same directory again (a restart keeps the id, so the path): the cheap look, every check. */
static bool back_in_place(struct container_watch *w, struct watched *t, uint64_t id, uint64_t now)
{
	struct container_match m = t->m;

	if (!id)
		return false;
	m.cgroup_id = id;
	back(w, t, &m, now);
	return true;
}

/* The argument looked up again: a recreate's new id, or the same id in another directory. */
static void find_again(struct container_watch *w, struct watched *t, uint64_t now)
{
	struct container_match m;
	char why[2048];

	t->next_find_ns = now + (now - t->gone_ns >= SLOW_AFTER_NS ? FIND_SLOW_NS : CONTAINER_WATCH_FIND_NS);
	if (!container_find(&w->src, w->mount, t->follow, &m, why, sizeof(why)))
		back(w, t, &m, now);
}

static void check(struct container_watch *w, struct watched *t, uint64_t now)
{
	uint64_t id;

	if (now >= t->next_check_ns) {
		t->next_check_ns = now + CONTAINER_WATCH_CHECK_NS;
		id = dir_cgroup(t->m.dir);
		if (t->present) {
			if (id == t->m.cgroup_id) {
				t->seen_ns = now;
				return;
			}
			went(w, t, now);
			/* Replaced between two looks: already back, in a new cgroup. */
			back_in_place(w, t, id, now);
			return;
		}
		if (back_in_place(w, t, id, now))
			return;
	}
	if (!t->present && now >= t->next_find_ns)
		find_again(w, t, now);
}

/* Every container gone for the grace or longer. */
static bool all_exited(const struct container_watch *w, uint64_t now)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].present || now - w->v[i].gone_ns < CONTAINER_WATCH_GRACE_NS)
			return false;
	return w->n > 0;
}

static void exited(struct container_watch *w)
{
	struct container_event *e = event(w, CONTAINER_EXITED);
	size_t len = (size_t)snprintf(e->line, sizeof(e->line), "container%s ", w->n > 1 ? "s" : "");

	for (size_t i = 0; i < w->n && len < sizeof(e->line); i++) {
		char who[4 * CONTAINER_NAME_MAX + 32];

		len += (size_t)snprintf(e->line + len, sizeof(e->line) - len, "%s%s", i ? ", " : "",
					shown(&w->v[i].m, who, sizeof(who)));
	}
	if (len < sizeof(e->line))
		snprintf(e->line + len, sizeof(e->line) - len, " exited: the recording ends");
	w->ended = true;
}

const struct container_event *container_watch__tick(struct container_watch *w, uint64_t now, size_t *n)
{
	w->nev = 0;
	if (!w->ended) {
		for (size_t i = 0; i < w->n; i++)
			check(w, &w->v[i], now);
		if (w->ends && all_exited(w, now))
			exited(w);
	}
	*n = w->nev;
	return w->ev;
}

bool container_watch__ended(const struct container_watch *w)
{
	return w->ended;
}
