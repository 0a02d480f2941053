// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "push/otlp_req.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/frame_format.h"
#include "base/gzip.h"
#include "base/version.h"
#include "base/hashmap.h"
#include "profile/offcpu.h"
#include "otlp.pb-c.h"
#include "base/strtab.h"
#include "base/util.h"

/* What a series label is called in OTel's semantic conventions. */
static const struct {
	const char *label, *attribute;
} resource_names[] = {
	{ "service_name", "service.name" }, { "host", "host.name" },   { "container_id", "container.id" },
	{ "pod_uid", "k8s.pod.uid" },       { "pod", "k8s.pod.name" }, { "namespace", "k8s.namespace.name" },
	{ "container", "container.name" },
};

/* One request being built: the dictionary its profiles share, and every
 * allocation (freed together). */
struct enc {
	struct strtab strs;
	struct hashmap *fn_ids, *loc_ids, *stack_ids, *attr_ids, *link_ids; /* content -> index + 1 */
	Otlp__Function **fns;
	Otlp__Location **locs;
	Otlp__Stack **stacks;
	Otlp__KeyValueAndUnit **attrs;
	Otlp__Link **links;
	size_t nfns, nlocs, nstacks, nattrs, nlinks, fcap, lcap, scap, acap, kcap;
	void **owned;
	size_t nowned, ocap;
};

static void *own(struct enc *e, void *p)
{
	xgrow(&e->owned, &e->ocap, e->nowned + 1, sizeof(*e->owned));
	e->owned[e->nowned++] = p;
	return p;
}

static void *alloc(struct enc *e, size_t n)
{
	return own(e, xcalloc(1, n));
}

static int32_t str(struct enc *e, const char *s)
{
	return (int32_t)strtab__id(&e->strs, s);
}

/* An index into a table kept by content; *created when it is new. */
static int32_t intern(struct hashmap *h, const void *key, size_t len, size_t next, bool *created)
{
	uint64_t *v = hashmap__put(h, key, len, created);

	if (*created)
		*v = next;
	return (int32_t)*v;
}

static int32_t attribute(struct enc *e, const char *key, const char *value)
{
	char buf[1200];
	int n = snprintf(buf, sizeof(buf), "%s=%s", key, value);
	bool created;
	int32_t id = intern(e->attr_ids, buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1, e->nattrs, &created);

	if (created) {
		Otlp__KeyValueAndUnit *kv = alloc(e, sizeof(*kv));
		Otlp__AnyValue *v = alloc(e, sizeof(*v));

		otlp__key_value_and_unit__init(kv);
		otlp__any_value__init(v);
		kv->key_strindex = str(e, key);
		v->value_case = OTLP__ANY_VALUE__VALUE_STRING_VALUE;
		v->string_value = own(e, xstrdup(value));
		kv->value = v;
		xgrow(&e->attrs, &e->acap, e->nattrs + 1, sizeof(*e->attrs));
		e->attrs[e->nattrs++] = kv;
	}
	return id;
}

static int32_t function(struct enc *e, const char *name, const char *file, int64_t start_line)
{
	struct {
		int32_t name, file;
		int64_t start;
	} key = { str(e, name), str(e, file), start_line };
	bool created;
	int32_t id = intern(e->fn_ids, &key, sizeof(key), e->nfns, &created);

	if (created) {
		Otlp__Function *f = alloc(e, sizeof(*f));

		otlp__function__init(f);
		f->name_strindex = key.name;
		f->system_name_strindex = key.name;
		f->filename_strindex = key.file;
		f->start_line = start_line;
		xgrow(&e->fns, &e->fcap, e->nfns + 1, sizeof(*e->fns));
		e->fns[e->nfns++] = f;
	}
	return id;
}

/* A frame of series profile p as a Location (shared across series by content). */
static int32_t location(struct enc *e, const struct profile *p, const struct frame *f)
{
	const char *module = profile__str_at(p, f->module);
	char name[4096];
	struct { /* hashed as bytes: no padding */
		uint64_t address;
		int32_t fn;
		uint32_t kind, line, zero;
	} key = { .kind = f->kind, .line = f->line };
	bool created;
	int32_t id;

	if (f->kind == FRAME_PYTHON) {
		key.fn = function(e, profile__str_at(p, f->name), module, f->start_line);
	} else {
		frame__format(p, f, name, sizeof(name));
		key.fn = function(e, name,
				  f->kind == FRAME_KERNEL ? "[kernel.kallsyms]"
				  : f->kind == FRAME_MARK ? ""
							  : module,
				  0);
		key.address = f->offset;
	}
	id = intern(e->loc_ids, &key, sizeof(key), e->nlocs, &created);
	if (created) {
		Otlp__Location *l = alloc(e, sizeof(*l));
		Otlp__Line *line = alloc(e, sizeof(*line));
		static const char *const kinds[] = {
			[FRAME_NATIVE] = "native", [FRAME_KERNEL] = "kernel", [FRAME_PYTHON] = "cpython", [FRAME_MARK] = NULL
		};

		otlp__location__init(l);
		otlp__line__init(line);
		line->function_index = key.fn;
		line->line = f->kind == FRAME_PYTHON ? f->line : 0;
		l->address = key.address;
		l->n_lines = 1;
		l->lines = alloc(e, sizeof(*l->lines));
		l->lines[0] = line;
		if (f->kind < ARRAY_SIZE(kinds) && kinds[f->kind]) {
			l->n_attribute_indices = 1;
			l->attribute_indices = alloc(e, sizeof(*l->attribute_indices));
			l->attribute_indices[0] = attribute(e, "profile.frame.type", kinds[f->kind]);
		}
		xgrow(&e->locs, &e->lcap, e->nlocs + 1, sizeof(*e->locs));
		e->locs[e->nlocs++] = l;
	}
	return id;
}

/* An entry's frames (root first) as a Stack (leaf first). */
static int32_t stack(struct enc *e, const struct profile *p, const struct profile_entry *en)
{
	int32_t *ids = xcalloc(en->nframes + 1, sizeof(*ids));
	bool created;
	int32_t id;

	for (uint32_t i = 0; i < en->nframes; i++)
		ids[i] = location(e, p, profile__frame_at(p, en->frames[en->nframes - 1 - i]));
	id = intern(e->stack_ids, ids, en->nframes * sizeof(*ids), e->nstacks, &created);
	if (created) {
		Otlp__Stack *s = alloc(e, sizeof(*s));

		otlp__stack__init(s);
		s->n_location_indices = en->nframes;
		s->location_indices = own(e, ids);
		xgrow(&e->stacks, &e->scap, e->nstacks + 1, sizeof(*e->stacks));
		e->stacks[e->nstacks++] = s;
	} else {
		free(ids);
	}
	return id;
}

/* n bytes from 2n hex digits; false for anything else. */
static bool hex_bytes(const char *hex, uint8_t *out, size_t n)
{
	if (strlen(hex) != 2 * n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned v = 0;

		for (int k = 0; k < 2; k++) {
			char c = hex[2 * i + (size_t)k];
			int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

			if (d < 0)
				return false;
			v = v * 16 + (unsigned)d;
		}
		out[i] = (uint8_t)v;
	}
	return true;
}

/* A sample's link to its trace and innermost span (the link table's index;
 * 0, the empty link, for none), by which a backend joins it to the trace. */
static int32_t link(struct enc *e, const struct profile *p, const struct sample_request *r)
{
	uint8_t ids[24];
	bool created;
	int32_t id;

	if (!r->trace_id || !r->span_id || !hex_bytes(profile__str_at(p, r->trace_id), ids, 16) ||
	    !hex_bytes(profile__str_at(p, r->span_id), ids + 16, 8))
		return 0;
	id = intern(e->link_ids, ids, sizeof(ids), e->nlinks, &created);
	if (created) {
		Otlp__Link *l = alloc(e, sizeof(*l));
		uint8_t *copy = own(e, xmalloc(sizeof(ids)));

		otlp__link__init(l);
		memcpy(copy, ids, sizeof(ids));
		l->trace_id = (ProtobufCBinaryData){ 16, copy };
		l->span_id = (ProtobufCBinaryData){ 8, copy + 16 };
		xgrow(&e->links, &e->kcap, e->nlinks + 1, sizeof(*e->links));
		e->links[e->nlinks++] = l;
	}
	return id;
}

/* A sample's labels as attributes (OTel's names where there is one) and its link. */
static void sample_attributes(struct enc *e, const struct profile *p, const struct profile_entry *en, Otlp__Sample *s)
{
	const struct sample_request *r = profile__request_at(p, en->labels.request);
	int32_t *a = alloc(e, 7 * sizeof(*a));
	size_t n = 0;

	if (en->labels.thread)
		a[n++] = attribute(e, "thread.name", profile__str_at(p, en->labels.thread));
	if (en->labels.comm)
		a[n++] = attribute(e, "process.executable.name", profile__str_at(p, en->labels.comm));
	if (en->labels.flags & LABEL_GIL_KNOWN)
		a[n++] = attribute(e, "pyebpf.gil", en->labels.flags & LABEL_GIL_HELD ? "held" : "released");
	if (en->labels.python)
		a[n++] = attribute(e, "process.runtime.version", profile__str_at(p, en->labels.python));
	if (en->labels.offcpu)
		a[n++] = attribute(e, "pyebpf.off_cpu_reason", offcpu_reason_name(en->labels.offcpu));
	if (r->endpoint)
		a[n++] = attribute(e, "pyebpf.endpoint", profile__str_at(p, r->endpoint));
	if (r->ctx_key && r->ctx_value) /* named by its variable, as in the files */
		a[n++] = attribute(e, profile__str_at(p, r->ctx_key), profile__str_at(p, r->ctx_value));
	s->link_index = link(e, p, r);
	s->n_attribute_indices = n;
	s->attribute_indices = a;
}

static Otlp__ValueType *value_type(struct enc *e, const char *type, const char *unit)
{
	Otlp__ValueType *v = alloc(e, sizeof(*v));

	otlp__value_type__init(v);
	v->type_strindex = str(e, type);
	v->unit_strindex = str(e, unit);
	return v;
}

/* The kinds of profile a series sends: time on and off the CPU; a memory
 * recording's memory held and grown, in bytes, as Go's heap profiles name them. */
enum kind {
	KIND_CPU,
	KIND_WALL,
	KIND_INUSE,
	KIND_ALLOC
};
static const struct {
	const char *type, *unit, *period_type;
} kinds[] = {
	[KIND_CPU] = { "cpu", "nanoseconds", "cpu" },
	[KIND_WALL] = { "wall", "nanoseconds", "wall" },
	[KIND_INUSE] = { "inuse_space", "bytes", "space" },
	[KIND_ALLOC] = { "alloc_space", "bytes", "space" },
};

static bool of_kind(enum kind k, const struct profile_entry *en)
{
	bool held = en->labels.flags & LABEL_MEM_HELD, peak = en->labels.flags & LABEL_MEM_PEAK;

	switch (k) {
	case KIND_CPU:
		return !(en->labels.flags & LABEL_TASK) && !en->labels.offcpu;
	case KIND_WALL:
		return !(en->labels.flags & LABEL_TASK);
	case KIND_INUSE:
		return held;
	case KIND_ALLOC:
		return !held && !peak;
	}
	return false;
}

/* One profile of one kind for a series; NULL when it has none of it. */
static Otlp__Profile *profile_of(struct enc *e, const struct push_series *se, enum kind k, const char *name)
{
	const struct profile *p = se->prof;
	const struct profile_meta *m = profile__meta_of(p);
	uint64_t per = k == KIND_INUSE || k == KIND_ALLOC ? m->mem_sample_bytes : m->period_ns;
	Otlp__Profile *op;
	struct profile_entry en;
	size_t pos = 0, n = 0, cap = 0;
	Otlp__Sample **samples = NULL;
	char key[512];
	uint64_t h[2];

	while (profile__next(p, &pos, &en)) {
		Otlp__Sample *s;

		if (!of_kind(k, &en))
			continue;
		s = alloc(e, sizeof(*s));
		otlp__sample__init(s);
		s->stack_index = stack(e, p, &en);
		sample_attributes(e, p, &en, s);
		s->n_values = 1;
		s->values = alloc(e, sizeof(*s->values));
		s->values[0] = (int64_t)(en.count * per);
		xgrow(&samples, &cap, n + 1, sizeof(*samples));
		samples[n++] = s;
	}
	if (!n) {
		free(samples);
		return NULL;
	}
	op = alloc(e, sizeof(*op));
	otlp__profile__init(op);
	op->sample_type = value_type(e, kinds[k].type, kinds[k].unit);
	op->period_type = value_type(e, kinds[k].period_type, kinds[k].unit);
	op->period = (int64_t)per;
	op->time_unix_nano = (uint64_t)m->start_epoch_ns;
	op->duration_nano = (uint64_t)m->duration_ns;
	op->n_samples = n;
	op->samples = own(e, samples);
	/* The same interval, series and kind always get the same id. */
	snprintf(key, sizeof(key), "%s|%s|%s|%s", name, kinds[k].type, series_label(se, "service_name"),
		 series_label(se, "container_id") ? series_label(se, "container_id") : "");
	hash128_bytes(key, strlen(key), 0x6f746c70ULL, h);
	op->profile_id.len = 16;
	op->profile_id.data = alloc(e, 16);
	memcpy(op->profile_id.data, h, 16);
	return op;
}

static Otlp__ResourceProfiles *resource_of(struct enc *e, const struct push_series *se, const char *name,
					   size_t *nprofiles)
{
	Otlp__ResourceProfiles *rp = alloc(e, sizeof(*rp));
	Otlp__Resource *r = alloc(e, sizeof(*r));
	Otlp__ScopeProfiles *sp = alloc(e, sizeof(*sp));
	Otlp__InstrumentationScope *scope = alloc(e, sizeof(*scope));
	/* cpu, and wall if recorded; a memory recording's held and grown memory */
	bool memory = profile__meta_of(se->prof)->mem_sample_bytes != 0;
	Otlp__Profile *first = profile_of(e, se, memory ? KIND_INUSE : KIND_CPU, name);
	Otlp__Profile *second = memory                             ? profile_of(e, se, KIND_ALLOC, name)
				: profile__meta_of(se->prof)->wall ? profile_of(e, se, KIND_WALL, name)
								   : NULL;

	otlp__resource_profiles__init(rp);
	otlp__resource__init(r);
	otlp__scope_profiles__init(sp);
	otlp__instrumentation_scope__init(scope);
	r->attributes = alloc(e, (se->nlabels + 1) * sizeof(*r->attributes));
	for (size_t i = 0; i < se->nlabels; i++) {
		Otlp__KeyValue *kv = alloc(e, sizeof(*kv));
		Otlp__AnyValue *v = alloc(e, sizeof(*v));

		otlp__key_value__init(kv);
		otlp__any_value__init(v);
		kv->key = (char *)se->labels[i].name;
		for (size_t k = 0; k < ARRAY_SIZE(resource_names); k++)
			if (!strcmp(se->labels[i].name, resource_names[k].label))
				kv->key = (char *)resource_names[k].attribute;
		/* A pod's container is named as Kubernetes names it. */
		if (!strcmp(se->labels[i].name, "container") && series_label(se, "pod"))
			kv->key = "k8s.container.name";
		v->value_case = OTLP__ANY_VALUE__VALUE_STRING_VALUE;
		v->string_value = (char *)se->labels[i].value;
		kv->value = v;
		r->attributes[r->n_attributes++] = kv;
	}
	scope->name = "pyebpf";
	scope->version = PYEBPF_VERSION;
	sp->scope = scope;
	sp->profiles = alloc(e, 2 * sizeof(*sp->profiles));
	if (first)
		sp->profiles[sp->n_profiles++] = first;
	if (second)
		sp->profiles[sp->n_profiles++] = second;
	*nprofiles += sp->n_profiles;
	rp->resource = r;
	rp->n_scope_profiles = 1;
	rp->scope_profiles = alloc(e, sizeof(*rp->scope_profiles));
	rp->scope_profiles[0] = sp;
	return rp;
}

/* The empty link: ids of zeros. */
static Otlp__Link *zero_link(struct enc *e)
{
	Otlp__Link *l = alloc(e, sizeof(*l));
	uint8_t *zeros = alloc(e, 24);

	otlp__link__init(l);
	l->trace_id = (ProtobufCBinaryData){ 16, zeros };
	l->span_id = (ProtobufCBinaryData){ 8, zeros + 16 };
	return l;
}

/* Every table's zero value at index 0, as the protocol asks. */
static void zero_entries(struct enc *e)
{
	bool created;
	Otlp__Stack *s = alloc(e, sizeof(*s));
	Otlp__Location *l = alloc(e, sizeof(*l));
	Otlp__Function *f = alloc(e, sizeof(*f));
	Otlp__KeyValueAndUnit *kv = alloc(e, sizeof(*kv));
	static const int32_t none = 0;

	otlp__stack__init(s);
	otlp__location__init(l);
	otlp__function__init(f);
	otlp__key_value_and_unit__init(kv);
	intern(e->stack_ids, &none, 0, e->nstacks, &created);
	xgrow(&e->stacks, &e->scap, 1, sizeof(*e->stacks));
	e->stacks[e->nstacks++] = s;
	xgrow(&e->locs, &e->lcap, 1, sizeof(*e->locs));
	e->locs[e->nlocs++] = l;
	xgrow(&e->fns, &e->fcap, 1, sizeof(*e->fns));
	e->fns[e->nfns++] = f;
	xgrow(&e->attrs, &e->acap, 1, sizeof(*e->attrs));
	e->attrs[e->nattrs++] = kv;
	xgrow(&e->links, &e->kcap, 1, sizeof(*e->links));
	e->links[e->nlinks++] = zero_link(e);
}

int otlp_request(const struct push_series *s, size_t n, const char *name, uint8_t **out, size_t *len, size_t *nprofiles)
{
	struct enc e = { 0 };
	Otlp__ExportProfilesServiceRequest req = OTLP__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	Otlp__ProfilesDictionary dict = OTLP__PROFILES_DICTIONARY__INIT;
	Otlp__Mapping zero_mapping = OTLP__MAPPING__INIT, *mappings[1] = { &zero_mapping };
	uint8_t *packed;
	size_t plen;
	int ret;

	*nprofiles = 0;
	strtab__init(&e.strs);
	e.fn_ids = hashmap__new();
	e.loc_ids = hashmap__new();
	e.stack_ids = hashmap__new();
	e.attr_ids = hashmap__new();
	e.link_ids = hashmap__new();
	zero_entries(&e);
	req.resource_profiles = alloc(&e, (n + 1) * sizeof(*req.resource_profiles));
	for (size_t i = 0; i < n; i++) {
		size_t np = 0;
		Otlp__ResourceProfiles *rp = resource_of(&e, &s[i], name, &np);

		if (np)
			req.resource_profiles[req.n_resource_profiles++] = rp;
		*nprofiles += np;
	}
	dict.n_mapping_table = 1;
	dict.mapping_table = mappings;
	dict.n_link_table = e.nlinks;
	dict.link_table = e.links;
	dict.n_location_table = e.nlocs;
	dict.location_table = e.locs;
	dict.n_function_table = e.nfns;
	dict.function_table = e.fns;
	dict.n_stack_table = e.nstacks;
	dict.stack_table = e.stacks;
	dict.n_attribute_table = e.nattrs;
	dict.attribute_table = e.attrs;
	dict.n_string_table = e.strs.n;
	dict.string_table = e.strs.v;
	req.dictionary = &dict;
	plen = otlp__export_profiles_service_request__get_packed_size(&req);
	packed = xmalloc(plen + 1);
	otlp__export_profiles_service_request__pack(&req, packed);
	struct gzip_part part = { packed, plen };

	ret = gzip__writev_mem(&part, 1, 1, out, len);
	free(packed);
	for (size_t i = 0; i < e.nowned; i++)
		free(e.owned[i]);
	free(e.owned);
	free(e.fns);
	free(e.locs);
	free(e.stacks);
	free(e.attrs);
	free(e.links);
	hashmap__free(e.link_ids);
	hashmap__free(e.fn_ids);
	hashmap__free(e.loc_ids);
	hashmap__free(e.stack_ids);
	hashmap__free(e.attr_ids);
	strtab__free(&e.strs);
	return ret;
}

void otlp_partial_success_note(FILE *out, const char *backend, const char *name, const uint8_t *body, size_t len)
{
	Otlp__ExportProfilesServiceResponse *r = otlp__export_profiles_service_response__unpack(NULL, len, body);
	char msg[512];

	if (!r)
		return; /* a 2xx whose body is not the protocol's: the profiles were taken */
	if (r->partial_success && (r->partial_success->rejected_profiles || *r->partial_success->error_message))
		fprintf(out, "pyebpf: push to %s: %s: the collector dropped %lld profiles (%s)\n", backend, name,
			(long long)r->partial_success->rejected_profiles,
			utf8_clean(r->partial_success->error_message, msg, sizeof(msg)));
	otlp__export_profiles_service_response__free_unpacked(r, NULL);
}
