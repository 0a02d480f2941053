// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "profile/profile.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/strtab.h"
#include "base/util.h"

struct profile {
	struct strtab strs;
	/* A request's own strings (ids, --context-label's value): one per trace
	 * sampled, so an interval's alone, cleared with its samples
	 * (PROFILE_REQUEST_STR says which ids are these). */
	struct strtab request_strs;

	struct hashmap *frame_ids; /* struct frame bytes → id */
	struct frame *frames;
	size_t nframes, frames_cap;

	/* Distinct frame lists (root first), shared by every entry that has one. */
	struct hashmap *stack_ids; /* frame ids' bytes → stack id */
	struct stack **stacks;
	size_t nstacks, stacks_cap;
	uint64_t stacks_gen;

	struct hashmap *entry_ids;       /* entry_key bytes → entry id */
	struct hashmap *request_ids;     /* sample_request bytes → its index in requests */
	struct sample_request *requests; /* [0] is none */
	size_t nrequests, requests_cap;
	struct entry *entries;
	size_t nentries, entries_cap;

	uint8_t *log; /* every add: see log_append() */
	size_t log_len, log_cap, nevents;
	uint64_t log_last_us;

	struct profile_meta meta;
	struct profile_module *modules; /* what is known of mapped files, in the order noted */
	size_t nmodules, modules_cap;
	struct hashmap *module_ids; /* module string id → index */
	uint64_t total;
	char **comments;
	size_t ncomments;
};

struct stack {
	uint32_t n;
	uint32_t frames[];
};

/* Hash key of an aggregated sample: its labels and stack. */
struct entry_key {
	struct sample_labels labels;
	uint32_t stack;
	uint32_t zero; /* hashed as bytes: no padding */
};

struct entry {
	struct entry_key key;
	uint64_t count;
};

struct profile *profile__new(void)
{
	struct profile *p = xcalloc(1, sizeof(*p));

	strtab__init(&p->strs); /* "" is 0 */
	strtab__init(&p->request_strs);
	p->frame_ids = hashmap__new();
	p->stack_ids = hashmap__new();
	p->entry_ids = hashmap__new();
	p->request_ids = hashmap__new();
	p->module_ids = hashmap__new();
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	strtab__free(&p->strs);
	strtab__free(&p->request_strs);
	free(p->frames);
	for (size_t i = 0; i < p->nstacks; i++)
		free(p->stacks[i]);
	free(p->stacks);
	free(p->entries);
	free(p->log);
	for (size_t i = 0; i < p->ncomments; i++)
		free(p->comments[i]);
	free(p->comments);
	hashmap__free(p->frame_ids);
	hashmap__free(p->stack_ids);
	hashmap__free(p->entry_ids);
	hashmap__free(p->request_ids);
	free(p->requests);
	hashmap__free(p->module_ids);
	free(p->modules);
	free(p);
}

void profile__note_module(struct profile *p, const struct profile_module *m)
{
	bool created;
	uint64_t *v = hashmap__put(p->module_ids, &m->module, sizeof(m->module), &created);
	struct profile_module *have;

	if (created) {
		xgrow(&p->modules, &p->modules_cap, p->nmodules + 1, sizeof(*p->modules));
		p->modules[p->nmodules] = (struct profile_module){ .module = m->module };
		*v = p->nmodules++;
	}
	have = &p->modules[*v];
	have->exe |= m->exe;
	if (m->build_id)
		have->build_id = m->build_id;
	if (m->limit) {
		have->start = m->start;
		have->limit = m->limit;
		have->file_offset = m->file_offset;
	}
}

const struct profile_module *profile__module(const struct profile *p, uint32_t module)
{
	const uint64_t *v = hashmap__get(p->module_ids, &module, sizeof(module));

	return v ? &p->modules[*v] : NULL;
}

const struct profile_module *profile__modules(const struct profile *p, size_t *n)
{
	*n = p->nmodules;
	return p->modules;
}

/* s in table t, as UTF-8. */
static uint32_t intern(struct strtab *t, const char *s)
{
	const char *bad = s;
	size_t n;
	uint32_t id;

	/* Only UTF-8 is ever added, so a string found is one: the check below
	 * is paid once per distinct string, not per sample. */
	if (strtab__find(t, s, &id))
		return id;
	/* Every output format and backend needs UTF-8 (a protobuf string, JSON,
	 * XML): bytes that are not (a thread name the kernel cut mid-character,
	 * a file name in Latin-1, a string read while it changed) become U+FFFD
	 * here, once, rather than in each writer. */
	while (*bad && (n = utf8_valid_len(bad)))
		bad += n;
	if (!*bad)
		return strtab__id(t, s);

	char *clean = xmalloc(strlen(s) * 3 + 1), *o = clean;

	for (const char *c = s; *c;) {
		n = utf8_valid_len(c);
		if (n) {
			memcpy(o, c, n);
			o += n;
			c += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			c++;
		}
	}
	*o = '\0';
	id = strtab__id(t, clean);

	free(clean);
	return id;
}

uint32_t profile__str(struct profile *p, const char *s)
{
	return intern(&p->strs, s);
}

uint32_t profile__request_str(struct profile *p, const char *s)
{
	uint32_t id = *s ? intern(&p->request_strs, s) : 0;

	/* Past 2^31 strings in one interval the table is not what stops it. */
	return id ? PROFILE_REQUEST_STR | id : 0;
}

const char *profile__str_at(const struct profile *p, uint32_t id)
{
	if (id & PROFILE_REQUEST_STR)
		return strtab__at(&p->request_strs, id & ~PROFILE_REQUEST_STR);
	return strtab__at(&p->strs, id);
}

uint32_t profile__frame(struct profile *p, const struct frame *f)
{
	bool created;
	uint64_t *v = hashmap__put(p->frame_ids, f, sizeof(*f), &created);

	if (created) {
		xgrow(&p->frames, &p->frames_cap, p->nframes + 1, sizeof(*p->frames));
		p->frames[p->nframes] = *f;
		*v = p->nframes++;
	}
	return (uint32_t)*v;
}

const struct frame *profile__frame_at(const struct profile *p, uint32_t id)
{
	return id < p->nframes ? &p->frames[id] : NULL;
}

/* ---- the log of adds ------------------------------------------------- */

static size_t put_varint(uint8_t *b, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		b[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (uint8_t)v;
	return n;
}

static bool get_varint(const uint8_t *b, size_t len, size_t *pos, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned shift = 0; shift < 64 && *pos < len; shift += 7) {
		uint8_t c = b[(*pos)++];

		r |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

/*
 * One add: varint (entry << 3 | 4 if its time is before the previous one's
 * | 2 if untimed | 1 if count > 1), then the count when > 1, then, when
 * timed, how many microseconds after (or before) the previous timed add's it
 * is, as a varint: at 128 CPUs x 99 Hz adds are ~79 us apart, one byte.
 * Usually 2-4 bytes an add.
 */
static void log_append(struct profile *p, uint32_t entry, uint32_t count, uint64_t time_ns)
{
	uint8_t b[32];
	size_t n;
	bool timed = time_ns != PROFILE_NO_TIME;
	uint64_t us = timed ? time_ns / 1000 : 0;
	bool before = timed && us < p->log_last_us;

	n = put_varint(b, (uint64_t)entry << 3 | (before ? 4 : 0) | (timed ? 0 : 2) | (count != 1));
	if (count != 1)
		n += put_varint(b + n, count);
	if (timed) {
		n += put_varint(b + n, before ? p->log_last_us - us : us - p->log_last_us);
		p->log_last_us = us;
	}
	xgrow(&p->log, &p->log_cap, p->log_len + n, 1);
	memcpy(p->log + p->log_len, b, n);
	p->log_len += n;
	p->nevents++;
}

bool profile_log_next(const uint8_t *log, size_t len, struct profile_event_cursor *c, struct profile_event *ev,
		      bool *bad)
{
	uint64_t h, count = 1, d = 0;

	*bad = false;
	if (c->pos >= len)
		return false;
	if (!get_varint(log, len, &c->pos, &h) || h >> 3 > UINT32_MAX ||
	    ((h & 1) && !get_varint(log, len, &c->pos, &count)) || count > UINT32_MAX ||
	    (!(h & 2) && !get_varint(log, len, &c->pos, &d))) {
		*bad = true;
		return false;
	}
	ev->entry = (uint32_t)(h >> 3);
	ev->count = (uint32_t)count;
	ev->time_ns = PROFILE_NO_TIME;
	if (!(h & 2)) {
		const uint64_t max_us = PROFILE_NO_TIME / 1000 - 1;

		if ((h & 4) ? d > c->last_us : d > max_us - c->last_us) {
			*bad = true;
			return false;
		}
		c->last_us = (h & 4) ? c->last_us - d : c->last_us + d;
		ev->time_ns = c->last_us * 1000;
	}
	return true;
}

bool profile__next_event(const struct profile *p, struct profile_event_cursor *c, struct profile_event *ev)
{
	bool bad;

	return profile_log_next(p->log, p->log_len, c, ev, &bad);
}

size_t profile__nevents(const struct profile *p)
{
	return p->nevents;
}

const uint8_t *profile__event_log(const struct profile *p, size_t *len)
{
	*len = p->log_len;
	return p->log;
}

uint32_t profile__stack(struct profile *p, const uint32_t *frames, uint32_t n)
{
	size_t len = (size_t)n * sizeof(*frames);
	bool created;
	uint64_t *v = hashmap__put(p->stack_ids, n ? (const void *)frames : "", len, &created);

	if (created) {
		struct stack *st = xmalloc(sizeof(*st) + len);

		st->n = n;
		if (n)
			memcpy(st->frames, frames, len);
		xgrow(&p->stacks, &p->stacks_cap, p->nstacks + 1, sizeof(*p->stacks));
		p->stacks[p->nstacks] = st;
		*v = p->nstacks++;
	}
	return (uint32_t)*v;
}

const uint32_t *profile__stack_frames(const struct profile *p, uint32_t stack, uint32_t *n)
{
	if (stack >= p->nstacks) {
		*n = 0;
		return NULL;
	}
	*n = p->stacks[stack]->n;
	return p->stacks[stack]->frames;
}

uint64_t profile__stacks_gen(const struct profile *p)
{
	return p->stacks_gen;
}

void profile__add_stack_at(struct profile *p, const struct sample_labels *l, uint32_t stack, uint32_t count,
			   uint64_t time_ns)
{
	struct entry_key k = { .labels = *l, .stack = stack };
	bool created;
	uint64_t *v = hashmap__put(p->entry_ids, &k, sizeof(k), &created);

	if (created) {
		xgrow(&p->entries, &p->entries_cap, p->nentries + 1, sizeof(*p->entries));
		p->entries[p->nentries] = (struct entry){ .key = k };
		*v = p->nentries++;
	}
	p->entries[*v].count += count;
	log_append(p, (uint32_t)*v, count, time_ns);
	p->total += count;
}

void profile__add_at(struct profile *p, const struct sample_labels *l, const uint32_t *frames, uint32_t n,
		     uint32_t count, uint64_t time_ns)
{
	profile__add_stack_at(p, l, profile__stack(p, frames, n), count, time_ns);
}

void profile__add(struct profile *p, const struct sample_labels *l, const uint32_t *frames, uint32_t n, uint32_t count)
{
	profile__add_at(p, l, frames, n, count, PROFILE_NO_TIME);
}

/* A request's strings, copied out of the tables that are about to go. */
struct request_text {
	char *field[sizeof(struct sample_request) / sizeof(uint32_t)];
};

static void request_text_of(const struct profile *p, uint32_t id, struct request_text *t)
{
	const uint32_t *v = (const uint32_t *)profile__request_at(p, id);

	for (size_t i = 0; i < ARRAY_SIZE(t->field); i++)
		t->field[i] = v[i] ? xstrdup(profile__str_at(p, v[i])) : NULL;
}

/* A request made again from its strings: its id in the new tables. Which
 * strings are a request's own is the field's, as request_labels.c makes
 * them (the trace's and span's ids and the variable's value). */
static uint32_t request_from_text(struct profile *p, struct request_text *t)
{
	struct sample_request r = { 0 };
	uint32_t *v = (uint32_t *)&r;
	const uint32_t *own[] = { &r.trace_id, &r.span_id, &r.root_span, &r.ctx_value };

	for (size_t i = 0; i < ARRAY_SIZE(t->field); i++) {
		bool is_own = false;

		if (!t->field[i])
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(own); k++)
			is_own |= own[k] == &v[i];
		v[i] = is_own ? profile__request_str(p, t->field[i]) : profile__str(p, t->field[i]);
		free(t->field[i]);
	}
	return profile__request(p, &r);
}

void profile__clear_samples(struct profile *p)
{
	profile__clear_samples_carrying(p, NULL, 0);
}

void profile__clear_samples_carrying(struct profile *p, uint32_t *carry, size_t n)
{
	struct request_text *texts = n ? xcalloc(n, sizeof(*texts)) : NULL;

	for (size_t i = 0; i < n; i++)
		request_text_of(p, carry[i], &texts[i]);
	/* The requests go with the samples that named them: a day of
	 * --continuous sees a trace id per request sampled, and each
	 * interval's file holds its own. */
	hashmap__free(p->request_ids);
	p->request_ids = hashmap__new();
	p->nrequests = 0;
	strtab__free(&p->request_strs);
	strtab__init(&p->request_strs);
	for (size_t i = 0; i < n; i++)
		carry[i] = carry[i] ? request_from_text(p, &texts[i]) : 0;
	free(texts);

	/* Stacks go too (an interval holds the stacks of its own samples): stack
	 * ids held elsewhere are stale now. */
	for (size_t i = 0; i < p->nstacks; i++)
		free(p->stacks[i]);
	free(p->stacks);
	p->stacks = NULL;
	p->nstacks = p->stacks_cap = 0;
	hashmap__free(p->stack_ids);
	p->stack_ids = hashmap__new();
	p->stacks_gen++;
	free(p->entries);
	p->entries = NULL;
	p->nentries = p->entries_cap = 0;
	free(p->log);
	p->log = NULL;
	p->log_len = p->log_cap = p->nevents = 0;
	p->log_last_us = 0;
	for (size_t i = 0; i < p->ncomments; i++)
		free(p->comments[i]);
	free(p->comments);
	p->comments = NULL;
	p->ncomments = 0;
	hashmap__free(p->entry_ids);
	p->entry_ids = hashmap__new();
	p->total = 0;
}

void profile__add_comment(struct profile *p, const char *text)
{
	size_t cap = p->ncomments;

	xgrow(&p->comments, &cap, p->ncomments + 1, sizeof(*p->comments));
	p->comments[p->ncomments++] = xstrdup(text);
}

const char *const *profile__comments(const struct profile *p, size_t *n)
{
	*n = p->ncomments;
	return (const char *const *)p->comments;
}

struct profile_meta *profile__meta(struct profile *p)
{
	return &p->meta;
}

const char *profile__kind(const struct profile *p)
{
	return p->meta.mem_sample_bytes ? "memory (--mode memory)"
	       : p->meta.wall           ? "wall-clock time (--mode wall or off-cpu)"
					: "CPU time";
}

const struct profile_meta *profile__meta_of(const struct profile *p)
{
	return &p->meta;
}

static int cmp_thread_event(const void *a, const void *b)
{
	const struct profile_thread_event *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->event < y->event ? -1 : x->event > y->event;
}

struct profile_thread_event *profile__events_by_thread(const struct profile *p, bool timed_only, size_t *n)
{
	struct profile_thread_event *v = xcalloc(p->nevents + 1, sizeof(*v));
	struct profile_event_cursor c = { 0 };
	struct profile_event ev;

	*n = 0;
	for (size_t i = 0; profile__next_event(p, &c, &ev); i++) {
		const struct entry_key *k = &p->entries[ev.entry].key;

		if ((timed_only && ev.time_ns == PROFILE_NO_TIME) || (k->labels.flags & LABEL_TASK))
			continue; /* task time is no thread's timeline */
		v[(*n)++] = (struct profile_thread_event){ .pid = k->labels.pid,
							   .tid = k->labels.tid,
							   .time_ns = ev.time_ns,
							   .event = i,
							   .entry = ev.entry,
							   .count = ev.count };
	}
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_thread_event);
	return v;
}

size_t profile__nstrs(const struct profile *p)
{
	return p->strs.n;
}

_Static_assert(sizeof(struct frame) == 32, "frames are hashed as bytes: no padding");
_Static_assert(sizeof(struct sample_labels) == 64, "labels are hashed as bytes: no padding");

size_t profile__nframes(const struct profile *p)
{
	return p->nframes;
}

uint64_t profile__total(const struct profile *p)
{
	return p->total;
}

size_t profile__nstacks(const struct profile *p)
{
	return p->nentries;
}

void profile__entry(const struct profile *p, uint32_t id, struct profile_entry *e)
{
	const struct entry_key *k = &p->entries[id].key;
	const struct stack *st = p->stacks[k->stack];

	e->labels = k->labels;
	e->frames = st->frames;
	e->nframes = st->n;
	e->count = p->entries[id].count;
}

int profile__next(const struct profile *p, size_t *pos, struct profile_entry *e)
{
	if (*pos >= p->nentries)
		return 0;
	profile__entry(p, (uint32_t)(*pos)++, e);
	return 1;
}

static const struct sample_request no_request;

uint32_t profile__request(struct profile *p, const struct sample_request *r)
{
	bool created;
	uint64_t *v;

	if (!memcmp(r, &no_request, sizeof(*r)))
		return 0;
	v = hashmap__put(p->request_ids, r, sizeof(*r), &created);
	if (created) {
		if (!p->nrequests) {
			xgrow(&p->requests, &p->requests_cap, 1, sizeof(*p->requests));
			p->requests[p->nrequests++] = no_request;
		}
		xgrow(&p->requests, &p->requests_cap, p->nrequests + 1, sizeof(*p->requests));
		p->requests[p->nrequests] = *r;
		*v = p->nrequests++;
	}
	return (uint32_t)*v;
}

const struct sample_request *profile__request_at(const struct profile *p, uint32_t id)
{
	return id && id < p->nrequests ? &p->requests[id] : &no_request;
}

const char *const request_label_names[5] = { "trace_id", "span_id", "span_name", "endpoint", "root_span_id" };

uint32_t *sample_request__field(struct sample_request *r, const char *name)
{
	uint32_t *fields[] = { &r->trace_id, &r->span_id, &r->span_name, &r->endpoint, &r->root_span };

	_Static_assert(ARRAY_SIZE(fields) == ARRAY_SIZE(request_label_names), "a name per field");
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (!strcmp(name, request_label_names[i]))
			return fields[i];
	return NULL;
}

void sample_request__map(struct sample_request *r, uint32_t (*map)(void *ctx, uint32_t id), void *ctx)
{
	uint32_t *v = (uint32_t *)r;

	_Static_assert(sizeof(*r) % sizeof(uint32_t) == 0, "a request is string ids only");
	for (size_t i = 0; i < sizeof(*r) / sizeof(*v); i++)
		v[i] = v[i] ? map(ctx, v[i]) : 0;
}

const char *profile__label_value(const struct profile *p, const struct sample_labels *l, const char *key)
{
	struct sample_request r = *profile__request_at(p, l->request);
	const uint32_t *id = sample_request__field(&r, key);

	if (!id && r.ctx_key && !strcmp(key, profile__str_at(p, r.ctx_key)))
		id = &r.ctx_value;
	return id && *id ? profile__str_at(p, *id) : NULL;
}
