// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "profile/filter.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/hashmap.h"
#include "profile/offcpu.h"
#include "profile/profile_import.h"
#include "base/util.h"

void filter__init(struct filter *f)
{
	memset(f, 0, sizeof(*f));
	f->until_ns = UINT64_MAX;
	f->since_epoch_ns = INT64_MIN;
	f->until_epoch_ns = INT64_MAX;
}

void filter__window(const struct filter *f, int64_t start_ns, int64_t *since, int64_t *until)
{
	*since = start_ns + (int64_t)f->since_ns;
	if (f->since_epoch_ns > *since)
		*since = f->since_epoch_ns;
	*until = f->until_ns == UINT64_MAX ? INT64_MAX : start_ns + (int64_t)f->until_ns;
	if (f->until_epoch_ns < *until)
		*until = f->until_epoch_ns;
}

struct filter filter__for_window(const struct filter *f, int64_t start_ns, int64_t since, int64_t until)
{
	struct filter w = *f;

	w.since_epoch_ns = INT64_MIN;
	w.until_epoch_ns = INT64_MAX;
	w.since_ns = since > start_ns ? (uint64_t)(since - start_ns) : 0;
	if (until == INT64_MAX)
		w.until_ns = UINT64_MAX;
	else
		w.until_ns = until > start_ns ? (uint64_t)(until - start_ns) : 0;
	return w;
}

void filter__free(struct filter *f)
{
	free(f->pids);
	free(f->tids);
	free(f->threads);
	free(f->exclude_threads);
	free(f->comms);
	free(f->containers);
	free(f->container_names);
	free(f->labels);
	filter__init(f);
}

bool filter__drops_samples(const struct filter *f)
{
	return f->npids || f->ntids || f->nthreads || f->nexclude || f->ncomms || f->ncontainers || f->timed ||
	       f->gil_only || f->reasons || f->python_only || f->ran || f->nlabels || f->trace_id ||
	       f->time_kind == FILTER_TIME_TASKS; /* the table's leaving task time out is a view, not a filter */
}

static bool has_u32(const uint32_t *v, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* A thread given as a number is a native tid, anything else a thread name. */
static bool thread_matches(const char *const *v, size_t n, uint32_t tid, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t t;

		if (parse_u64(v[i], 0, UINT32_MAX, &t) == 0 ? t == tid : strcmp(v[i], name) == 0)
			return true;
	}
	return false;
}

static bool has_str(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

/* A container id given by its first characters, as docker ps shows them. */
static bool has_prefix(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (*v[i] && !strncmp(v[i], s, strlen(v[i])))
			return true;
	return false;
}

uint64_t filter__other_time(const struct filter *f, const struct profile *p)
{
	struct profile_entry e;
	uint64_t n = 0;
	size_t pos = 0;

	if (f->time_kind == FILTER_TIME_ALL)
		return 0;
	while (profile__next(p, &pos, &e))
		if (((e.labels.flags & LABEL_TASK) != 0) == (f->time_kind == FILTER_TIME_THREADS))
			n += e.count;
	return n;
}

bool filter__keep(const struct filter *f, const struct profile *p, const struct sample_labels *l, uint64_t time_ns)
{
	const char *thread = profile__str_at(p, l->thread);
	bool task = l->flags & LABEL_TASK;

	if ((f->time_kind == FILTER_TIME_THREADS && task) || (f->time_kind == FILTER_TIME_TASKS && !task))
		return false;
	if ((f->mem_kind == FILTER_MEM_GROWN && (l->flags & LABEL_MEM_MOMENT)) ||
	    (f->mem_kind == FILTER_MEM_HELD && !(l->flags & LABEL_MEM_HELD)) ||
	    (f->mem_kind == FILTER_MEM_PEAK && !(l->flags & LABEL_MEM_PEAK)))
		return false;
	if (f->npids && !has_u32(f->pids, f->npids, l->pid))
		return false;
	if (f->ntids && !has_u32(f->tids, f->ntids, l->tid))
		return false;
	if (f->nthreads && !thread_matches(f->threads, f->nthreads, l->tid, thread))
		return false;
	if (f->nexclude && thread_matches(f->exclude_threads, f->nexclude, l->tid, thread))
		return false;
	if (f->ncomms && !has_str(f->comms, f->ncomms, profile__str_at(p, l->comm)))
		return false;
	if (f->ncontainers && !has_prefix(f->containers, f->ncontainers, profile__str_at(p, l->container)) &&
	    !(l->container_name &&
	      has_str(f->container_names, f->ncontainer_names, profile__str_at(p, l->container_name))))
		return false;
	for (size_t i = 0; i < f->nlabels; i++) {
		const char *eq = strchr(f->labels[i], '='), *v;
		char key[72];

		snprintf(key, sizeof(key), "%.*s", (int)(eq - f->labels[i]), f->labels[i]);
		if (!(v = profile__label_value(p, l, key)) || strcmp(v, eq + 1) != 0)
			return false;
	}
	if (f->trace_id) {
		const char *v = profile__label_value(p, l, "trace_id");

		if (!v || strcasecmp(v, f->trace_id) != 0)
			return false;
	}
	if (f->gil_only && !(l->flags & LABEL_GIL_HELD))
		return false;
	if (f->reasons && !(f->reasons & (1u << (l->offcpu < 32 ? l->offcpu : 0))))
		return false;
	/* What a memory profile holds is as of its end (or its peak): an interval's, in a window or not. */
	if (f->timed && !(l->flags & LABEL_MEM_MOMENT) &&
	    (time_ns == PROFILE_NO_TIME || time_ns < f->since_ns || time_ns >= f->until_ns))
		return false;
	if (f->ran) {
		uint64_t k = filter__thread_key(l);

		return hashmap__get(f->ran, &k, sizeof(k)) != NULL;
	}
	return true;
}

uint32_t filter__frames(const struct filter *f, const struct profile *p, uint32_t *frames, uint32_t n)
{
	uint32_t k = 0;
	bool python = false;

	if (!f->no_kernel && !f->python_only)
		return n;
	for (uint32_t i = 0; i < n; i++) {
		const struct frame *fr = profile__frame_at(p, frames[i]);

		if (fr->kind == FRAME_KERNEL && (f->no_kernel || f->python_only))
			continue;
		if (fr->kind == FRAME_NATIVE && f->python_only)
			continue;
		/* Python functions alone: the one that waited is the leaf (pprof's
		 * -top ranks it by its wall time); why is its label (off_cpu_reason). */
		if (fr->kind == FRAME_MARK && f->python_only && offcpu_is_reason_frame(profile__str_at(p, fr->name)))
			continue;
		python |= fr->kind == FRAME_PYTHON;
		frames[k++] = frames[i];
	}
	return f->python_only && !python ? 0 : k;
}

void filter__functions(const struct filter *f, struct profile *p, uint32_t *frames, uint32_t n)
{
	if (!f->functions)
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct frame fr = *profile__frame_at(p, frames[i]);

		if (fr.kind == FRAME_PYTHON && fr.line) {
			fr.line = 0;
			frames[i] = profile__frame(p, &fr);
		}
	}
}

struct profile *filter__apply(const struct filter *f, const struct profile *in, uint64_t *dropped)
{
	struct profile *out = profile__new();

	*profile__meta(out) = *profile__meta_of(in);
	*dropped = filter__copy(f, in, out, 0, 1, 0);
	return out;
}

uint64_t filter__copy(const struct filter *f, const struct profile *in, struct profile *out, uint64_t shift_ns,
		      uint64_t scale, uint32_t flags)
{
	struct profile_import im;
	size_t cap = 0;
	struct profile_event_cursor c = { 0 };
	struct profile_event ev;
	uint32_t *frames = NULL;
	uint64_t dropped = 0;

	profile_import__init(&im, out, in, f->functions);
	profile_import__notes(&im);
	while (profile__next_event(in, &c, &ev)) {
		struct profile_entry e;
		struct sample_labels l;
		uint32_t n;

		profile__entry(in, ev.entry, &e);
		if (!filter__keep(f, in, &e.labels, ev.time_ns)) {
			dropped += ev.count;
			continue;
		}
		xgrow(&frames, &cap, e.nframes + 1, sizeof(*frames));
		memcpy(frames, e.frames, e.nframes * sizeof(*frames));
		n = filter__frames(f, in, frames, e.nframes);
		if (f->python_only && !n) {
			dropped += ev.count;
			continue;
		}
		for (uint32_t k = 0; k < n; k++)
			frames[k] = profile_import__frame(&im, frames[k]);
		l = e.labels;
		l.flags |= flags;
		profile_import__labels(&im, &l);
		/* One add counts at most UINT32_MAX: a scaled count takes several. */
		uint32_t stack = profile__stack(out, frames, n);
		uint64_t time = ev.time_ns == PROFILE_NO_TIME ? PROFILE_NO_TIME : ev.time_ns + shift_ns;
		uint64_t left = ev.count * scale;
		do {
			uint32_t part = left > UINT32_MAX ? UINT32_MAX : (uint32_t)left;

			profile__add_stack_at(out, &l, stack, part, time);
			left -= part;
		} while (left);
	}
	free(frames);
	profile_import__free(&im);
	return dropped;
}
