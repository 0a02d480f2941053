// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "read/pprof.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gzip.h"
#include "base/hashmap.h"
#include "profile/offcpu.h"
#include "base/util.h"
#include "read/pprof_cost.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Mapping Mapping;

#define KERNEL_MAPPING "[kernel.kallsyms]"

struct reader {
	const Profile *pp;
	struct profile *p;
	struct hashmap *funcs; /* function id → index + 1 */
	struct hashmap *maps;  /* mapping id → index + 1 */
	struct hashmap *locs;  /* location id → index + 1 */
	uint32_t **loc_frames; /* per location: its frames, root first */
	uint32_t *loc_nframes;
	uint64_t frames; /* in the samples so far, for PPROF_MAX_FRAMES */
	uint64_t cut;    /* samples cut to PPROF_MAX_DEPTH */
	uint64_t total;  /* samples counted so far: at most INT64_MAX, as pprof's values */
	uint64_t splits; /* adds beyond one a sample: counts above UINT32_MAX take several */
	int held_vi;     /* a memory profile's inuse_objects (the count index is alloc_objects); -1: not one */
	int peak_vi;     /* ... its peak_objects; -1: none (a file written before peaks were) */
	char *why;
	size_t whylen;
	bool failed;
};

__attribute__((format(printf, 2, 3))) static void fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return;
	r->failed = true;
	va_start(ap, fmt);
	vsnprintf(r->why, r->whylen, fmt, ap);
	va_end(ap);
}

/* The string at a string-table index; NULL (after fail) when out of range. */
static const char *str(struct reader *r, int64_t i)
{
	if (i < 0 || (uint64_t)i >= r->pp->n_string_table) {
		fail(r, "string index %" PRId64 " out of range", i);
		return NULL;
	}
	return r->pp->string_table[i] ? r->pp->string_table[i] : "";
}

/* Index ids (arbitrary non-zero uint64) of one table; duplicates are corrupt. */
static struct hashmap *index_ids(struct reader *r, const char *what, size_t n,
				 uint64_t (*id_at)(const Profile *, size_t))
{
	struct hashmap *h = hashmap__new();

	for (size_t i = 0; i < n && !r->failed; i++) {
		uint64_t id = id_at(r->pp, i);
		bool created;
		uint64_t *v = hashmap__put(h, &id, sizeof(id), &created);

		if (!id || !created)
			fail(r, "%s id %" PRIu64 " is %s", what, id, id ? "used twice" : "zero");
		*v = i + 1;
	}
	return h;
}

static uint64_t func_id_at(const Profile *pp, size_t i)
{
	return pp->function[i]->id;
}
static uint64_t map_id_at(const Profile *pp, size_t i)
{
	return pp->mapping[i]->id;
}
static uint64_t loc_id_at(const Profile *pp, size_t i)
{
	return pp->location[i]->id;
}

/* Table entry of an id, or NULL (after fail unless id is 0 and optional). */
static const void *lookup(struct reader *r, struct hashmap *h, void *const *table, const char *what, uint64_t id,
			  bool optional)
{
	uint64_t *v;

	if (!id && optional)
		return NULL;
	v = hashmap__get(h, &id, sizeof(id));
	if (!v) {
		fail(r, "%s id %" PRIu64 " does not exist", what, id);
		return NULL;
	}
	return table[*v - 1];
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The frame pyebpf wrote for one Line of a location (see write/pprof.c). */
static uint32_t line_frame(struct reader *r, const Location *l, const Mapping *m, const Function *fn, int64_t line)
{
	const char *name = str(r, fn->name), *file = str(r, fn->filename);
	const char *module = m ? str(r, m->filename) : "";
	struct frame f = { 0 };
	char unsym[4096];

	if (r->failed)
		return 0;
	if (m && !strcmp(module, KERNEL_MAPPING)) {
		f.kind = FRAME_KERNEL;
		f.name = profile__str(r->p, name);
	} else if (m) {
		/* An address with no symbol was written as "module+0xOFFSET". */
		snprintf(unsym, sizeof(unsym), "%s+0x%" PRIx64, basename_of(module), l->address);
		f.kind = FRAME_NATIVE;
		f.module = profile__str(r->p, module);
		if (l->address && !strcmp(name, unsym))
			f.offset = l->address;
		else
			f.name = profile__str(r->p, name);
	} else if (*file) {
		f.kind = FRAME_PYTHON;
		f.name = profile__str(r->p, name);
		f.module = profile__str(r->p, file);
		f.line = line > 0 && line <= UINT32_MAX ? (uint32_t)line : 0;
		f.start_line = fn->start_line > 0 && fn->start_line <= UINT32_MAX ? (uint32_t)fn->start_line : 0;
	} else {
		f.kind = FRAME_MARK;
		f.name = profile__str(r->p, *name ? name : "[unknown]");
	}
	return profile__frame(r->p, &f);
}

/* The mappings that carry what pyebpf knew of a file, in order; the first
 * of them is a main executable (write/pprof.c: seed_mappings). */
static void read_modules(struct reader *r)
{
	for (size_t i = 0; i < r->pp->n_mapping && !r->failed; i++) {
		const Mapping *m = r->pp->mapping[i];
		const char *file = str(r, m->filename), *id = str(r, m->build_id);
		struct profile_module pm = { .exe = i == 0 };

		if (!file || !*file || (m->memory_limit <= m->memory_start && (!id || !*id)))
			continue;
		pm.module = profile__str(r->p, file);
		pm.build_id = id && *id ? profile__str(r->p, id) : 0;
		if (m->memory_limit > m->memory_start) {
			pm.start = m->memory_start;
			pm.limit = m->memory_limit;
			pm.file_offset = m->file_offset;
		}
		profile__note_module(r->p, &pm);
	}
}

/* Every location's frames, root first: pprof lists inlined lines leaf first. */
static void read_locations(struct reader *r)
{
	const Profile *pp = r->pp;

	r->loc_frames = xcalloc(pp->n_location + 1, sizeof(*r->loc_frames));
	r->loc_nframes = xcalloc(pp->n_location + 1, sizeof(*r->loc_nframes));
	for (size_t i = 0; i < pp->n_location && !r->failed; i++) {
		const Location *l = pp->location[i];
		const Mapping *m = lookup(r, r->maps, (void *const *)pp->mapping, "mapping", l->mapping_id, true);
		size_t n = l->n_line ? l->n_line : 1;

		r->loc_frames[i] = xcalloc(n, sizeof(uint32_t));
		r->loc_nframes[i] = (uint32_t)n;
		if (!l->n_line) {
			/* Not symbolized: the address in its mapping, or nothing known. */
			struct frame f = { .kind = m ? FRAME_NATIVE : FRAME_MARK };

			if (m) {
				f.module = profile__str(r->p, str(r, m->filename) ?: "");
				f.offset = l->address - m->memory_start + m->file_offset;
			} else {
				f.name = profile__str(r->p, "[unknown]");
			}
			r->loc_frames[i][0] = profile__frame(r->p, &f);
			continue;
		}
		for (size_t k = 0; k < l->n_line && !r->failed; k++) {
			const Function *fn = lookup(r, r->funcs, (void *const *)pp->function, "function",
						    l->line[k]->function_id, false);

			if (fn)
				r->loc_frames[i][n - 1 - k] = line_frame(r, l, m, fn, l->line[k]->line);
		}
	}
}

/* Which value counts samples: samples/count, else cpu/nanoseconds over the period, else the first. */
static int count_index(struct reader *r, bool *by_period)
{
	const Profile *pp = r->pp;
	int cpu = -1;

	*by_period = false;
	if (!pp->n_sample_type) {
		fail(r, "no sample types");
		return -1;
	}
	for (size_t i = 0; i < pp->n_sample_type && !r->failed; i++) {
		const char *type = str(r, pp->sample_type[i]->type), *unit = str(r, pp->sample_type[i]->unit);

		if (!type || !unit)
			return -1;
		if (!strcmp(type, "samples") && !strcmp(unit, "count"))
			return (int)i;
		if (!strcmp(type, "cpu") && !strcmp(unit, "nanoseconds") && cpu < 0)
			cpu = (int)i;
	}
	if (cpu >= 0 && pp->period > 0) {
		*by_period = true;
		return cpu;
	}
	/* pyebpf's memory profiles: a sample's points are of growth, or of memory still held. */
	int alloc = -1;
	for (size_t i = 0; i < pp->n_sample_type; i++) {
		const char *type = str(r, pp->sample_type[i]->type), *unit = str(r, pp->sample_type[i]->unit);

		if (!strcmp(unit, "count") && !strcmp(type, "alloc_objects"))
			alloc = (int)i;
		else if (!strcmp(unit, "count") && !strcmp(type, "inuse_objects"))
			r->held_vi = (int)i;
		else if (!strcmp(unit, "count") && !strcmp(type, "peak_objects"))
			r->peak_vi = (int)i;
	}
	if (alloc >= 0 && r->held_vi >= 0)
		return alloc;
	r->held_vi = r->peak_vi = -1;
	/* A heap or contention profile: its values are not samples of time. */
	char types[256] = "";
	for (size_t i = 0; i < pp->n_sample_type && i < 4; i++) {
		const char *type = str(r, pp->sample_type[i]->type), *unit = str(r, pp->sample_type[i]->unit);
		size_t at = strlen(types);

		snprintf(types + at, sizeof(types) - at, "%s%.40s/%.40s", i ? ", " : "", type, unit);
	}
	fail(r,
	     "not a CPU profile: its sample types are %s (pyebpf reads samples/count, cpu/nanoseconds, or "
	     "alloc_objects and inuse_objects)",
	     types);
	return -1;
}

/* pyebpf's timeline (write/pprof.h): the adds of the samples, in the order
 * made and timed; what they add up to must be what the samples say. */
static void replay_timeline(struct reader *r, const struct sample_labels *labels, const uint32_t *stacks,
			    uint64_t *counts)
{
	const Profile *pp = r->pp;
	struct profile_event_cursor c = { 0 };
	struct profile_event ev;
	bool bad = false;

	while (profile_log_next(pp->pyebpf_timeline.data, pp->pyebpf_timeline.len, &c, &ev, &bad)) {
		if (ev.entry >= pp->n_sample || ev.count > counts[ev.entry]) {
			fail(r, "its timeline names sample %u more often than the sample says", ev.entry);
			return;
		}
		counts[ev.entry] -= ev.count;
		profile__add_stack_at(r->p, &labels[ev.entry], stacks[ev.entry], ev.count, ev.time_ns);
	}
	if (bad) {
		fail(r, "its timeline does not decode at byte %zu", c.pos);
		return;
	}
	for (size_t i = 0; i < pp->n_sample; i++)
		if (counts[i]) {
			fail(r, "its timeline leaves out %" PRIu64 " samples of sample %zu", counts[i], i);
			return;
		}
}

/*
 * Sample i's frames into out (PPROF_MAX_DEPTH of room), root first. pprof
 * lists locations leaf first, and a location's frames are root first. A
 * deeper stack keeps its leaf end (where the time was spent) under a
 * "[truncated]" mark, as the recorder cuts deep stacks.
 */
static uint32_t sample_frames(struct reader *r, size_t i, const Sample *s, uint32_t *out)
{
	uint32_t n = 0;
	bool cut = false;

	for (size_t k = 0; k < s->n_location_id; k++) {
		uint64_t *idx = hashmap__get(r->locs, &s->location_id[k], sizeof(uint64_t));

		if (!idx) {
			fail(r, "sample %zu: location id %" PRIu64 " does not exist", i, s->location_id[k]);
			return 0;
		}
		const uint32_t *lf = r->loc_frames[*idx - 1];
		for (uint32_t j = r->loc_nframes[*idx - 1]; j-- > 0 && !cut;) {
			if (n == PPROF_MAX_DEPTH) {
				cut = true;
				break;
			}
			out[n++] = lf[j];
		}
	}
	if (cut) {
		struct frame mark = { .kind = FRAME_MARK, .name = profile__str(r->p, "[truncated]") };

		out[PPROF_MAX_DEPTH - 1] = profile__frame(r->p, &mark);
		r->cut++;
	}
	for (uint32_t a = 0, b = n; a + 1 < b; a++, b--) { /* root first */
		uint32_t t = out[a];

		out[a] = out[b - 1];
		out[b - 1] = t;
	}
	r->frames += n;
	if (r->frames > PPROF_MAX_FRAMES)
		fail(r, "its samples hold more than %llu frames in all", PPROF_MAX_FRAMES);
	return n;
}

/* Samples; value vi counts them (in periods when by_period). */
static void read_samples(struct reader *r, int vi, bool by_period)
{
	const Profile *pp = r->pp;
	uint32_t *frames = xcalloc(PPROF_MAX_DEPTH, sizeof(*frames));
	bool timeline = pp->pyebpf_timeline.len > 0;
	struct sample_labels *labels = timeline ? xcalloc(pp->n_sample + 1, sizeof(*labels)) : NULL;
	uint32_t *stacks = timeline ? xcalloc(pp->n_sample + 1, sizeof(*stacks)) : NULL;
	uint64_t *counts = timeline ? xcalloc(pp->n_sample + 1, sizeof(*counts)) : NULL;

	for (size_t i = 0; i < pp->n_sample && !r->failed; i++) {
		const Sample *s = pp->sample[i];
		struct sample_labels l = { 0 };
		uint64_t time = PROFILE_NO_TIME;
		int64_t v;
		uint32_t n;

		if ((size_t)vi >= s->n_value) {
			fail(r, "sample %zu has %zu values, not %zu", i, s->n_value, pp->n_sample_type);
			break;
		}
		v = s->value[vi];
		if (r->held_vi >= 0 && !v && (size_t)r->held_vi < s->n_value && s->value[r->held_vi] > 0) {
			v = s->value[r->held_vi];
			l.flags |= LABEL_MEM_HELD;
		} else if (r->held_vi >= 0 && r->peak_vi >= 0 && !v && (size_t)r->peak_vi < s->n_value &&
			   s->value[r->peak_vi] > 0) {
			v = s->value[r->peak_vi];
			l.flags |= LABEL_MEM_PEAK;
		}
		if (by_period && v > 0) { /* rounded to the nearest period, without overflow */
			uint64_t u = (uint64_t)v, per = (uint64_t)pp->period;

			v = (int64_t)(u / per + (u % per >= per - per / 2));
		}
		if (v < 0 || (uint64_t)v > (uint64_t)INT64_MAX - r->total) {
			fail(r, "sample %zu has a count of %" PRId64, i, v);
			break;
		}
		struct sample_request rq = { 0 };
		uint32_t *field;

		for (size_t k = 0; k < s->n_label && !r->failed; k++) {
			const char *key = str(r, s->label[k]->key);
			int64_t num = s->label[k]->num;
			const char *sv = s->label[k]->str ? str(r, s->label[k]->str) : "";

			if (!key || !sv)
				break;
			if (!strcmp(key, "pid"))
				l.pid = (uint32_t)num;
			else if (!strcmp(key, "tid"))
				l.tid = (uint32_t)num;
			else if (!strcmp(key, "comm"))
				l.comm = profile__str(r->p, sv);
			else if (!strcmp(key, "thread"))
				l.thread = profile__str(r->p, sv);
			else if (!strcmp(key, "gil"))
				l.flags |= LABEL_GIL_KNOWN | (!strcmp(sv, "held") ? LABEL_GIL_HELD : 0);
			else if (!strcmp(key, "python"))
				l.python = profile__str(r->p, sv);
			else if (!strcmp(key, "cgroup"))
				l.cgroup = (uint64_t)num;
			else if (!strcmp(key, "cgroup_path"))
				l.cgroup_path = profile__str(r->p, sv);
			else if (!strcmp(key, "container"))
				l.container = profile__str(r->p, sv);
			else if (!strcmp(key, "container_name"))
				l.container_name = profile__str(r->p, sv);
			else if (!strcmp(key, "off_cpu_reason"))
				l.offcpu = offcpu_reason_parse(sv);
			else if (!strcmp(key, "time_kind") && !strcmp(sv, "task"))
				l.flags |= LABEL_TASK;
			else if (!strcmp(key, "process_name"))
				l.process = profile__str(r->p, sv);
			else if (!strcmp(key, "k8s_pod"))
				l.k8s_pod = profile__str(r->p, sv);
			else if (!strcmp(key, "ns_pid"))
				l.ns_pid = (uint32_t)num;
			else if ((field = sample_request__field(&rq, key)))
				*field = profile__str(r->p, sv);
			else if (!strcmp(key, "time") && num >= 0) /* files of pyebpf before the timeline field */
				time = (uint64_t)num;
			else if (s->label[k]->str && !rq.ctx_key) { /* --context-label's, named by its variable */
				rq.ctx_key = profile__str(r->p, key);
				rq.ctx_value = profile__str(r->p, sv);
			}
		}
		l.request = profile__request(r->p, &rq);
		n = sample_frames(r, i, s, frames);
		if (r->failed)
			break;
		r->total += (uint64_t)v;
		if (!timeline && (r->splits += (uint64_t)v / UINT32_MAX) > PPROF_MAX_SPLITS) {
			fail(r, "its samples count more than %llu adds of %u", PPROF_MAX_SPLITS, UINT32_MAX);
			break;
		}
		if (timeline) { /* added as the timeline says */
			labels[i] = l;
			stacks[i] = profile__stack(r->p, frames, n);
			counts[i] = (uint64_t)v;
		} else if (v) { /* one add counts at most UINT32_MAX (a merge of far-apart frequencies has more) */
			uint32_t stack = profile__stack(r->p, frames, n);

			for (uint64_t left = (uint64_t)v; left;) {
				uint32_t part = left > UINT32_MAX ? UINT32_MAX : (uint32_t)left;

				profile__add_stack_at(r->p, &l, stack, part, time);
				left -= part;
			}
		}
	}
	if (timeline && !r->failed)
		replay_timeline(r, labels, stacks, counts);
	free(frames);
	free(labels);
	free(stacks);
	free(counts);
}

static struct profile *convert(const Profile *pp, char *why, size_t whylen)
{
	struct reader r = { .pp = pp, .why = why, .whylen = whylen };
	struct profile_meta *m;
	bool by_period;
	int vi;

	if (!pp->n_string_table || strcmp(pp->string_table[0] ? pp->string_table[0] : "", "") != 0) {
		snprintf(why, whylen, "the string table does not start with \"\"");
		return NULL;
	}
	if (pp->period < 0 || pp->period > PPROF_MAX_PERIOD) {
		snprintf(why, whylen, "its sampling period of %" PRId64 " ns is not a period (0 to one hour)",
			 pp->period);
		return NULL;
	}
	r.p = profile__new();
	m = profile__meta(r.p);
	m->period_ns = pp->period > 0 ? (uint64_t)pp->period : 0;
	m->start_epoch_ns = pp->time_nanos;
	m->duration_ns = pp->duration_nanos;
	r.held_vi = r.peak_vi = -1;
	vi = count_index(&r, &by_period);
	if (r.held_vi >= 0) { /* its period is bytes a sample point stands for */
		m->mem_sample_bytes = m->period_ns ? m->period_ns : 1;
		m->period_ns = 0;
		if (m->mem_sample_bytes > PPROF_MAX_SAMPLE_BYTES)
			fail(&r, "its memory sampling period of %" PRIu64 " bytes is not one (1 byte to 1 GiB)",
			     m->mem_sample_bytes);
	}
	for (size_t i = 0; i < pp->n_sample_type && !r.failed; i++) {
		const char *type = str(&r, pp->sample_type[i]->type);

		if (type && !strcmp(type, "wall"))
			m->wall = 1;
	}
	r.funcs = index_ids(&r, "function", pp->n_function, func_id_at);
	r.maps = index_ids(&r, "mapping", pp->n_mapping, map_id_at);
	r.locs = index_ids(&r, "location", pp->n_location, loc_id_at);
	if (!r.failed)
		read_modules(&r);
	if (!r.failed)
		read_locations(&r);
	if (!r.failed)
		read_samples(&r, vi, by_period);
	/* A memory profile is shown in bytes, points times the period: as many
	 * adds of UINT32_MAX as a count is, bounded as the counts are. */
	if (!r.failed && m->mem_sample_bytes && r.total > PPROF_MAX_SPLITS * (uint64_t)UINT32_MAX / m->mem_sample_bytes)
		fail(&r, "its samples stand for more than %llu bytes",
		     (unsigned long long)(PPROF_MAX_SPLITS * (uint64_t)UINT32_MAX));
	if (!r.failed && r.cut) {
		char note[160];

		snprintf(note, sizeof(note),
			 "pyebpf report: %" PRIu64 " samples deeper than %d frames were cut to their leaf end (marked "
			 "[truncated])",
			 r.cut, PPROF_MAX_DEPTH);
		profile__add_comment(r.p, note);
	}
	for (size_t i = 0; i < pp->n_comment && !r.failed; i++) {
		const char *c = str(&r, pp->comment[i]);

		if (c)
			profile__add_comment(r.p, c);
	}
	for (size_t i = 0; r.loc_frames && i < pp->n_location; i++)
		free(r.loc_frames[i]);
	free(r.loc_frames);
	free(r.loc_nframes);
	hashmap__free(r.funcs);
	hashmap__free(r.maps);
	hashmap__free(r.locs);
	if (r.failed) {
		profile__free(r.p);
		return NULL;
	}
	return r.p;
}

/* Would protobuf-c's unpack of these bytes stay within the budget? */
static int within_cost(const uint8_t *data, size_t len, char *why, size_t whylen)
{
	struct pprof_cost c;

	if (pprof_cost__scan(&perftools__profiles__profile__descriptor, data, len, &c)) {
		snprintf(why, whylen, "not a pprof profile (the protobuf does not parse)");
		return -1;
	}
	if (c.bytes > PPROF_MAX_DECODE || c.bytes + len > PPROF_MAX_HELD) {
		bool alone = c.bytes > PPROF_MAX_DECODE;

		snprintf(why, whylen,
			 "decoding it would take %" PRIu64 " MiB, more than the %llu MiB a recording may (%" PRIu64
			 " entries of '%s')",
			 (alone ? c.bytes : c.bytes + len) >> 20, (alone ? PPROF_MAX_DECODE : PPROF_MAX_HELD) >> 20,
			 c.top_count, c.top_field ? c.top_field : "?");
		return -1;
	}
	return 0;
}

struct profile *pprof__read(const uint8_t *data, size_t len, char *why, size_t whylen)
{
	uint8_t *raw = NULL;
	size_t rawlen = len;
	const char *gz_why;
	struct profile *p;
	Profile *pp;

	if (!len) {
		snprintf(why, whylen, "empty file");
		return NULL;
	}
	if (gzip__is_gzip(data, len)) {
		if (gzip__inflate(data, len, PPROF_MAX_SIZE, &raw, &rawlen, &gz_why)) {
			snprintf(why, whylen, "%s", gz_why);
			return NULL;
		}
		data = raw;
	} else if (len > PPROF_MAX_SIZE) {
		snprintf(why, whylen, "larger than the size limit");
		return NULL;
	}
	if (!rawlen) {
		free(raw);
		snprintf(why, whylen, "empty profile (the gzip data holds nothing)");
		return NULL;
	}
	if (within_cost(data, rawlen, why, whylen)) {
		free(raw);
		return NULL;
	}
	pp = perftools__profiles__profile__unpack(NULL, rawlen, data);
	free(raw);
	if (!pp) {
		snprintf(why, whylen, "not a pprof profile (the protobuf does not parse)");
		return NULL;
	}
	p = convert(pp, why, whylen);
	perftools__profiles__profile__free_unpacked(pp, NULL);
	return p;
}
