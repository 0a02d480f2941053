/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Which container a --container argument names, as `docker ps` shows it:
 * a whole id, else a name (docker's, podman's, nerdctl's: runtimes.h reads
 * them from each runtime's state), else the start of an id, at least 4 hex
 * digits, the order docker itself tries. Ids are those of the runtimes'
 * state and those of running containers' cgroups (cgroup_scan.h), so a
 * container of a runtime whose state is not read here (CRI-O, Kubernetes'
 * containerd) is found by its id, and a parent group such as /docker is
 * never taken for one. Each refusal is one line that says what would work:
 * the candidates of an ambiguous argument, the running containers when
 * nothing matched.
 */
#ifndef PYEBPF_CONTAINER_FIND_H
#define PYEBPF_CONTAINER_FIND_H

#include <stddef.h>
#include <stdint.h>

#include "system/runtimes.h"

/* Shortest id prefix taken: fewer hex digits match too much to mean one. */
#define CONTAINER_MIN_PREFIX 4
/* Running containers an unknown argument's error line lists. */
#define CONTAINER_LIST_MAX 10

/* The host's sources: the machine's root and the running daemons' ("/", "/proc"). */
extern const struct runtime_sources container_sources_host;

struct container_match {
	char id[128];                  /* the whole id */
	char name[CONTAINER_NAME_MAX]; /* "" when no runtime's state names it */
	enum runtime_kind runtime;
	char dir[4096];     /* its cgroup directory */
	uint64_t cgroup_id; /* that directory's id, as BPF sees it */
};

/* A running container's cgroup, from the state of src and the cgroups under mount. 0, or -1 with one
 * line in why. */
int container_find(const struct runtime_sources *src, const char *mount, const char *arg, struct container_match *m,
		   char *why, size_t whylen);

/*
 * The id of the container named `name` in the runtimes' state now, running
 * or not (`report --container NAME`: samples keep ids, not names). 1 with
 * id set; 0 when no container has that name (why says so, and names state
 * that could not be read); -1 when several have (why lists them).
 */
int container_id_by_name(const struct runtime_sources *src, const char *name, char *id, size_t idlen, char *why,
			 size_t whylen);

#endif
