// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "write/trace.h"

#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/frame_format.h"
#include "base/util.h"
#include "base/escape.h"
#include "write/process_frame.h"

/* The output, and whether an event was written yet (JSON wants commas between). */
struct tout {
	FILE *f;
	bool any;
};

static FILE *next_event(struct tout *o)
{
	fputs(o->any ? ",\n" : "\n", o->f);
	o->any = true;
	return o->f;
}

static const char *category(const struct profile *p, const struct frame *f)
{
	switch (f->kind) {
	case FRAME_PYTHON:
		return "python";
	case FRAME_KERNEL:
		return "kernel";
	case FRAME_NATIVE:
		return "native";
	default:
		return strncmp(profile__str_at(p, f->name), "[off-cpu:", 9) ? "mark" : "off-cpu";
	}
}

static void slice_edge(struct tout *o, char ph, const struct profile *p, uint32_t frame_id, uint32_t pid, uint32_t tid,
		       uint64_t ns)
{
	const struct frame *f = profile__frame_at(p, frame_id);
	char name[4096];

	FILE *out = next_event(o);

	frame__format(p, f, name, sizeof(name));
	fprintf(out, "{\"ph\":\"%c\",\"pid\":%u,\"tid\":%u,\"ts\":%" PRIu64 ".%03u,\"cat\":\"%s\",\"name\":", ph, pid,
		tid, ns / 1000, (unsigned)(ns % 1000), category(p, f));
	json_str(out, name);
	fputc('}', out);
}

static void metadata(struct tout *o, const char *what, uint32_t pid, uint32_t tid, const char *name)
{
	FILE *out = next_event(o);

	fprintf(out, "{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"args\":{\"name\":", pid, tid, what);
	json_str(out, name);
	fputs("}}", out);
}

/*
 * The name the latest sample in v[from, to) carries, of its process or its
 * thread: a thread's first samples may carry the OS name, from before its
 * Python name was known; a process that exec'd shows its final name.
 */
static uint32_t latest_name(const struct profile *p, const struct profile_thread_event *v, size_t to, bool thread)
{
	struct profile_entry e;

	profile__entry(p, v[to - 1].entry, &e);
	return thread ? e.labels.thread : e.labels.comm;
}

/* Shorter gaps between samples than this (and than two periods) are not shown. */
#define TRACE_MIN_GAP_NS (20 * 1000000ULL)

/*
 * One thread's samples v[from, to) as B/E slices. A wall-clock recording
 * (--mode wall) makes it the thread's whole timeline: its off-CPU samples
 * span their intervals, their stacks ending in the reason.
 */
static void thread_slices(struct tout *out, const struct profile *p, const struct profile_thread_event *v, size_t from,
			  size_t to, uint64_t period)
{
	uint32_t pid = v[from].pid, tid = v[from].tid, nopen = 0;
	const uint32_t *open = NULL; /* frames of the open slices, root first */
	uint64_t last_end = 0, gap = 2 * period > TRACE_MIN_GAP_NS ? 2 * period : TRACE_MIN_GAP_NS;

	for (size_t i = from; i <= to; i++) {
		struct profile_entry e = { 0 };
		uint32_t common = 0;
		uint64_t t = i < to ? v[i].time_ns : last_end;

		if (i < to)
			profile__entry(p, v[i].entry, &e);
		/* A gap in the samples: the thread was off the CPU. A short one
		 * (preemption, timer jitter on a busy host) does not split the
		 * slices the samples around it share: the file grows with changes
		 * of stack, not with samples times depth. */
		if (i < to && nopen && t > last_end + gap) {
			for (uint32_t k = nopen; k-- > 0;)
				slice_edge(out, 'E', p, open[k], pid, tid, last_end);
			nopen = 0;
		}
		if (t < last_end && nopen) /* a sample inside the last one's interval: end that there */
			t = last_end;
		while (common < nopen && common < e.nframes && open[common] == e.frames[common])
			common++;
		for (uint32_t k = nopen; k-- > common;)
			slice_edge(out, 'E', p, open[k], pid, tid, t);
		for (uint32_t k = common; k < e.nframes; k++)
			slice_edge(out, 'B', p, e.frames[k], pid, tid, t);
		open = e.frames;
		nopen = e.nframes;
		/* On the CPU a sample stands for one period; off it (--mode wall), for
		 * its interval, `count` periods from its start. */
		if (i < to)
			last_end = v[i].time_ns + (e.labels.offcpu ? v[i].count : 1) * period;
		if (i < to && last_end <= t)
			last_end = t + period;
	}
}

int trace__write(const struct profile *p, FILE *out)
{
	const struct profile_meta *m = profile__meta_of(p);
	uint64_t period = m->period_ns ? m->period_ns : 10000000;
	size_t n;
	struct profile_thread_event *v = profile__events_by_thread(p, true, &n);
	char name[4096];
	struct tout o = { .f = out };
	struct process_split *each = process_split__new(p, PROCESSES_EACH);

	fprintf(out,
		"{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"pyebpf\",\"start_epoch_ns\":%" PRId64
		",\"period_ns\":%" PRIu64 "},\n\"traceEvents\":[",
		m->start_epoch_ns, period);
	for (size_t i = 0; i < n;) {
		size_t end, pend = i;

		/* A process: name it once. */
		while (pend < n && v[pend].pid == v[i].pid)
			pend++;
		/* Named as --processes each names its frame, so that a track and a
		 * tree of the same process read alike. */
		process_split__name(each, p, latest_name(p, v, pend, false), v[i].pid, name, sizeof(name));
		metadata(&o, "process_name", v[i].pid, 0, name);
		for (; i < pend; i = end) {
			for (end = i; end < pend && v[end].tid == v[i].tid;)
				end++;
			snprintf(name, sizeof(name), "%s [tid %u]", profile__str_at(p, latest_name(p, v, end, true)),
				 v[i].tid);
			metadata(&o, "thread_name", v[i].pid, v[i].tid, name);
			thread_slices(&o, p, v, i, end, period);
		}
	}
	fputs("\n]}\n", out);
	process_split__free(each);
	free(v);
	return stream_finish(out);
}
