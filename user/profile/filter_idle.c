// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "profile/filter_idle.h"

#include "profile/filter.h"
#include "base/hashmap.h"
#include "profile/offcpu.h"

/*
 * Does this sample show its thread running in the window? On the CPU, yes;
 * off it, when the wait ended before the window did: the thread woke and
 * ran then. A handler that waits 98% of each request may get no timer
 * sample at 99 Hz in a short window, but each of its waits ends; a thread
 * asleep throughout has only a wait that lasts to the end (counted up to
 * the stop). Two periods of slack: a wait's weight is rounded by a draw.
 * An untimed sample (an old recording) counts as running.
 */
static bool ran_then(const struct profile *p, const struct profile_entry *e, const struct profile_event *ev)
{
	const struct profile_meta *m = profile__meta_of(p);
	uint64_t end;

	if (e->labels.offcpu == OFFCPU_NONE || ev->time_ns == PROFILE_NO_TIME || m->duration_ns <= 0)
		return true;
	end = ev->time_ns + (uint64_t)ev->count * m->period_ns;
	return end + 2 * m->period_ns < (uint64_t)m->duration_ns;
}

struct profile *filter__without_idle(const struct profile *p, struct idle_stats *st)
{
	struct hashmap *ran = hashmap__new(), *seen = hashmap__new();
	struct profile_event_cursor c = { 0 };
	struct profile_event ev;
	struct profile_entry e;
	struct filter f;
	struct profile *out;
	uint64_t dropped;
	bool created;

	while (profile__next_event(p, &c, &ev)) {
		profile__entry(p, ev.entry, &e);
		uint64_t k = filter__thread_key(&e.labels);

		hashmap__put(seen, &k, sizeof(k), &created);
		if (ran_then(p, &e, &ev))
			hashmap__put(ran, &k, sizeof(k), &created);
	}
	filter__init(&f);
	f.ran = ran;
	out = filter__apply(&f, p, &dropped);
	st->threads = hashmap__size(seen) - hashmap__size(ran);
	st->samples = dropped;
	filter__free(&f);
	hashmap__free(ran);
	hashmap__free(seen);
	return out;
}
