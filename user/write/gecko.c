// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "write/gecko.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/hashmap.h"
#include "base/strtab.h"
#include "base/util.h"
#include "profile/frame_format.h"
#include "profile/offcpu.h"
#include "write/process_frame.h"
#include "write/thread_names.h"

/* meta.categories: what colours a frame in the tracks and the call tree. */
enum gecko_category {
	CAT_PYTHON,
	CAT_NATIVE,
	CAT_KERNEL,
	CAT_WAIT,
	CAT_OTHER
};

static const char categories[] = "[{\"name\":\"Python\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
				 "{\"name\":\"Native\",\"color\":\"blue\",\"subcategories\":[\"Other\"]},"
				 "{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]},"
				 "{\"name\":\"Waiting\",\"color\":\"transparent\",\"subcategories\":[\"Other\"]},"
				 "{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]}]";

/* A wait as a marker: its reason shown in the marker chart, table and tooltip. */
static const char marker_schema[] =
	"[{\"name\":\"OffCPU\",\"display\":[\"marker-chart\",\"marker-table\",\"timeline-overview\"],"
	"\"tooltipLabel\":\"Off-CPU: {marker.data.reason}\",\"tableLabel\":\"{marker.data.reason}\","
	"\"chartLabel\":\"{marker.data.reason}\","
	"\"data\":[{\"key\":\"reason\",\"label\":\"Reason\",\"format\":\"string\",\"searchable\":true}]}]";

/* One thread's tables, built while its samples are written. */
struct gthread {
	const struct profile *p;
	struct strtab strs;     /* the thread's stringTable */
	struct hashmap *frames; /* profile frame id → frameTable index */
	struct hashmap *stacks; /* (prefix + 1, frame) → stackTable index */
	uint32_t nframes, nstacks;
	FILE *frame_rows, *stack_rows, *sample_rows, *marker_rows;
	char *frame_buf, *stack_buf, *sample_buf, *marker_buf;
	size_t frame_len, stack_len, sample_len, marker_len;
	size_t nsamples, nmarkers;
	double last_ms;     /* samples' times never go back */
	int64_t last_stack; /* the last sample's stack, -1 none (empty) */
	/* The wait being drawn as one marker until a different one comes. */
	uint32_t wait_reason;
	double wait_start, wait_end;
};

static FILE *mem(char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);

	if (!f)
		die("out of memory");
	return f;
}

static void gthread_init(struct gthread *g, const struct profile *p)
{
	memset(g, 0, sizeof(*g));
	g->p = p;
	strtab__init(&g->strs);
	g->frames = hashmap__new();
	g->stacks = hashmap__new();
	g->frame_rows = mem(&g->frame_buf, &g->frame_len);
	g->stack_rows = mem(&g->stack_buf, &g->stack_len);
	g->sample_rows = mem(&g->sample_buf, &g->sample_len);
	g->marker_rows = mem(&g->marker_buf, &g->marker_len);
}

static void gthread_free(struct gthread *g)
{
	strtab__free(&g->strs);
	hashmap__free(g->frames);
	hashmap__free(g->stacks);
	free(g->frame_buf);
	free(g->stack_buf);
	free(g->sample_buf);
	free(g->marker_buf);
}

static enum gecko_category category_of(const struct profile *p, const struct frame *f)
{
	switch (f->kind) {
	case FRAME_PYTHON:
		return CAT_PYTHON;
	case FRAME_NATIVE:
		return CAT_NATIVE;
	case FRAME_KERNEL:
		return CAT_KERNEL;
	default:
		return strncmp(profile__str_at(p, f->name), "[off-cpu:", 9) ? CAT_OTHER : CAT_WAIT;
	}
}

/* The key of "[no stack]": no profile frame has this id. */
#define NO_STACK_FRAME UINT32_MAX

/*
 * The frame's frameTable index. A Python frame's location is
 * "qualname (file:FIRSTLINE)": the importer reads it as a function of that
 * file, one function for all its lines; the sampled line is the row's line.
 */
static uint32_t frame_index(struct gthread *g, uint32_t id)
{
	bool created;
	uint64_t *slot = hashmap__put(g->frames, &id, sizeof(id), &created);
	char name[4096];

	if (!created)
		return (uint32_t)*slot;
	if (id == NO_STACK_FRAME) {
		fprintf(g->frame_rows, "%s[%u,false,null,null,null,null,%d,0]", g->nframes ? ",\n" : "",
			strtab__id(&g->strs, "[no stack]"), (int)CAT_OTHER);
		*slot = g->nframes;
		return g->nframes++;
	}
	const struct frame *f = profile__frame_at(g->p, id);

	if (f->kind == FRAME_PYTHON)
		snprintf(name, sizeof(name), "%s (%s:%u)", profile__str_at(g->p, f->name),
			 profile__str_at(g->p, f->module), f->start_line ? f->start_line : f->line);
	else
		frame__format(g->p, f, name, sizeof(name));
	fprintf(g->frame_rows, "%s[%u,false,null,null,", g->nframes ? ",\n" : "", strtab__id(&g->strs, name));
	if (f->kind == FRAME_PYTHON && f->line)
		fprintf(g->frame_rows, "%u", f->line);
	else
		fputs("null", g->frame_rows);
	fprintf(g->frame_rows, ",null,%d,0]", (int)category_of(g->p, f));
	*slot = g->nframes;
	return g->nframes++;
}

/* The stackTable index of frames[0 .. n) (root first): prefixes come first.
 * A sample with no frame (a thread sampled while exiting, its memory gone)
 * still ran: it gets "[no stack]", as a null stack is the importer's "not
 * sampled" and would lose it. */
static int64_t stack_index(struct gthread *g, const uint32_t *frames, uint32_t n)
{
	static const uint32_t no_stack[] = { NO_STACK_FRAME };
	int64_t prefix = -1;

	if (!n) {
		frames = no_stack;
		n = 1;
	}

	for (uint32_t i = 0; i < n; i++) {
		uint32_t key[2] = { (uint32_t)(prefix + 1), frame_index(g, frames[i]) };
		bool created;
		uint64_t *slot = hashmap__put(g->stacks, key, sizeof(key), &created);

		if (created) {
			fputs(g->nstacks ? ",\n[" : "[", g->stack_rows);
			if (prefix < 0)
				fputs("null", g->stack_rows);
			else
				fprintf(g->stack_rows, "%" PRId64, prefix);
			fprintf(g->stack_rows, ",%u]", key[1]);
			*slot = g->nstacks++;
		}
		prefix = (int64_t)*slot;
	}
	return prefix;
}

static void sample_row(struct gthread *g, int64_t stack, double ms)
{
	if (ms < g->last_ms)
		ms = g->last_ms;
	g->last_ms = ms;
	g->last_stack = stack;
	fputs(g->nsamples++ ? ",\n[" : "[", g->sample_rows);
	if (stack < 0)
		fputs("null", g->sample_rows);
	else
		fprintf(g->sample_rows, "%" PRId64, stack);
	fprintf(g->sample_rows, ",%.3f,0]", ms);
}

static void flush_wait(struct gthread *g)
{
	if (!g->wait_reason)
		return;
	fprintf(g->marker_rows, "%s[%u,%.3f,%.3f,1,%d,{\"type\":\"OffCPU\",\"reason\":", g->nmarkers++ ? ",\n" : "",
		strtab__id(&g->strs, "Off-CPU"), g->wait_start, g->wait_end, (int)CAT_WAIT);
	json_str(g->marker_rows, offcpu_reason_name(g->wait_reason));
	fputs("}]", g->marker_rows);
	g->wait_reason = 0;
}

/* The wait being drawn ended by `at` at the latest (a wait's length is
 * whole ticks, so its end may run past what came next): markers of one
 * thread never overlap. */
static void end_wait_by(struct gthread *g, double at)
{
	if (g->wait_reason && g->wait_end > at)
		g->wait_end = at > g->wait_start ? at : g->wait_start;
}

/* A wait: one marker for a run of waits of the same reason back to back. */
static void wait_marker(struct gthread *g, uint32_t reason, double start, double end, double period_ms)
{
	if (g->wait_reason == reason && start <= g->wait_end + period_ms) {
		if (end > g->wait_end)
			g->wait_end = end;
		return;
	}
	end_wait_by(g, start);
	flush_wait(g);
	g->wait_reason = reason;
	g->wait_start = start;
	g->wait_end = end;
}

/*
 * The Firefox Profiler draws a sample, and counts its time, until the
 * thread's next sample: a thread off the CPU between two CPU samples (not
 * sampled: CPU mode) would read busy all along. An empty sample one period
 * after the last, where the next comes later, ends it there.
 */
static void gap(struct gthread *g, double next_ms, double period_ms)
{
	if (g->nsamples && g->last_stack >= 0 && next_ms > g->last_ms + 1.5 * period_ms)
		sample_row(g, -1, g->last_ms + period_ms);
}

/*
 * One add: `count` rows (the format has no weight), a period apart. On a
 * CPU the sample stands for the ticks skipped before it; off it, for its
 * wait from its start on.
 */
static void add_samples(struct gthread *g, const struct profile_entry *e, uint64_t time_ns, uint32_t count,
			uint64_t period_ns)
{
	int64_t stack = stack_index(g, e->frames, e->nframes);
	double period_ms = (double)period_ns / 1e6;
	/* Untimed (a merged or imported profile): after the thread's timed samples. */
	double t = time_ns == PROFILE_NO_TIME ? g->last_ms + count * period_ms : (double)time_ns / 1e6;
	double first = t - (count - 1) * period_ms;

	if (e->labels.offcpu) {
		wait_marker(g, e->labels.offcpu, t, t + count * period_ms, period_ms);
		for (uint32_t k = 0; k < count; k++)
			sample_row(g, stack, t + k * period_ms);
		return;
	}
	end_wait_by(g, first > 0 ? first : 0);
	gap(g, first, period_ms);
	for (uint32_t k = count; k-- > 0;)
		sample_row(g, stack, t - k * period_ms > 0 ? t - k * period_ms : 0);
}

static void table(FILE *out, const char *name, const char *schema, FILE *rows, char **buf)
{
	fflush(rows);
	fprintf(out, "\"%s\":{\"schema\":%s,\"data\":[\n%s]}", name, schema, *buf ? *buf : "");
}

/* The thread's object, once its samples are in. */
static void thread_out(FILE *out, struct gthread *g, const char *name, const char *process, uint32_t pid, uint32_t tid,
		       bool first, double period_ms)
{
	gap(g, g->last_ms + 2 * period_ms, period_ms); /* the last sample is a period long too */
	flush_wait(g);
	fputs(first ? "\n{" : ",\n{", out);
	fputs("\"name\":", out);
	json_str(out, name);
	fputs(",\"processName\":", out);
	json_str(out, process);
	fprintf(out, ",\"processType\":\"default\",\"pid\":%u,\"tid\":%u,\"registerTime\":0,\"unregisterTime\":null,\n",
		pid, tid);
	table(out, "samples", "{\"stack\":0,\"time\":1,\"eventDelay\":2}", g->sample_rows, &g->sample_buf);
	fputs(",\n", out);
	table(out, "markers", "{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,\"category\":4,\"data\":5}",
	      g->marker_rows, &g->marker_buf);
	fputs(",\n", out);
	table(out, "frameTable",
	      "{\"location\":0,\"relevantForJS\":1,\"innerWindowID\":2,\"implementation\":3,\"line\":4,"
	      "\"column\":5,\"category\":6,\"subcategory\":7}",
	      g->frame_rows, &g->frame_buf);
	fputs(",\n", out);
	table(out, "stackTable", "{\"prefix\":0,\"frame\":1}", g->stack_rows, &g->stack_buf);
	fputs(",\n\"stringTable\":[", out);
	for (uint32_t i = 0; i < g->strs.n; i++) {
		if (i)
			fputc(',', out);
		json_str(out, strtab__at(&g->strs, i));
	}
	fputs("]}", out);
	fclose(g->frame_rows);
	fclose(g->stack_rows);
	fclose(g->sample_rows);
	fclose(g->marker_rows);
}

int gecko__write(const struct profile *p, FILE *out)
{
	const struct profile_meta *m = profile__meta_of(p);
	uint64_t period = m->period_ns ? m->period_ns : 10000000;
	size_t n;
	struct profile_thread_event *v = profile__events_by_thread(p, false, &n);
	struct hashmap *names = thread_names__latest(p);
	char process[512], tname[32];

	fprintf(out,
		"{\"meta\":{\"version\":%d,\"startTime\":%.3f,\"shutdownTime\":null,\"interval\":%.3f,"
		"\"stackwalk\":1,\"debug\":0,\"gcpoison\":0,\"asyncstack\":0,\"processType\":0,"
		"\"product\":\"pyebpf\",\"platform\":\"Linux\",\"presymbolicated\":true,\n\"categories\":%s,\n"
		"\"markerSchema\":%s},\n\"libs\":[],\"processes\":[],\"pausedRanges\":[],\n\"threads\":[",
		GECKO_VERSION, (double)m->start_epoch_ns / 1e6, (double)period / 1e6, categories, marker_schema);
	for (size_t i = 0, end; i < n; i = end) {
		struct gthread g;
		struct profile_entry e;

		gthread_init(&g, p);
		for (end = i; end < n && v[end].pid == v[i].pid && v[end].tid == v[i].tid; end++) {
			profile__entry(p, v[end].entry, &e);
			add_samples(&g, &e, v[end].time_ns, v[end].count, period);
		}
		/* Named as its latest sample names it, as every writer does. */
		profile__entry(p, v[end - 1].entry, &e);
		if (e.labels.comm)
			process_frame__format(p, e.labels.comm, e.labels.pid, e.labels.process, process,
					      sizeof(process));
		else
			snprintf(process, sizeof(process), "[pid %u]", v[i].pid);
		const char *thread = profile__str_at(p, thread_names__of(names, &e.labels));

		if (!*thread) {
			snprintf(tname, sizeof(tname), "[tid %u]", v[i].tid);
			thread = tname;
		}
		thread_out(out, &g, thread, process, v[i].pid, v[i].tid, i == 0, (double)period / 1e6);
		gthread_free(&g);
	}
	fputs("\n]}\n", out);
	hashmap__free(names);
	free(v);
	return stream_finish(out);
}
