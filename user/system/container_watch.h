/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * --container follows a container, not the cgroup it had at the start:
 * `docker restart` gives the same id a new cgroup (the same directory, a
 * new inode, so a new cgroup id), and a container recreated under its
 * name (`docker rm -f web && docker run --name web ...`) has a new id too.
 * The poll loop ticks this often; a tick costs one stat per container
 * while they run (every CHECK_NS), the same stat of the old directory
 * while one is gone (a restart is back there), and a full container_find()
 * by the argument every FIND_NS (a recreate is found by its name; an id's
 * start follows the whole id it stood for). No libbpf: the caller applies
 * each change to BPF's target_cgroups and says its line.
 */
#ifndef PYEBPF_CONTAINER_WATCH_H
#define PYEBPF_CONTAINER_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "system/container_find.h"

/* A running container's directory is looked at this often: a restart's new cgroup is found within it. */
#define CONTAINER_WATCH_CHECK_NS (250 * 1000000ULL)
/* A gone container is looked for by its argument (every runtime's state, the cgroup tree) this often. */
#define CONTAINER_WATCH_FIND_NS (1000 * 1000000ULL)
/* How long a gone container may take to come back before it has exited: a `docker restart` makes its
 * new cgroup well within it once the old process has died. */
#define CONTAINER_WATCH_GRACE_NS (3000 * 1000000ULL)

enum container_event_kind {
	CONTAINER_STOPPED, /* its cgroup went: old_cgroup out of the targets */
	CONTAINER_BACK,    /* the same container again (restarted): new_cgroup in */
	CONTAINER_NEW,     /* a new container under the argument's name (recreated): new_cgroup in */
	CONTAINER_EXITED,  /* every container gone past the grace, and the recording ends on it */
};

struct container_event {
	enum container_event_kind kind;
	uint64_t old_cgroup; /* to take out of the targets; 0: none */
	uint64_t new_cgroup; /* to put in; 0: none */
	char line[768];      /* what to say, escaped, without "pyebpf: " */
};

struct container_watch;

/* Containers found under mount (the cgroup2 mount), looked for again in src's state. */
struct container_watch *container_watch__new(const struct runtime_sources *src, const char *mount);
void container_watch__free(struct container_watch *w); /* accepts NULL */
/* A --container argument and what it named at the start. */
void container_watch__add(struct container_watch *w, const char *arg, const struct container_match *m);
size_t container_watch__count(const struct container_watch *w);
/*
 * Watching begins at start_ns (monotonic; times in the lines are from it).
 * ends: once every container has been gone for the grace, the recording
 * ends (a CONTAINER_EXITED event, then container_watch__ended()); else it
 * waits for them for as long as it runs (--continuous, top, other targets).
 */
void container_watch__begin(struct container_watch *w, uint64_t start_ns, bool ends);
/* What changed since the last tick, in order (*n of them; valid until the next tick). */
const struct container_event *container_watch__tick(struct container_watch *w, uint64_t now, size_t *n);
/* Every container exited and the recording ends (after CONTAINER_EXITED). */
bool container_watch__ended(const struct container_watch *w);

#endif
