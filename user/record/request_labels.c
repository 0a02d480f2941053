// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/request_labels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"
#include "python/context_vars.h"
#include "python/otel_ids.h"
#include "python/procmem.h"
#include "python/value_label.h"

/* A process's variables are walked again, until all is found, after 50 ms,
 * then twice as long after each look that found nothing (50 ms still once
 * OpenTelemetry's variable was met: see SEEN_LOOKS), up to 2 s: a
 * host of Python processes without OpenTelemetry costs a look each every
 * 2 s, not 20 a second. */
#define LOOK_FIRST_NS (50 * 1000000ULL)
#define LOOK_MAX_NS (2000 * 1000000ULL)
/* ... but the first looks come with samples 5 ms apart or more: a look
 * finds the variables only while a request runs, and where samples are few
 * (memory mode: one per 512 KiB allocated) a look every 2 s found
 * OpenTelemetry's after most of a 4 s recording had gone by unlabelled.
 * Apart, not with every sample: samples come in bursts, and 32 looks of one
 * burst saw one moment (between two requests, found nothing). */
#define EAGER_LOOKS 32
#define EAGER_APART_NS (5 * 1000000ULL)
/* ... and after a sample that found nothing, looks on a timer of their own
 * (request_proc__look): a sample is read 0.2 ms after it was taken, and in
 * a Flask shop whose requests last 1 ms that was often after the request
 * had reset its variables (its memory samples, one per 512 KiB, found
 * OpenTelemetry at the third, 3 to 5 of 25 unlabelled). A look every 1 ms
 * for 100 ms meets a request in flight if a quarter of the time is one. */
#define TIMED_LOOKS 100
/* ... and once a look has met OpenTelemetry's variable with no span in it
 * (between requests, or a Context whose span key is beyond what is read),
 * the process is known to trace: its looks go on 10 ms apart for 5 s more,
 * and those with samples stay 50 ms apart. Under load a target runs in
 * slices of a few ms, and 100 looks 1 ms apart had seen it in a handful of
 * moments, none in a request: a 4 s recording went by with no label. */
#define SEEN_LOOKS 500
#define SEEN_LOOK_EVERY_NS (10 * 1000000ULL)
/* Spans and traces remembered per process: beyond, they are forgotten
 * (a span is read again if seen again): bounded whatever the request rate. */
#define SPANS_MAX 8192
#define TRACES_MAX 4096
#define VALUE_TYPES 8

struct span_seen {
	uint32_t name; /* string id; 0: none */
	uint64_t parent;
	uint64_t trace_hi, trace_lo; /* its trace: what BPF no longer reads once it is known */
	bool root;                   /* a local root: no parent, or another process's */
};

/* Spans named since ingest last took them (request_proc__named), for BPF's
 * py_spans_known: beyond, BPF reads those spans whole, as before. */
#define NAMED_MAX 256

struct trace_root {
	uint64_t span;     /* the local root's span id */
	uint32_t endpoint; /* its name's string id */
};

struct request_proc {
	struct pyebpf_py_ctx bpf;
	uint64_t str_type; /* str's type: a span's name is one */
	uint64_t next_look_ns, look_every_ns, last_look_ns;
	unsigned looks, timed_looks;
	bool otel_seen;       /* a look met OpenTelemetry's variable (PY_CTX_SEEN_OTEL) */
	uint64_t look_tstate; /* the thread a timed look reads: the last sample's */
	uint64_t timed_vars;  /* its variables at the last timed look */
	uint64_t timed_last_ns;
	struct hashmap *spans; /* span id → struct span_seen * */
	uint64_t named[NAMED_MAX];
	size_t nnamed;
	bool retell;            /* bpf.known_gen moved on: BPF must be told */
	struct hashmap *traces; /* trace id (16 bytes) → struct trace_root * */
	struct {
		uint64_t type;
		enum py_value_kind kind;
	} types[VALUE_TYPES]; /* the label value's types met */
	size_t ntypes;
};

void request_proc__free(struct request_proc *r)
{
	if (!r)
		return;
	hashmap__free_values(r->spans, free); /* and the map */
	hashmap__free_values(r->traces, free);
	free(r);
}

static bool all_found(const struct request_proc *r, const char *label)
{
	return r->bpf.otel_var && (!label || r->bpf.label_var);
}

static enum py_value_kind value_kind(struct request_proc *r, uint32_t pid, const struct py_layout *l, uint64_t type)
{
	uint64_t name_at = 0;
	char name[16] = "";

	for (size_t i = 0; i < r->ntypes; i++)
		if (r->types[i].type == type)
			return r->types[i].kind;
	if (procmem_u64((pid_t)pid, type + l->tp_name, &name_at) ||
	    procmem_read((pid_t)pid, name_at, name, sizeof(name) - 1))
		return PY_VALUE_OTHER; /* not remembered: tried again next time */
	name[sizeof(name) - 1] = '\0';
	if (r->ntypes < VALUE_TYPES) {
		r->types[r->ntypes].type = type;
		r->types[r->ntypes].kind = py_value_kind_of(name);
		return r->types[r->ntypes++].kind;
	}
	return py_value_kind_of(name);
}

static void label_value(struct request_proc *r, struct profile *prof, uint32_t pid, const struct py_layout *l,
			const struct pyebpf_ctx_read *c, const char *label, struct sample_request *out)
{
	uint64_t type;
	char text[PYEBPF_CTX_LABEL_BYTES * 4 + 8];

	if (!c->label || l->ob_type + 8 > sizeof(c->label_raw))
		return;
	memcpy(&type, c->label_raw + l->ob_type, sizeof(type));
	if (py_value_label(l, value_kind(r, pid, l, type), c->label_raw, sizeof(c->label_raw), text, sizeof(text))) {
		out->ctx_key = profile__str(prof, label);
		out->ctx_value = profile__request_str(prof, text);
	}
}

/* The span of id ids->span, from the sample that first showed it (its name
 * and parent, copied by BPF). */
static const struct span_seen *span_seen(struct request_proc *r, struct profile *prof, const struct py_layout *l,
					 const struct pyebpf_ctx_read *c, const struct otel_ids *ids)
{
	struct span_seen *seen = hashmap__get_ptr(r->spans, &ids->span, sizeof(ids->span));
	uint64_t type, hi;
	char name[PYEBPF_CTX_NAME_BYTES * 4 + 8];
	bool created;

	if (seen)
		return seen;
	if (hashmap__size(r->spans) >= SPANS_MAX) {
		hashmap__free_values(r->spans, free);
		r->spans = hashmap__new();
		/* What BPF was told of them holds no more. */
		r->bpf.known_gen++;
		r->retell = true;
		r->nnamed = 0;
	}
	seen = xcalloc(1, sizeof(*seen));
	seen->trace_hi = ids->trace_hi;
	seen->trace_lo = ids->trace_lo;
	memcpy(&type, c->name_raw + l->ob_type, sizeof(type));
	if ((c->flags & PYEBPF_CTX_NAME) && type == r->str_type &&
	    py_value_label(l, PY_VALUE_STR, c->name_raw, sizeof(c->name_raw), name, sizeof(name)))
		seen->name = profile__str(prof, name);
	if (c->parent_len)
		otel_ids_from_digits(c->parent_digits, c->parent_len, &hi, &seen->parent);
	seen->root = !seen->parent || (c->flags & PYEBPF_CTX_PARENT_REMOTE);
	*hashmap__put_ptr(r->spans, &ids->span, sizeof(ids->span), &created) = seen;
	if (r->nnamed < NAMED_MAX)
		r->named[r->nnamed++] = ids->span;
	return seen;
}

/* The endpoint: the local root's name. Its http.route attribute would do
 * too, but the SDK's spans die as they end, before most can be read, and a
 * label must not change its value with the timing: the name the server
 * instrumentations give it ("GET /orders/{id}") says the route as well. */
static uint32_t endpoint_of(const struct span_seen *s)
{
	return s->name;
}

/* The request's local root: span id (its hex in *out) and endpoint. */
static void root_labels(struct profile *prof, uint64_t span, uint32_t endpoint, struct sample_request *out)
{
	char hex[17];

	otel_span_hex(span, hex);
	out->root_span = profile__request_str(prof, hex);
	out->endpoint = endpoint;
}

static void span_labels(struct request_proc *r, struct profile *prof, const struct py_layout *l,
			const struct pyebpf_ctx_read *c, struct sample_request *out)
{
	struct otel_ids ids;
	char hex[33];
	uint64_t key[2], up_id;
	const struct span_seen *seen, *up;
	struct trace_root *root;
	void **slot;
	bool created;

	if (!c->span || !otel_ids_from_digits(c->span_digits, c->span_len, &key[0], &ids.span) || key[0] || !ids.span)
		return;
	if (c->flags & PYEBPF_CTX_KNOWN) {
		/* BPF read the id alone: the rest is the span's as first seen.
		 * One forgotten since (the table was full) has no labels this
		 * once, never another's; BPF reads it whole again from now. */
		if (!(seen = hashmap__get_ptr(r->spans, &ids.span, sizeof(ids.span))))
			return;
		ids.trace_hi = seen->trace_hi;
		ids.trace_lo = seen->trace_lo;
	} else {
		if (!otel_ids_from_digits(c->trace_digits, c->trace_len, &ids.trace_hi, &ids.trace_lo) ||
		    !(ids.trace_hi | ids.trace_lo))
			return;
		seen = span_seen(r, prof, l, c, &ids);
	}
	otel_trace_hex(ids.trace_hi, ids.trace_lo, hex);
	out->trace_id = profile__request_str(prof, hex);
	otel_span_hex(ids.span, hex);
	out->span_id = profile__request_str(prof, hex);
	out->span_name = seen->name;
	key[0] = ids.trace_hi;
	key[1] = ids.trace_lo;
	if (seen->root) {
		if (hashmap__size(r->traces) >= TRACES_MAX && !hashmap__get_ptr(r->traces, key, sizeof(key))) {
			hashmap__free_values(r->traces, free);
			r->traces = hashmap__new();
		}
		slot = hashmap__put_ptr(r->traces, key, sizeof(key), &created);
		if (created)
			*slot = xcalloc(1, sizeof(struct trace_root));
		root = *slot;
		root->span = ids.span;
		root->endpoint = endpoint_of(seen);
		root_labels(prof, root->span, root->endpoint, out);
		return;
	}
	/* An inner span: its trace's root, when seen current before; else up
	 * its parents as far as they were seen; else its own name (and no
	 * root span id: a wrong one would select another request). */
	if ((root = hashmap__get_ptr(r->traces, key, sizeof(key)))) {
		root_labels(prof, root->span, root->endpoint, out);
		return;
	}
	up = seen;
	up_id = ids.span;
	for (int hops = 0; hops < 16 && up && !up->root; hops++) {
		up_id = up->parent;
		up = hashmap__get_ptr(r->spans, &up_id, sizeof(up_id));
	}
	if (up && up->root)
		root_labels(prof, up_id, endpoint_of(up), out);
	else
		out->endpoint = endpoint_of(seen);
}

/*
 * Walk the thread's variables for what BPF must read; else, when
 * sample_vars (a sample's, 0: none) is not the thread's, those, if they
 * still live. Returns what was found (PY_CTX_FOUND_*); *seen: the thread's
 * variables looked at (0: none).
 */
static unsigned look(struct request_proc *r, uint32_t pid, const struct py_layout *lay, uint64_t tstate,
		     uint64_t sample_vars, const char *label, uint64_t *seen)
{
	/* The thread's variables now, not the sample's: a request sets them
	 * several times, each a new mapping, and the one sampled is gone
	 * within a millisecond. */
	uint64_t context = 0, vars = 0;
	unsigned found = 0;

	if (tstate && lay->bpf.tstate_context && !procmem_u64((pid_t)pid, tstate + lay->bpf.tstate_context, &context) &&
	    context && !procmem_u64((pid_t)pid, context + lay->ob_type + 16, &vars) && vars && vars != *seen)
		found = py_ctx_discover((pid_t)pid, lay, vars, label, &r->bpf);
	*seen = vars;
	if (!(found & (PY_CTX_FOUND_OTEL | PY_CTX_FOUND_LABEL)) && sample_vars && sample_vars != vars)
		found |= py_ctx_discover((pid_t)pid, lay, sample_vars, label, &r->bpf);
	if (found & PY_CTX_FOUND_OTEL)
		procmem_u64((pid_t)pid, r->bpf.span_key + lay->ob_type, &r->str_type); /* the key is a str */
	if (found & PY_CTX_SEEN_OTEL)
		r->otel_seen = true;
	return found & ~PY_CTX_SEEN_OTEL; /* nothing for BPF */
}

bool request_proc__wants_look(const struct request_proc *r, const char *label)
{
	return r && r->look_tstate && !all_found(r, label) &&
	       r->timed_looks < TIMED_LOOKS + (r->otel_seen ? SEEN_LOOKS : 0);
}

bool request_proc__look(struct request_proc *r, uint32_t pid, const struct py_interp *pi, const char *label,
			uint64_t now, struct pyebpf_py_ctx *tell)
{
	/* A poll woken by samples comes sooner: the looks stay a millisecond
	 * apart, so that they span 100 ms however busy the ring is. */
	if (!request_proc__wants_look(r, label) ||
	    now < r->timed_last_ns +
			    (r->timed_looks < TIMED_LOOKS ? REQUEST_LOOK_EVERY_MS * 1000000ULL : SEEN_LOOK_EVERY_NS))
		return false;
	r->timed_last_ns = now;
	/* Only a thread whose variables changed since the last timed look is
	 * walked: an idle thread's cost 2 reads a look. */
	r->timed_looks++;
	if (!look(r, pid, &pi->layout, r->look_tstate, 0, label, &r->timed_vars))
		return false;
	*tell = r->bpf;
	return true;
}

bool request_labels(struct request_proc **rp, struct profile *prof, uint32_t pid, const struct py_interp *pi,
		    const struct pyebpf_sample *s, const char *label, uint64_t now, struct sample_labels *l,
		    struct pyebpf_py_ctx *tell)
{
	struct request_proc *r = *rp;
	const struct py_layout *lay = &pi->layout;
	bool told = false;

	if (!(s->flags & PYEBPF_SAMPLE_CTX) || !s->ctx.vars)
		return false;
	if (!r) {
		r = *rp = xcalloc(1, sizeof(*r));
		r->spans = hashmap__new();
		r->traces = hashmap__new();
	}
	if (s->tstate)
		r->look_tstate = s->tstate;
	if (!all_found(r, label) &&
	    ((r->looks < EAGER_LOOKS && now >= r->last_look_ns + EAGER_APART_NS) || now >= r->next_look_ns)) {
		uint64_t seen = 0;
		unsigned found = look(r, pid, lay, s->tstate, s->ctx.vars, label, &seen);

		r->looks++;
		r->last_look_ns = now;
		uint64_t every = r->look_every_ns ? r->look_every_ns : LOOK_FIRST_NS;

		r->look_every_ns = (found & (PY_CTX_FOUND_OTEL | PY_CTX_FOUND_LABEL)) || r->otel_seen ? LOOK_FIRST_NS
				   : every * 2 < LOOK_MAX_NS                                          ? every * 2
												      : LOOK_MAX_NS;
		r->next_look_ns = now + r->look_every_ns;
		if (found) {
			*tell = r->bpf;
			told = true;
		}
	}
	struct sample_request rq = { 0 };

	span_labels(r, prof, lay, &s->ctx, &rq);
	if (label)
		label_value(r, prof, pid, lay, &s->ctx, label, &rq);
	l->request = profile__request(prof, &rq);
	if (r->retell) {
		r->retell = false;
		*tell = r->bpf;
		told = true;
	}
	return told;
}

size_t request_proc__named(struct request_proc *r, uint64_t *spans, size_t max, uint32_t *gen)
{
	size_t n = r ? (r->nnamed < max ? r->nnamed : max) : 0;

	if (!n)
		return 0;
	memcpy(spans, r->named + r->nnamed - n, n * sizeof(*spans));
	r->nnamed -= n;
	*gen = r->bpf.known_gen;
	return n;
}

void request_labels_of_task(struct request_proc *r, struct profile *prof, uint32_t pid, const struct py_interp *pi,
			    uint64_t task_context, const char *label, struct sample_labels *l)
{
	struct pyebpf_ctx_read c;
	struct sample_request rq = { 0 };

	/* Only what a thread's sample found: a task's context is read as BPF
	 * reads a thread's, so a waiting request and a running one agree. */
	if (!r || !task_context || (!r->bpf.otel_var && !r->bpf.label_var))
		return;
	py_ctx_read((pid_t)pid, &pi->layout, &r->bpf, task_context, &c);
	span_labels(r, prof, &pi->layout, &c, &rq);
	if (label)
		label_value(r, prof, pid, &pi->layout, &c, label, &rq);
	l->request = profile__request(prof, &rq);
}
