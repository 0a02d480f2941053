// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "write/pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/frame_format.h"
#include "base/gzip.h"
#include "base/hashmap.h"
#include "profile/offcpu.h"
#include "base/strtab.h"
#include "base/util.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__ValueType ValueType;

/* The pprof string table: pyebpf's strings get new indexes, "" is 0. */
static int64_t str_id(struct strtab *t, const char *s)
{
	return strtab__id(t, s);
}

struct builder {
	const struct profile *p;
	const struct pprof_opts *o;
	struct strtab strs;
	struct hashmap *func_ids; /* function key → id */
	Function **funcs;
	size_t nfuncs, funcs_cap;
	struct hashmap *map_ids; /* module string → id */
	Mapping **maps;
	size_t nmaps, maps_cap;
	uint64_t *loc_of_frame; /* frame id → location id (0: none yet) */
	Location **locs;
	size_t nlocs, locs_cap;
	/* A stack's location ids (leaf first), shared by every entry that has
	 * it: threads of one program share most stacks. Key: the profile's
	 * frame list pointer, one per distinct stack. */
	struct hashmap *stack_locs;
};

static uint64_t mapping_id(struct builder *b, const char *module)
{
	bool created;
	uint64_t *v = hashmap__put(b->map_ids, module, strlen(module), &created);

	if (created) {
		Mapping *m = xcalloc(1, sizeof(*m));

		perftools__profiles__mapping__init(m);
		m->id = b->nmaps + 1;
		m->filename = str_id(&b->strs, module);
		m->has_functions = true;
		xgrow(&b->maps, &b->maps_cap, b->nmaps + 1, sizeof(*b->maps));
		b->maps[b->nmaps++] = m;
		*v = m->id;
	}
	return *v;
}

/*
 * A function's id. Python functions have no system (mangled) name: pprof
 * demangles a function whose system name is its name, and takes any name
 * with <> in it for a C++ template, so `<module>` and `<listcomp>` came out
 * as "<unknown>" in `go tool pprof -top`.
 */
static uint64_t function_id(struct builder *b, const char *name, const char *file, int64_t start_line, bool python)
{
	char key[8192];
	int n = snprintf(key, sizeof(key), "%s%c%s%c%" PRId64, name, 0, file, 0, start_line);
	bool created;
	uint64_t *v = hashmap__put(b->func_ids, key, n > 0 && (size_t)n < sizeof(key) ? (size_t)n : sizeof(key),
				   &created);

	if (created) {
		Function *f = xcalloc(1, sizeof(*f));

		perftools__profiles__function__init(f);
		f->id = b->nfuncs + 1;
		f->name = str_id(&b->strs, name);
		f->system_name = python ? 0 : f->name;
		f->filename = str_id(&b->strs, file);
		f->start_line = start_line;
		xgrow(&b->funcs, &b->funcs_cap, b->nfuncs + 1, sizeof(*b->funcs));
		b->funcs[b->nfuncs++] = f;
		*v = f->id;
	}
	return *v;
}

/*
 * The files the profile knows, main executables first (pprof names the
 * profile after its first mapping), each where its code lies at its link
 * addresses: an address without a symbol is written as that link address,
 * so `pprof` can symbolize it from the file the build id names. Files
 * nothing is known of (the kernel, [vdso], unreadable ones) get a mapping
 * when a frame first needs one: the reader notes only these seeded ones,
 * so a file read and written again comes out the same.
 */
static void seed_mappings(struct builder *b)
{
	size_t n;
	const struct profile_module *mods = profile__modules(b->p, &n);

	for (int exe = 1; exe >= 0; exe--)
		for (size_t i = 0; i < n; i++) {
			const struct profile_module *pm = &mods[i];
			uint64_t id;
			Mapping *m;

			if (pm->exe != exe || (!pm->limit && !pm->build_id)) /* nothing known: as frames need it */
				continue;
			id = mapping_id(b, profile__str_at(b->p, pm->module)); /* may move b->maps */
			m = b->maps[id - 1];
			m->memory_start = pm->start;
			m->memory_limit = pm->limit;
			m->file_offset = pm->file_offset;
			if (pm->build_id)
				m->build_id = str_id(&b->strs, profile__str_at(b->p, pm->build_id));
		}
}

static uint64_t location_id(struct builder *b, uint32_t frame_id)
{
	const struct frame *f = profile__frame_at(b->p, frame_id);
	const char *module = profile__str_at(b->p, f->module);
	char name[4096];
	Location *l;
	Line *line;

	if (b->loc_of_frame[frame_id])
		return b->loc_of_frame[frame_id];
	l = xcalloc(1, sizeof(*l));
	line = xcalloc(1, sizeof(*line));
	perftools__profiles__location__init(l);
	perftools__profiles__line__init(line);
	l->id = b->nlocs + 1;
	if (f->kind == FRAME_PYTHON) {
		line->function_id = function_id(b, profile__str_at(b->p, f->name), module, f->start_line, true);
		line->line = f->line;
	} else {
		frame__format(b->p, f, name, sizeof(name));
		if (f->kind == FRAME_KERNEL)
			module = "[kernel.kallsyms]";
		line->function_id = function_id(b, name, f->kind == FRAME_MARK ? "" : module, 0, false);
		if (f->kind != FRAME_MARK && *module)
			l->mapping_id = mapping_id(b, module);
		l->address = f->offset;
	}
	l->n_line = 1;
	l->line = xcalloc(1, sizeof(*l->line));
	l->line[0] = line;
	xgrow(&b->locs, &b->locs_cap, b->nlocs + 1, sizeof(*b->locs));
	b->locs[b->nlocs++] = l;
	b->loc_of_frame[frame_id] = l->id;
	return l->id;
}

static Label *label(struct builder *b, const char *key, const char *str, int64_t num)
{
	Label *l = xcalloc(1, sizeof(*l));

	perftools__profiles__label__init(l);
	l->key = str_id(&b->strs, key);
	if (str)
		l->str = str_id(&b->strs, str);
	else
		l->num = num;
	return l;
}

static ValueType *value_type(struct builder *b, const char *type, const char *unit)
{
	ValueType *v = xcalloc(1, sizeof(*v));

	perftools__profiles__value_type__init(v);
	v->type = str_id(&b->strs, type);
	v->unit = str_id(&b->strs, unit);
	return v;
}

/* The labels every sample of an entry shares: at most this many. */
#define ENTRY_LABELS 24

struct entry_out {
	uint64_t *location_ids; /* leaf first */
	Label **labels;         /* nlabels of them, in an array of their own: most entries have a few */
	size_t nlabels;
};

/*
 * A push's labels: what a backend may filter by without a series per
 * process or thread id (Pyroscope makes series of sample labels): the
 * thread's name, the command, GIL, off-CPU reason, CPython version. The
 * process and container are the series' own labels (push/series.h).
 */
/* Which request (docs/requests.md): every label of it in a file. */
static void request_labels(struct builder *b, const struct profile_entry *e, struct entry_out *o)
{
	const struct profile *p = b->p;
	struct sample_request r = *profile__request_at(p, e->labels.request);

	for (size_t i = 0; i < ARRAY_SIZE(request_label_names); i++) {
		const uint32_t *id = sample_request__field(&r, request_label_names[i]);

		if (*id)
			o->labels[o->nlabels++] = label(b, request_label_names[i], profile__str_at(p, *id), 0);
	}
	if (r.ctx_key && r.ctx_value)
		o->labels[o->nlabels++] = label(b, profile__str_at(p, r.ctx_key), profile__str_at(p, r.ctx_value), 0);
}

/*
 * ... and in a push, what Pyroscope's span profiles read as Grafana's
 * OpenTelemetry SDKs write it: span_id and span_name of the request's local
 * root (SelectMergeSpanProfile selects by it), and the endpoint. Not the
 * trace id nor --context-label's value: Pyroscope before 2.0.3 makes a
 * series of every sample label but span_id, a series per request.
 */
static void push_request_labels(struct builder *b, const struct profile_entry *e, struct entry_out *o)
{
	const struct profile *p = b->p;
	const struct sample_request *r = profile__request_at(p, e->labels.request);

	if (r->root_span && r->endpoint) {
		o->labels[o->nlabels++] = label(b, "span_id", profile__str_at(p, r->root_span), 0);
		o->labels[o->nlabels++] = label(b, "span_name", profile__str_at(p, r->endpoint), 0);
	}
	if (r->endpoint)
		o->labels[o->nlabels++] = label(b, "endpoint", profile__str_at(p, r->endpoint), 0);
}

static void push_labels(struct builder *b, const struct profile_entry *e, struct entry_out *o)
{
	const struct profile *p = b->p;

	if (e->labels.thread)
		o->labels[o->nlabels++] = label(b, "thread_name", profile__str_at(p, e->labels.thread), 0);
	if (e->labels.comm)
		o->labels[o->nlabels++] = label(b, "comm", profile__str_at(p, e->labels.comm), 0);
	if (e->labels.flags & LABEL_GIL_KNOWN)
		o->labels[o->nlabels++] = label(b, "gil", e->labels.flags & LABEL_GIL_HELD ? "held" : "released", 0);
	if (e->labels.python)
		o->labels[o->nlabels++] = label(b, "python", profile__str_at(p, e->labels.python), 0);
	if (e->labels.offcpu)
		o->labels[o->nlabels++] = label(b, "off_cpu_reason", offcpu_reason_name(e->labels.offcpu), 0);
	push_request_labels(b, e, o);
}

static void entry_labels(struct builder *b, const struct profile_entry *e, struct entry_out *o)
{
	const struct profile *p = b->p;

	bool created;
	void **ids = hashmap__put_ptr(b->stack_locs, &e->frames, sizeof(e->frames), &created);

	if (created) {
		uint64_t *v = xcalloc(e->nframes + 1, sizeof(*v));

		for (uint32_t i = 0; i < e->nframes; i++) /* pprof: leaf first */
			v[i] = location_id(b, e->frames[e->nframes - 1 - i]);
		*ids = v;
	}
	o->location_ids = *ids;
	if (b->o->only) {
		push_labels(b, e, o);
		return;
	}
	o->labels[o->nlabels++] = label(b, "pid", NULL, e->labels.pid);
	o->labels[o->nlabels++] = label(b, "tid", NULL, e->labels.tid);
	o->labels[o->nlabels++] = label(b, "comm", profile__str_at(p, e->labels.comm), 0);
	o->labels[o->nlabels++] = label(b, "thread", profile__str_at(p, e->labels.thread), 0);
	if (e->labels.flags & LABEL_GIL_KNOWN)
		o->labels[o->nlabels++] = label(b, "gil", e->labels.flags & LABEL_GIL_HELD ? "held" : "released", 0);
	if (e->labels.python)
		o->labels[o->nlabels++] = label(b, "python", profile__str_at(p, e->labels.python), 0);
	if (e->labels.cgroup)
		o->labels[o->nlabels++] = label(b, "cgroup", NULL, (int64_t)e->labels.cgroup);
	if (e->labels.cgroup_path)
		o->labels[o->nlabels++] = label(b, "cgroup_path", profile__str_at(p, e->labels.cgroup_path), 0);
	if (e->labels.container)
		o->labels[o->nlabels++] = label(b, "container", profile__str_at(p, e->labels.container), 0);
	if (e->labels.container_name)
		o->labels[o->nlabels++] = label(b, "container_name", profile__str_at(p, e->labels.container_name), 0);
	if (e->labels.ns_pid && e->labels.ns_pid != e->labels.pid)
		o->labels[o->nlabels++] = label(b, "ns_pid", NULL, e->labels.ns_pid);
	if (e->labels.offcpu)
		o->labels[o->nlabels++] = label(b, "off_cpu_reason", offcpu_reason_name(e->labels.offcpu), 0);
	if (e->labels.process)
		o->labels[o->nlabels++] = label(b, "process_name", profile__str_at(p, e->labels.process), 0);
	if (e->labels.flags & LABEL_TASK)
		o->labels[o->nlabels++] = label(b, "time_kind", "task", 0);
	if (e->labels.k8s_pod)
		o->labels[o->nlabels++] = label(b, "k8s_pod", profile__str_at(p, e->labels.k8s_pod), 0);
	request_labels(b, e, o);
}

/* An entry's stack and labels, the labels built in room for all of them
 * and kept in an array of their size (half a million entries: 30 MB). */
static void entry_out(struct builder *b, const struct profile_entry *e, struct entry_out *o)
{
	Label *all[ENTRY_LABELS];

	o->labels = all;
	o->nlabels = 0;
	entry_labels(b, e, o);
	o->labels = xmalloc((o->nlabels ? o->nlabels : 1) * sizeof(*o->labels));
	memcpy(o->labels, all, o->nlabels * sizeof(*o->labels));
}

/* The samples: one per entry (labels and stack), its adds summed. */
struct samples_out {
	size_t nentries;
	struct entry_out *eo;
	Sample *samples;
	Sample **ptrs;
	int64_t *values;
};

/* Does the profile hold task time (asyncio tasks, task_sampler.h)? */
static bool has_tasks(const struct profile *p)
{
	struct profile_entry e;
	size_t pos = 0;

	while (profile__next(p, &pos, &e))
		if (e.labels.flags & LABEL_TASK)
			return true;
	return false;
}

/*
 * Values: samples, cpu time (none off the CPU) and, recording wall time,
 * wall time; with task time, task_wall before wall (wall stays last, what
 * viewers show first): a thread's samples have no task time, a task's no
 * cpu or wall time, so no viewer adds one to the other.
 */
static void samples_build(struct builder *b, const struct profile_meta *m, struct samples_out *so)
{
	struct profile_entry e;
	bool tasks = m->wall && has_tasks(b->p);
	size_t n = profile__nstacks(b->p);

	so->eo = xcalloc(n + 1, sizeof(*so->eo));
	so->samples = xcalloc(n + 1, sizeof(*so->samples));
	so->ptrs = xcalloc(n + 1, sizeof(*so->ptrs));
	so->values = xcalloc((n + 1) * 6, sizeof(*so->values));
	for (size_t i = 0; i < n; i++) {
		struct entry_out *o = &so->eo[so->nentries];
		Sample *s = &so->samples[so->nentries];
		bool task;
		int64_t ns;

		profile__entry(b->p, (uint32_t)i, &e);
		task = e.labels.flags & LABEL_TASK;
		ns = (int64_t)(e.count * m->period_ns);
		/* A push's one kind of time: entries without it are left out. */
		if ((b->o->only == PPROF_ONLY_CPU && (e.labels.offcpu || task)) ||
		    (b->o->only == PPROF_ONLY_WALL && task))
			continue;
		entry_out(b, &e, o);
		perftools__profiles__sample__init(s);
		s->n_location_id = e.nframes;
		s->location_id = o->location_ids;
		s->value = &so->values[so->nentries * 6];
		if (m->mem_sample_bytes) { /* memory: growth, held at the peak, or still held at the end */
			int kind = e.labels.flags & LABEL_MEM_HELD ? 2 : e.labels.flags & LABEL_MEM_PEAK ? 1 : 0;
			int64_t points = (int64_t)e.count, bytes = (int64_t)(e.count * m->mem_sample_bytes);

			s->n_value = 6;
			for (size_t k = 0; k < 3; k++) {
				s->value[2 * k] = kind == (int)k ? points : 0;
				s->value[2 * k + 1] = kind == (int)k ? bytes : 0;
			}
		} else if (b->o->only) {
			s->n_value = 1;
			s->value[0] = ns;
		} else {
			s->n_value = tasks ? 4 : m->wall ? 3 : 2;
			s->value[0] = (int64_t)e.count;
			s->value[1] = e.labels.offcpu || task ? 0 : ns;
			if (tasks) {
				s->value[2] = task ? ns : 0;
				s->value[3] = task ? 0 : ns;
			} else {
				s->value[2] = ns;
			}
		}
		s->label = o->labels;
		s->n_label = o->nlabels;
		so->ptrs[so->nentries++] = s;
	}
}

static void samples_free(struct samples_out *so)
{
	for (size_t i = 0; i < so->nentries; i++) {
		for (size_t k = 0; k < so->eo[i].nlabels; k++)
			free(so->eo[i].labels[k]);
		free(so->eo[i].labels);
	}
	free(so->eo);
	free(so->samples);
	free(so->ptrs);
	free(so->values);
}

/* What the whole profile says: sample types, period, times, comments. */
static void header_build(struct builder *b, const struct profile_meta *m, Profile *prof)
{
	size_t ncomments;
	const char *const *comments = profile__comments(b->p, &ncomments);

	/* The last type is what viewers show first: wall time when it was
	 * recorded (Pyroscope also tells a wall profile by it). */
	bool tasks = m->wall && has_tasks(b->p);

	if (m->mem_sample_bytes) { /* as Go's heap profiles: the last, inuse_space, is what viewers show first */
		prof->n_sample_type = 6;
		prof->sample_type = xcalloc(6, sizeof(*prof->sample_type));
		prof->sample_type[0] = value_type(b, "alloc_objects", "count");
		prof->sample_type[1] = value_type(b, "alloc_space", "bytes");
		prof->sample_type[2] = value_type(b, "peak_objects", "count"); /* memray's high-water mark */
		prof->sample_type[3] = value_type(b, "peak_space", "bytes");
		prof->sample_type[4] = value_type(b, "inuse_objects", "count");
		prof->sample_type[5] = value_type(b, "inuse_space", "bytes");
		prof->period_type = value_type(b, "space", "bytes");
	} else if (b->o->only) { /* a push: one kind of time, as Pyroscope's profile types name it */
		const char *kind = b->o->only == PPROF_ONLY_CPU ? "cpu" : "wall";

		prof->n_sample_type = 1;
		prof->sample_type = xcalloc(1, sizeof(*prof->sample_type));
		prof->sample_type[0] = value_type(b, kind, "nanoseconds");
		prof->period_type = value_type(b, kind, "nanoseconds");
	} else {
		prof->n_sample_type = tasks ? 4 : m->wall ? 3 : 2;
		prof->sample_type = xcalloc(4, sizeof(*prof->sample_type));
		prof->sample_type[0] = value_type(b, "samples", "count");
		prof->sample_type[1] = value_type(b, "cpu", "nanoseconds");
		if (tasks)
			prof->sample_type[2] = value_type(b, "task_wall", "nanoseconds");
		if (m->wall)
			prof->sample_type[tasks ? 3 : 2] = value_type(b, "wall", "nanoseconds");
		prof->period_type = value_type(b, m->wall ? "wall" : "cpu", "nanoseconds");
	}
	prof->period = (int64_t)(m->mem_sample_bytes ? m->mem_sample_bytes : m->period_ns);
	prof->time_nanos = m->start_epoch_ns;
	prof->duration_nanos = m->duration_ns;
	prof->comment = xcalloc(ncomments + 1, sizeof(*prof->comment));
	for (size_t i = 0; i < ncomments; i++)
		prof->comment[prof->n_comment++] = str_id(&b->strs, comments[i]);
}

static void header_free(Profile *prof)
{
	for (size_t i = 0; i < prof->n_sample_type; i++)
		free(prof->sample_type[i]);
	free(prof->sample_type);
	free(prof->period_type);
	free(prof->comment);
}

static void builder_free(struct builder *b)
{
	for (size_t i = 0; i < b->nlocs; i++) {
		free(b->locs[i]->line[0]);
		free(b->locs[i]->line);
		free(b->locs[i]);
	}
	for (size_t i = 0; i < b->nfuncs; i++)
		free(b->funcs[i]);
	for (size_t i = 0; i < b->nmaps; i++)
		free(b->maps[i]);
	strtab__free(&b->strs);
	free(b->locs);
	free(b->funcs);
	free(b->maps);
	free(b->loc_of_frame);
	hashmap__free(b->func_ids);
	hashmap__free(b->map_ids);
	hashmap__free_values(b->stack_locs, free);
}

/*
 * One pprof Sample per entry (labels and stack), then the timeline: field
 * PPROF_TIMELINE_FIELD, which pprof readers skip as an unknown field, holds
 * the profile's log of adds (profile.h) as it is in memory, each add naming
 * its sample by index. It is appended to the packed message (protobuf
 * merges concatenated fields), so an hour of adds is never copied.
 */
int pprof__write(const struct profile *p, FILE *out)
{
	static const struct pprof_opts all = { 0 };

	return pprof__write_opts(p, &all, out);
}

/* The profile packed and compressed into out or, with out NULL, into *mem. */
static int pprof_gzip(const struct profile *p, const struct pprof_opts *o, FILE *out, uint8_t **mem, size_t *mem_len)
{
	const struct profile_meta *m = profile__meta_of(p);
	struct builder b = { .p = p, .o = o };
	Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	struct samples_out so = { 0 };
	struct gzip_part parts[3];
	uint8_t field[16], *buf;
	size_t len, log_len, nfield = 0;
	/* A push's samples are a subset: the timeline's indexes would not match. */
	const uint8_t *log = o->only ? NULL : profile__event_log(p, &log_len);
	int ret, level = o->gzip_level ? o->gzip_level : -1;

	if (o->only)
		log_len = 0;

	strtab__init(&b.strs);
	b.func_ids = hashmap__new();
	b.map_ids = hashmap__new();
	b.stack_locs = hashmap__new();
	b.loc_of_frame = xcalloc(profile__nframes(p) + 1, sizeof(*b.loc_of_frame));
	header_build(&b, m, &prof);
	seed_mappings(&b);
	samples_build(&b, m, &so);
	prof.n_sample = so.nentries;
	prof.sample = so.ptrs;
	prof.n_location = b.nlocs;
	prof.location = b.locs;
	prof.n_function = b.nfuncs;
	prof.function = b.funcs;
	prof.n_mapping = b.nmaps;
	prof.mapping = b.maps;
	prof.n_string_table = b.strs.n;
	prof.string_table = b.strs.v;

	len = perftools__profiles__profile__get_packed_size(&prof);
	buf = xmalloc(len ? len : 1);
	perftools__profiles__profile__pack(&prof, buf);
	/* The key (field number, length-delimited) and the length of the log. */
	for (uint64_t v = (uint64_t)PPROF_TIMELINE_FIELD << 3 | 2, k = 0; k < 2; k++, v = log_len) {
		for (; v >= 0x80; v >>= 7)
			field[nfield++] = (uint8_t)(v | 0x80);
		field[nfield++] = (uint8_t)v;
	}
	parts[0] = (struct gzip_part){ buf, len };
	parts[1] = (struct gzip_part){ field, nfield };
	parts[2] = (struct gzip_part){ log, log_len };
	ret = out ? gzip__writev_level(parts, log_len ? 3 : 1, level, out)
		  : gzip__writev_mem(parts, log_len ? 3 : 1, level, mem, mem_len);
	free(buf);
	samples_free(&so);
	header_free(&prof);
	builder_free(&b);
	return ret;
}

int pprof__write_opts(const struct profile *p, const struct pprof_opts *o, FILE *out)
{
	int ret = pprof_gzip(p, o, out, NULL, NULL);

	return ret ? ret : stream_finish(out);
}

int pprof__write_mem(const struct profile *p, const struct pprof_opts *o, uint8_t **out, size_t *len)
{
	return pprof_gzip(p, o, NULL, out, len);
}
