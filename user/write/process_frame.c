// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "process_frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hashmap.h"
#include "../util.h"

struct process_split {
	enum process_frames mode;
	struct hashmap *pids_of; /* comm string id → distinct pids */
	struct hashmap *names;   /* pid → the name the process gave itself (string id) */
};

int process_frames_parse(const char *arg, enum process_frames *mode)
{
	if (!strcmp(arg, "auto"))
		*mode = PROCESSES_AUTO;
	else if (!strcmp(arg, "each"))
		*mode = PROCESSES_EACH;
	else if (!strcmp(arg, "merged"))
		*mode = PROCESSES_MERGED;
	else {
		err_msg("invalid value '%s' for --processes (expected auto, each or merged)", arg);
		return -1;
	}
	return 0;
}

struct process_split *process_split__new(const struct profile *p, enum process_frames mode)
{
	struct process_split *s = xcalloc(1, sizeof(*s));
	struct hashmap *seen = hashmap__new();
	struct profile_entry e;
	size_t pos = 0;

	s->mode = mode;
	s->pids_of = hashmap__new();
	s->names = hashmap__new();
	while (profile__next(p, &pos, &e)) {
		uint32_t key[2] = { e.labels.comm, e.labels.pid };
		bool created;

		/* A pid's samples before its name was read have none: the name
		 * stands for the whole process. */
		if (e.labels.process)
			*hashmap__put(s->names, &e.labels.pid, sizeof(e.labels.pid), &created) = e.labels.process;
		hashmap__put(seen, key, sizeof(key), &created);
		if (created)
			(*hashmap__put(s->pids_of, &key[0], sizeof(key[0]), &created))++;
	}
	hashmap__free(seen);
	return s;
}

void process_split__free(struct process_split *s)
{
	if (!s)
		return;
	hashmap__free(s->pids_of);
	hashmap__free(s->names);
	free(s);
}

bool process_split__by_pid(const struct process_split *s, uint32_t comm, uint32_t pid)
{
	const uint64_t *n;

	(void)pid;
	switch (s->mode) {
	case PROCESSES_EACH:
		return true;
	case PROCESSES_MERGED:
		return false;
	case PROCESSES_AUTO:
		break;
	}
	n = hashmap__get(s->pids_of, &comm, sizeof(comm));
	return n && *n >= 2 && *n <= PROCESSES_AUTO_MAX;
}

void process_split__name(const struct process_split *s, const struct profile *p, uint32_t comm, uint32_t pid, char *buf,
			 size_t size)
{
	const uint64_t *name = hashmap__get(s->names, &pid, sizeof(pid));

	if (!process_split__by_pid(s, comm, pid))
		snprintf(buf, size, "%s", profile__str_at(p, comm));
	else if (name)
		snprintf(buf, size, "%s [pid %u, %s]", profile__str_at(p, comm), pid,
			 profile__str_at(p, (uint32_t)*name));
	else
		snprintf(buf, size, "%s [pid %u]", profile__str_at(p, comm), pid);
}
