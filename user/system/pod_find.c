// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "system/pod_find.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "system/why_line.h"
#include "system/cgroup_scan.h"

/* A namespace (a DNS label) or a pod name (a DNS subdomain): lowercase letters, digits, '-' and '.'.
 * Neither holds '_', which is what lets kubelet join them with it. */
static bool k8s_name(const char *s, size_t n)
{
	if (!n || n > 253)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

/* "NAMESPACE_NAME_UID": its parts, or false when the entry is not one of kubelet's. */
static bool log_dir_parts(const char *e, const char **ns, size_t *nsn, const char **name, size_t *namen, char uid[37])
{
	const char *first = strchr(e, '_'), *last = strrchr(e, '_');

	if (!first || first == last || strlen(last + 1) != 36)
		return false;
	*ns = e;
	*nsn = (size_t)(first - e);
	*name = first + 1;
	*namen = (size_t)(last - first - 1);
	for (int i = 0; i < 36; i++) {
		char c = last[1 + i];

		if (!(isxdigit((unsigned char)c) || c == '-'))
			return false;
		uid[i] = (char)tolower((unsigned char)c);
	}
	uid[36] = '\0';
	return k8s_name(*ns, *nsn) && k8s_name(*name, *namen);
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "; running here: ns/a, ns/b and 3 more", the pods of pods_dir that have a cgroup. */
static void say_running(struct why_line *l, const char *pods_dir, const struct cgroup_scan *s)
{
	DIR *d = opendir(pods_dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;

	while (d && (e = readdir(d))) {
		const char *ns, *name;
		size_t nsn, namen;
		char uid[37];

		if (log_dir_parts(e->d_name, &ns, &nsn, &name, &namen, uid) && cgroup_scan__pod(s, uid)) {
			xgrow(&names, &cap, n + 1, sizeof(*names));
			names[n++] = xasprintf("%.*s/%.*s", (int)nsn, ns, (int)namen, name);
		}
	}
	if (d)
		closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_str);
	if (!n)
		why_add(l, "; no pod runs here");
	for (size_t i = 0; i < n; i++) {
		if (i < POD_LIST_MAX)
			why_add(l, "%s%s", i ? ", " : "; running here: ", names[i]);
		free(names[i]);
	}
	if (n > POD_LIST_MAX)
		why_add(l, " and %zu more", n - POD_LIST_MAX);
	free(names);
}

static size_t containers_below(const struct cgroup_scan *s, const char *dir)
{
	size_t n = 0, len = strlen(dir);

	for (size_t i = 0; i < s->ncontainers; i++)
		if (!strncmp(s->containers[i].dir, dir, len) && s->containers[i].dir[len] == '/')
			n++;
	return n;
}

int pod_find(const char *pods_dir, const char *mount, const char *arg, struct pod_match **v, size_t *n, char *why,
	     size_t whylen)
{
	struct why_line l = why_line(why, whylen);
	const char *slash = strchr(arg, '/');
	struct cgroup_scan s;
	size_t cap = 0, known = 0;
	char first_uid[37] = "";
	struct dirent *e;
	DIR *d;

	*v = NULL;
	*n = 0;
	if (!slash || !k8s_name(arg, (size_t)(slash - arg)) || !k8s_name(slash + 1, strlen(slash + 1))) {
		why_add(&l, "'%s' is not NAMESPACE/NAME (as kubectl get pods -n NAMESPACE shows NAME)", arg);
		return -1;
	}
	d = opendir(pods_dir);
	if (!d) {
		why_add(&l, "cannot list %s, where kubelet keeps a directory per pod (is this a Kubernetes node?): %s",
			pods_dir, strerror(errno));
		return -1;
	}
	cgroup_scan__run(mount, &s);
	while ((e = readdir(d))) {
		const char *ns, *name;
		size_t nsn, namen;
		char uid[37];
		const struct cgroup_found *pod;

		if (!log_dir_parts(e->d_name, &ns, &nsn, &name, &namen, uid) || nsn != (size_t)(slash - arg) ||
		    strncmp(ns, arg, nsn) != 0 || namen != strlen(slash + 1) || strncmp(name, slash + 1, namen) != 0)
			continue;
		if (!known++)
			snprintf(first_uid, sizeof(first_uid), "%s", uid);
		pod = cgroup_scan__pod(&s, uid);
		if (!pod)
			continue; /* an earlier pod of that name, whose logs kubelet has not removed yet */
		xgrow(v, &cap, *n + 1, sizeof(**v));
		snprintf((*v)[*n].uid, sizeof((*v)[*n].uid), "%s", uid);
		snprintf((*v)[*n].dir, sizeof((*v)[*n].dir), "%s", pod->dir);
		(*v)[*n].cgroup_id = pod->id;
		(*v)[*n].ncontainers = containers_below(&s, pod->dir);
		(*n)++;
	}
	closedir(d);
	if (!*n && known)
		why_add(&l, "pod '%s' (uid %s) has no cgroup under %s: it does not run on this node now", arg,
			first_uid, mount);
	else if (!*n) {
		why_add(&l, "no pod '%s' on this node (no %s/%.*s_%s_UID)", arg, pods_dir, (int)(slash - arg), arg,
			slash + 1);
		say_running(&l, pods_dir, &s);
	}
	cgroup_scan__free(&s);
	if (*n)
		return 0;
	free(*v);
	*v = NULL;
	return -1;
}
