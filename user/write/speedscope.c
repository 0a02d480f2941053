// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "write/speedscope.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/frame_format.h"
#include "base/hashmap.h"
#include "base/util.h"
#include "base/escape.h"
#include "write/process_frame.h"
#include "write/thread_names.h"

/* One add, or consecutive adds of the same entry merged, on a thread's timeline. */
struct timed_entry {
	struct profile_entry e; /* e.count: these adds' */
	uint32_t entry;
};

/* The adds in (pid, tid, time) order, consecutive ones of the same entry as one. */
static struct timed_entry *timed_entries(const struct profile *p, size_t *n)
{
	size_t nev, m = 0;
	struct profile_thread_event *ev = profile__events_by_thread(p, false, &nev);
	struct timed_entry *v = xcalloc(nev + 1, sizeof(*v));

	for (size_t i = 0; i < nev; i++) {
		if (m && v[m - 1].entry == ev[i].entry) {
			v[m - 1].e.count += ev[i].count;
			continue;
		}
		profile__entry(p, ev[i].entry, &v[m].e);
		v[m].e.count = ev[i].count;
		v[m++].entry = ev[i].entry;
	}
	free(ev);
	*n = m;
	return v;
}

/* The thread with the most samples: the profile speedscope opens on. */
static size_t busiest_thread(const struct timed_entry *v, size_t n)
{
	size_t best = 0, index = 0;
	uint64_t most = 0;

	for (size_t i = 0; i < n; index++) {
		size_t end = i;
		uint64_t total = 0;

		while (end < n && v[end].e.labels.pid == v[i].e.labels.pid && v[end].e.labels.tid == v[i].e.labels.tid)
			total += v[end++].e.count;
		if (total > most) {
			most = total;
			best = index;
		}
		i = end;
	}
	return best;
}

int speedscope__write(const struct profile *p, FILE *out)
{
	/* A memory profile's view counts bytes (or sample points), not periods of time. */
	int unit = profile__meta_of(p)->value_unit;
	uint64_t period_ns = unit == PROFILE_UNIT_SAMPLES ? profile__meta_of(p)->period_ns : 1;
	size_t n = 0, nframes = profile__nframes(p);
	struct timed_entry *v = timed_entries(p, &n);
	int64_t *index = xmalloc((nframes + 1) * sizeof(*index)); /* frame id → shared index */
	char name[4096];
	int64_t next = 0;
	struct hashmap *names = thread_names__latest(p);

	for (size_t i = 0; i <= nframes; i++)
		index[i] = -1;

	fprintf(out,
		"{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"pyebpf\","
		"\"name\":\"pyebpf\",\"activeProfileIndex\":%zu,\"shared\":{\"frames\":[",
		busiest_thread(v, n));
	/* Shared frames, in order of first use. */
	for (size_t i = 0; i < n; i++)
		for (uint32_t k = 0; k < v[i].e.nframes; k++) {
			uint32_t id = v[i].e.frames[k];
			const struct frame *f = profile__frame_at(p, id);

			if (index[id] >= 0)
				continue;
			index[id] = next++;
			frame__format(p, f, name, sizeof(name));
			if (f->kind == FRAME_KERNEL)
				strncat(name, "_[k]", sizeof(name) - strlen(name) - 1);
			fputs(index[id] ? ",{\"name\":" : "{\"name\":", out);
			json_str(out, name);
			if (f->kind == FRAME_PYTHON || f->kind == FRAME_NATIVE) {
				fputs(",\"file\":", out);
				json_str(out, profile__str_at(p, f->module));
				if (f->kind == FRAME_PYTHON)
					fprintf(out, ",\"line\":%u", f->line);
			}
			fputc('}', out);
		}
	fputs("]},\"profiles\":[", out);
	/* One sampled profile per thread, in time order: speedscope's "Time Order"
	 * view is the thread's timeline (with --mode wall, off-CPU time too). */
	for (size_t i = 0; i < n;) {
		size_t end = i;
		uint64_t total = 0;

		while (end < n && v[end].e.labels.pid == v[i].e.labels.pid && v[end].e.labels.tid == v[i].e.labels.tid)
			total += v[end++].e.count * period_ns;
		fputs(i ? ",{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":", out);
		uint32_t process = 0; /* the name the process gave itself, if any sample has it */
		size_t len;
		for (size_t k = i; k < end && !process; k++)
			process = v[k].e.labels.process;
		/* The process and thread frames as --processes each --threads write
		 * them, and the trace names its tracks. */
		process_frame__format(p, v[i].e.labels.comm, v[i].e.labels.pid, process, name, sizeof(name));
		len = strlen(name);
		snprintf(name + len, sizeof(name) - len, ": %s [tid %u]",
			 profile__str_at(p, thread_names__of(names, &v[i].e.labels)), v[i].e.labels.tid);
		json_str(out, name);
		fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[",
			unit == PROFILE_UNIT_BYTES     ? "bytes"
			: unit == PROFILE_UNIT_OBJECTS ? "none"
						       : "nanoseconds",
			total);
		for (size_t k = i; k < end; k++) {
			fputs(k > i ? ",[" : "[", out);
			for (uint32_t j = 0; j < v[k].e.nframes; j++) /* root first */
				fprintf(out, j ? ",%" PRId64 : "%" PRId64, index[v[k].e.frames[j]]);
			fputc(']', out);
		}
		fputs("],\"weights\":[", out);
		for (size_t k = i; k < end; k++)
			fprintf(out, k > i ? ",%" PRIu64 : "%" PRIu64, v[k].e.count * period_ns);
		fputs("]}", out);
		i = end;
	}
	fputs("]}\n", out);
	free(index);
	hashmap__free(names);
	free(v);
	return stream_finish(out);
}
