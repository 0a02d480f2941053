// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "write/process_frame.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"

struct process_split {
	enum process_frames mode;
	struct hashmap *names; /* pid → the name the process gave itself (string id) */
};

int process_frames_parse(const char *arg, enum process_frames *mode)
{
	/* "auto" was the default's name when it split 2 to 16 processes of a
	 * command: scripts that pass it get today's default. */
	if (!strcmp(arg, "merged") || !strcmp(arg, "auto"))
		*mode = PROCESSES_MERGED;
	else if (!strcmp(arg, "each"))
		*mode = PROCESSES_EACH;
	else {
		err_msg("invalid value '%s' for --processes (expected merged or each)", arg);
		return -1;
	}
	return 0;
}

void process_frame__format(const struct profile *p, uint32_t comm, uint32_t pid, uint32_t name, char *buf, size_t size)
{
	if (name)
		snprintf(buf, size, "%s [pid %u, %s]", profile__str_at(p, comm), pid, profile__str_at(p, name));
	else
		snprintf(buf, size, "%s [pid %u]", profile__str_at(p, comm), pid);
}

struct process_split *process_split__new(const struct profile *p, enum process_frames mode)
{
	struct process_split *s = xcalloc(1, sizeof(*s));
	struct profile_entry e;
	size_t pos = 0;

	s->mode = mode;
	s->names = hashmap__new();
	if (mode != PROCESSES_EACH) /* names show only beside pids */
		return s;
	while (profile__next(p, &pos, &e)) {
		bool created;

		/* A pid's samples before its name was read have none: the name
		 * stands for the whole process. */
		if (e.labels.process)
			*hashmap__put(s->names, &e.labels.pid, sizeof(e.labels.pid), &created) = e.labels.process;
	}
	return s;
}

void process_split__free(struct process_split *s)
{
	if (!s)
		return;
	hashmap__free(s->names);
	free(s);
}

bool process_split__by_pid(const struct process_split *s)
{
	return s->mode == PROCESSES_EACH;
}

void process_split__name(const struct process_split *s, const struct profile *p, uint32_t comm, uint32_t pid, char *buf,
			 size_t size)
{
	const uint64_t *name = hashmap__get(s->names, &pid, sizeof(pid));

	if (!process_split__by_pid(s))
		snprintf(buf, size, "%s", profile__str_at(p, comm));
	else
		process_frame__format(p, comm, pid, name ? (uint32_t)*name : 0, buf, size);
}

void container_frame__format(const struct profile *p, uint32_t container, uint32_t name, char *buf, size_t size)
{
	if (name)
		snprintf(buf, size, "[container %s (%.12s)]", profile__str_at(p, name), profile__str_at(p, container));
	else
		snprintf(buf, size, "[container %.12s]", profile__str_at(p, container));
}
