// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "write/thread_names.h"

struct hashmap *thread_names__latest(const struct profile *p)
{
	struct hashmap *h = hashmap__new();
	struct profile_event_cursor c = { 0 };
	struct profile_event ev;

	while (profile__next_event(p, &c, &ev)) {
		struct profile_entry e;
		uint32_t key[2];

		profile__entry(p, ev.entry, &e);
		key[0] = e.labels.pid;
		key[1] = e.labels.tid;
		*hashmap__put(h, key, sizeof(key), NULL) = e.labels.thread;
	}
	return h;
}

uint32_t thread_names__of(const struct hashmap *names, const struct sample_labels *l)
{
	uint32_t key[2] = { l->pid, l->tid };
	const uint64_t *v = hashmap__get(names, key, sizeof(key));

	return v ? (uint32_t)*v : l->thread;
}
