// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "system/container_find.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "system/why_line.h"
#include "system/cgroup_scan.h"

const struct runtime_sources container_sources_host = { .root = "/", .proc = "/proc" };

/* A container known by its runtime's state, its cgroup, or both. */
struct cand {
	const char *id;
	const struct runtime_container *rt; /* NULL: only its cgroup is known */
	const struct cgroup_found *cg;      /* NULL: not running */
};

struct known {
	struct runtime_list rt;
	struct cgroup_scan cg;
	struct cand *v; /* sorted by id */
	size_t n;
};

/* Both lists are sorted by id: merged, one candidate per id. */
static void merge(struct known *k)
{
	size_t i = 0, j = 0;

	k->v = xcalloc(k->rt.n + k->cg.ncontainers + 1, sizeof(*k->v));
	while (i < k->rt.n || j < k->cg.ncontainers) {
		int c = i >= k->rt.n ? 1 : j >= k->cg.ncontainers ? -1 : strcmp(k->rt.v[i].id, k->cg.containers[j].key);
		struct cand *x = &k->v[k->n++];

		if (c <= 0) {
			x->rt = &k->rt.v[i++];
			x->id = x->rt->id;
		}
		if (c >= 0) {
			x->cg = &k->cg.containers[j++];
			x->id = x->cg->key;
		}
	}
}

static void known_free(struct known *k)
{
	runtimes__free(&k->rt);
	cgroup_scan__free(&k->cg);
	free(k->v);
}

/* "web (5b84082deb38)", "5b84082deb38" without a name; with its runtime when names collide. */
static void say_cand(struct why_line *l, const struct cand *c, bool runtime)
{
	if (c->rt && c->rt->name[0] && runtime)
		why_add(l, "%s (%s %.12s)", c->rt->name, runtime_kind_name(c->rt->runtime), c->id);
	else if (c->rt && c->rt->name[0])
		why_add(l, "%s (%.12s)", c->rt->name, c->id);
	else
		why_add(l, "%.12s", c->id);
}

/* Named ones by name (then id), then the others by id. */
static int by_shown(const void *a, const void *b)
{
	const struct cand *x = *(const struct cand *const *)a, *y = *(const struct cand *const *)b;
	const char *nx = x->rt && x->rt->name[0] ? x->rt->name : NULL,
		   *ny = y->rt && y->rt->name[0] ? y->rt->name : NULL;

	if (nx && ny && strcmp(nx, ny) != 0)
		return strcmp(nx, ny);
	if (!nx != !ny)
		return nx ? -1 : 1;
	return strcmp(x->id, y->id);
}

/* Up to CONTAINER_LIST_MAX of the candidates `pick` keeps, sorted, ", "-separated, "and N more". */
static void say_list(struct why_line *l, const struct known *k, bool (*pick)(const struct cand *c, const void *arg),
		     const void *arg, bool runtime)
{
	const struct cand **v = xcalloc(k->n + 1, sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < k->n; i++)
		if (pick(&k->v[i], arg))
			v[n++] = &k->v[i];
	qsort(v, n, sizeof(*v), by_shown);
	for (size_t i = 0; i < n && i < CONTAINER_LIST_MAX; i++) {
		why_add(l, "%s", i ? ", " : "");
		say_cand(l, v[i], runtime);
	}
	if (n > CONTAINER_LIST_MAX)
		why_add(l, " and %zu more", n - CONTAINER_LIST_MAX);
	free(v);
}

static bool is_running(const struct cand *c, const void *arg)
{
	(void)arg;
	return c->cg != NULL;
}

static bool has_name(const struct cand *c, const void *arg)
{
	return c->rt && !strcmp(c->rt->name, arg);
}

static bool has_prefix(const struct cand *c, const void *arg)
{
	return !strncmp(c->id, arg, strlen(arg));
}

static size_t count(const struct known *k, bool (*pick)(const struct cand *c, const void *arg), const void *arg,
		    const struct cand **one)
{
	size_t n = 0;

	for (size_t i = 0; i < k->n; i++)
		if (pick(&k->v[i], arg)) {
			*one = &k->v[i];
			n++;
		}
	return n;
}

/* The argument lowercased when it is all hex digits (as ids are written); "" when it is not. */
static void hex_form(const char *arg, char *out, size_t size)
{
	size_t i;

	for (i = 0; arg[i] && i + 1 < size; i++) {
		if (!isxdigit((unsigned char)arg[i])) {
			out[0] = '\0';
			return;
		}
		out[i] = (char)tolower((unsigned char)arg[i]);
	}
	out[arg[i] ? 0 : i] = '\0';
}

static void say_unreadable(struct why_line *l, const struct known *k)
{
	if (k->rt.unreadable[0])
		why_add(l, " (%s could not be read: names need root)", k->rt.unreadable);
}

static void unknown(struct why_line *l, const struct known *k, const char *arg, const char *hex, const char *mount)
{
	why_add(l, "no container named '%s'", arg);
	if (*hex && strlen(hex) < CONTAINER_MIN_PREFIX)
		why_add(l, " (an id takes %d or more of its hex digits)", CONTAINER_MIN_PREFIX);
	else if (*hex)
		why_add(l, " or with an id starting with it");
	say_unreadable(l, k);
	if (!k->cg.ncontainers) {
		why_add(l, "; no container runs here (no container's cgroup under %s)", mount);
		return;
	}
	why_add(l, "; running here: ");
	say_list(l, k, is_running, NULL, false);
}

/* The candidate arg names, or NULL after one line in l. */
static const struct cand *match(struct why_line *l, const struct known *k, const char *arg, const char *mount)
{
	const struct cand *one = NULL;
	char hex[sizeof(((struct container_match *)0)->id)];
	size_t n;

	hex_form(arg, hex, sizeof(hex));
	/* A whole id, then a name, then the start of an id: docker's own order. */
	for (size_t i = 0; *hex && i < k->n; i++)
		if (!strcmp(k->v[i].id, hex))
			return &k->v[i];
	n = count(k, has_name, arg, &one);
	if (n == 1)
		return one;
	if (n > 1) {
		why_add(l, "%zu containers are named '%s': ", n, arg);
		say_list(l, k, has_name, arg, true);
		why_add(l, " (give the id of one)");
		return NULL;
	}
	if (strlen(hex) >= CONTAINER_MIN_PREFIX) {
		n = count(k, has_prefix, hex, &one);
		if (n == 1)
			return one;
		if (n > 1) {
			why_add(l, "'%s' is the start of %zu container ids: ", arg, n);
			say_list(l, k, has_prefix, hex, false);
			why_add(l, " (give more of the id)");
			return NULL;
		}
	}
	unknown(l, k, arg, hex, mount);
	return NULL;
}

int container_find(const struct runtime_sources *src, const char *mount, const char *arg, struct container_match *m,
		   char *why, size_t whylen)
{
	struct why_line l = why_line(why, whylen);
	struct known k = { 0 };
	const struct cand *c;
	int ret = -1;

	memset(m, 0, sizeof(*m));
	/* `docker inspect` shows a name as "/web". */
	if (arg[0] == '/')
		arg++;
	runtimes__read(src, &k.rt);
	cgroup_scan__run(mount, &k.cg);
	merge(&k);
	c = match(&l, &k, arg, mount);
	if (c && !c->cg) {
		why_add(&l, "container '%s' (%s %.12s) ", arg, runtime_kind_name(c->rt->runtime), c->id);
		if (c->rt->running == 1)
			why_add(&l, "runs, its runtime says, but no cgroup under %s holds its id", mount);
		else
			why_add(&l, "is not running (no cgroup under %s holds its id)", mount);
	} else if (c) {
		snprintf(m->id, sizeof(m->id), "%s", c->id);
		if (c->rt) {
			snprintf(m->name, sizeof(m->name), "%s", c->rt->name);
			m->runtime = c->rt->runtime;
		} else {
			m->runtime = RUNTIME_CGROUP;
		}
		snprintf(m->dir, sizeof(m->dir), "%s", c->cg->dir);
		m->cgroup_id = c->cg->id;
		ret = 0;
	}
	known_free(&k);
	return ret;
}

int container_id_by_name(const struct runtime_sources *src, const char *name, char *id, size_t idlen, char *why,
			 size_t whylen)
{
	struct why_line l = why_line(why, whylen);
	struct known k = { 0 };
	const struct cand *one = NULL;
	size_t n;

	if (name[0] == '/')
		name++;
	runtimes__read(src, &k.rt);
	merge(&k);
	n = count(&k, has_name, name, &one);
	if (n == 1)
		snprintf(id, idlen, "%s", one->id);
	else if (n > 1) {
		why_add(&l, "%zu containers are named '%s': ", n, name);
		say_list(&l, &k, has_name, name, true);
		why_add(&l, " (give the id of one)");
	} else {
		why_add(&l, "no container is named '%s' here now", name);
		say_unreadable(&l, &k);
	}
	known_free(&k);
	return n == 1 ? 1 : n > 1 ? -1 : 0;
}
