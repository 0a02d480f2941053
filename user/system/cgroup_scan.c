// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "system/cgroup_scan.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"
#include "system/cgroups.h"

/* As deep as BPF looks for a target among a task's ancestors (bpf/shared.bpf.h's MAX_CGROUP_LEVEL). */
#define SCAN_MAX_DEPTH 32
#define SCAN_MAX_DIRS 200000

struct walk {
	struct cgroup_scan *s;
	size_t mount_len;
	size_t dirs;
};

static void found(struct cgroup_found **v, size_t *n, size_t *cap, const char *key, const char *dir, int depth)
{
	struct stat st;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return;
	xgrow(v, cap, *n + 1, sizeof(**v));
	(*v)[(*n)++] = (struct cgroup_found){ xstrdup(key), xstrdup(dir), (uint64_t)st.st_ino, depth };
}

static void walk(struct walk *w, const char *dir, int depth, bool in_pod)
{
	DIR *d;
	struct dirent *e;

	if (depth > SCAN_MAX_DEPTH)
		return;
	d = opendir(dir);
	while (d && (e = readdir(d)) && w->dirs < SCAN_MAX_DIRS) {
		char key[128], *sub;
		bool pod = in_pod;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		w->dirs++;
		sub = xasprintf("%s/%s", dir, e->d_name);
		/* The component's own id: "docker-ID.scope", a bare 64-hex "ID". */
		if (*container_id_of(e->d_name, key, sizeof(key)))
			found(&w->s->containers, &w->s->ncontainers, &w->s->ccap, key, sub, depth);
		/* A pod's group is the first of its path that names the pod; what is below is its containers'. */
		if (!pod && *k8s_pod_uid_of(sub + w->mount_len, key, sizeof(key))) {
			found(&w->s->pods, &w->s->npods, &w->s->pcap, key, sub, depth);
			pod = true;
		}
		walk(w, sub, depth + 1, pod);
		free(sub);
	}
	if (d)
		closedir(d);
}

static int by_key_depth(const void *a, const void *b)
{
	const struct cgroup_found *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : x->depth - y->depth;
}

/* Sorted by key, the shallowest of each key kept. */
static void unique(struct cgroup_found *v, size_t *n)
{
	size_t k = 0;

	if (!*n)
		return;
	qsort(v, *n, sizeof(*v), by_key_depth);
	for (size_t i = 0; i < *n; i++) {
		if (k && !strcmp(v[k - 1].key, v[i].key)) {
			free(v[i].key);
			free(v[i].dir);
			continue;
		}
		v[k++] = v[i];
	}
	*n = k;
}

int cgroup_scan__run(const char *mount, struct cgroup_scan *s)
{
	struct walk w = { .s = s, .mount_len = strlen(mount) };
	DIR *d = opendir(mount);

	memset(s, 0, sizeof(*s));
	if (!d)
		return -1;
	closedir(d);
	walk(&w, mount, 0, false);
	unique(s->containers, &s->ncontainers);
	unique(s->pods, &s->npods);
	return 0;
}

static void free_all(struct cgroup_found *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].dir);
	}
	free(v);
}

void cgroup_scan__free(struct cgroup_scan *s)
{
	free_all(s->containers, s->ncontainers);
	free_all(s->pods, s->npods);
	memset(s, 0, sizeof(*s));
}

static const struct cgroup_found *lookup(const struct cgroup_found *v, size_t n, const char *key)
{
	for (size_t lo = 0, hi = n; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(key, v[mid].key);

		if (!c)
			return &v[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

const struct cgroup_found *cgroup_scan__container(const struct cgroup_scan *s, const char *id)
{
	return lookup(s->containers, s->ncontainers, id);
}

const struct cgroup_found *cgroup_scan__pod(const struct cgroup_scan *s, const char *uid)
{
	return lookup(s->pods, s->npods, uid);
}
