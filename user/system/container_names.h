/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The name a container is known by, from its id, for the labels of its
 * samples: the one `kubectl` shows (kubelet's log links, cgroups.h:
 * k8s_container_of_id), else the one `docker ps` shows (docker's, podman's,
 * nerdctl's state: runtimes.h). A name survives a restart, which changes
 * the id: a series named by it goes on. Every runtime's state is read again
 * only for an id it did not know, at most once a second, so a host that
 * starts containers without end costs one read a second.
 */
#ifndef PYEBPF_CONTAINER_NAMES_H
#define PYEBPF_CONTAINER_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "system/runtimes.h"

/* Runtimes' state read again at most this often. */
#define CONTAINER_NAMES_REREAD_NS 1000000000ULL

struct container_names {
	const struct runtime_sources *src;
	const char *k8s_dir; /* K8S_CONTAINERS_DIR, or a test's */
	struct runtime_list list;
	uint64_t read_ns; /* when list was read; 0: never */
};

/* The name of the container with this id (now: CLOCK_MONOTONIC ns) into out, or "". Returns 1 when the
 * answer is final (named, or not named by state read after the id was first asked), 0 when a later call
 * may know more (state read too recently to be read again). */
int container_names__of(struct container_names *c, const char *id, uint64_t now, char *out, size_t size);
void container_names__free(struct container_names *c);

#endif
