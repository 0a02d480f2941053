// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/context_vars.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/procmem.h"
#include "python/threadname.h"

/* Bounds of a walk: a thread's variables are a handful; a HAMT is at most
 * 7 levels and a collision node, and no walk reads more than WALK_NODES. */
#define WALK_DEPTH 8
#define WALK_NODES 256

struct walk {
	pid_t pid;
	const struct py_layout *l;
	const char *label;
	struct pyebpf_py_ctx *c;
	unsigned found, nodes;
};

static uint64_t rd(pid_t pid, uint64_t addr)
{
	uint64_t v = 0;

	if (procmem_u64(pid, addr, &v))
		return 0;
	return v;
}

/* The name of obj's type into out ("" when unreadable). */
static void type_name(pid_t pid, const struct py_layout *l, uint64_t obj, char *out, size_t size)
{
	uint64_t type = rd(pid, obj + l->ob_type), name = type ? rd(pid, type + l->tp_name) : 0;

	out[0] = '\0';
	if (!name || procmem_read(pid, name, out, size - 1))
		out[0] = '\0';
	out[size - 1] = '\0';
	out[strnlen(out, size - 1)] = '\0';
}

int32_t py_hamt_hash(int64_t h)
{
	int32_t x = (int32_t)((uint64_t)h & 0xffffffffu) ^ (int32_t)((uint64_t)h >> 32);

	return x == -1 ? -2 : x;
}

/* A node's type as BPF tells them apart; learns the types it meets. */
enum node_kind {
	NODE_UNKNOWN,
	NODE_BITMAP,
	NODE_ARRAY,
	NODE_COLLISION
};

static enum node_kind node_kind(struct walk *w, uint64_t node)
{
	struct pyebpf_py_ctx *c = w->c;
	uint64_t type = rd(w->pid, node + w->l->ob_type);
	char name[32];

	if (!type)
		return NODE_UNKNOWN;
	if (type == c->bitmap_type)
		return NODE_BITMAP;
	if (type == c->array_type)
		return NODE_ARRAY;
	if (type == c->collision_type)
		return NODE_COLLISION;
	type_name(w->pid, w->l, node, name, sizeof(name));
	if (!strcmp(name, "hamt_bitmap_node") && !c->bitmap_type)
		c->bitmap_type = type;
	else if (!strcmp(name, "hamt_array_node") && !c->array_type)
		c->array_type = type;
	else if (!strcmp(name, "hamt_collision_node") && !c->collision_type)
		c->collision_type = type;
	else
		return NODE_UNKNOWN;
	w->found |= PY_CTX_FOUND_TYPES;
	return node_kind(w, node);
}

uint64_t py_ctx_lookup(pid_t pid, const struct py_layout *l, const struct pyebpf_py_ctx *c, uint64_t vars, uint64_t var,
		       int32_t hash)
{
	uint32_t head = l->ob_type + 8, h = (uint32_t)hash;
	uint64_t node = rd(pid, vars + head);

	for (int level = 0; level < WALK_DEPTH && node; level++) {
		uint64_t type = rd(pid, node + l->ob_type), key, val;
		uint32_t idx = (h >> (5 * level)) & 0x1f, bit = 1u << idx, bitmap = 0;

		if (type && type == c->bitmap_type) {
			if (procmem_read(pid, node + head + 8, &bitmap, 4) || !(bitmap & bit))
				return 0;
			uint32_t pos = (uint32_t)__builtin_popcount(bitmap & (bit - 1));

			key = rd(pid, node + head + 16 + 16 * (uint64_t)pos);
			val = rd(pid, node + head + 24 + 16 * (uint64_t)pos);
			if (!key) {
				node = val;
				continue;
			}
			return key == var ? val : 0;
		}
		if (type && type == c->array_type) {
			node = rd(pid, node + head + 8 * (uint64_t)idx);
			continue;
		}
		if (type && type == c->collision_type) {
			for (int i = 0; i < 4; i++)
				if (rd(pid, node + head + 16 + 16 * (uint64_t)i) == var)
					return rd(pid, node + head + 24 + 16 * (uint64_t)i);
			return 0;
		}
		return 0;
	}
	return 0;
}

/* The name of a ContextVar into out; false when key is no ContextVar. */
static bool var_name(struct walk *w, uint64_t key, char *out, size_t size)
{
	char tn[48];
	char *s;
	size_t n;

	type_name(w->pid, w->l, key, tn, sizeof(tn));
	n = strlen(tn);
	if (n < 10 || strcmp(tn + n - 10, "ContextVar") != 0)
		return false;
	s = py_read_str(w->pid, w->l, rd(w->pid, key + w->l->ob_type + 8), 128);
	if (!s)
		return false;
	snprintf(out, size, "%s", s);
	free(s);
	return true;
}

/*
 * var's hash, as the HAMT files it: ContextVar.var_hash follows var_name,
 * var_default and, in builds that keep them, the cache's three fields
 * (3.13+'s free-threaded builds do not). Each place is tried by finding
 * var in the very tree it was found in: only the right one finds it.
 */
static bool var_hash(struct walk *w, uint64_t vars, uint64_t var, uint64_t value, int32_t *out)
{
	static const uint32_t after_head[] = { 40, 16 };

	for (size_t i = 0; i < sizeof(after_head) / sizeof(after_head[0]); i++) {
		int32_t h = py_hamt_hash((int64_t)rd(w->pid, var + w->l->ob_type + 8 + after_head[i]));

		if (py_ctx_lookup(w->pid, w->l, w->c, vars, var, h) == value) {
			*out = h;
			return true;
		}
	}
	return false;
}

/* Where a span keeps its attributes' values, as BPF's span_values() finds it; 0: not found. */
static uint64_t span_values_as_bpf(pid_t pid, const struct pyebpf_py_ctx *c, uint64_t span)
{
	uint64_t p = 0;
	uint8_t valid = 0;

	switch (c->span_how) {
	case PYEBPF_ATTR_VALUES:
	case PYEBPF_ATTR_TAGGED:
		p = rd(pid, span + (int64_t)c->span_off);
		if (!p || (c->span_how == PYEBPF_ATTR_TAGGED && !(p & 1)))
			return 0;
		p += (c->span_how == PYEBPF_ATTR_TAGGED) + c->dict_values;
		break;
	case PYEBPF_ATTR_INLINE:
		p = span + (int64_t)c->span_off;
		if (procmem_read(pid, p + 3, &valid, 1) || !valid)
			return 0;
		p += c->dict_values;
		break;
	case PYEBPF_ATTR_DICT:
		p = rd(pid, span + (int64_t)c->span_off);
		p = p ? rd(pid, p + c->dict_values) : 0;
		break;
	default:
		return 0;
	}
	return p;
}

/* What BPF's span_values() and value_at() read for a span's _context, done here to check it. */
static uint64_t span_context_as_bpf(pid_t pid, const struct pyebpf_py_ctx *c, uint64_t span)
{
	uint64_t p = span_values_as_bpf(pid, c, span);

	return p ? rd(pid, p + 8 * (uint64_t)c->span_index) : 0;
}

/* OpenTelemetry's Context (a dict) at ctx: its span key, and where its span keeps its ids. */
static void find_span(struct walk *w, uint64_t var, int32_t hash, uint64_t ctx)
{
	uint64_t kv[2 * 16], span = 0, key = 0, sc;
	size_t n = py_dict_items(w->pid, w->l, ctx, kv, 16);
	struct pyebpf_py_ctx where;
	char tn[32];

	for (size_t i = 0; i < n && !span; i++) {
		char *k = py_read_str(w->pid, w->l, kv[2 * i], 64);

		if (k && !strncmp(k, PY_OTEL_SPAN_KEY, strlen(PY_OTEL_SPAN_KEY))) {
			key = kv[2 * i];
			span = kv[2 * i + 1];
		}
		free(k);
	}
	if (!span || !py_attr_where(w->pid, w->l, span, "_context", &where))
		return;
	if (!(sc = py_attr_lookup(w->pid, w->l, span, "_context")))
		return;
	/* BPF must reach sc as it would; the type is read once, checked, and
	 * read again with that link: a span that ends meanwhile frees its
	 * SpanContext, and a type read from freed memory (once ~0) would be
	 * told to BPF for good, which then matched no span all the run. */
	uint64_t sctype = rd(w->pid, sc + w->l->ob_type);

	type_name(w->pid, w->l, sc, tn, sizeof(tn));
	if (!sctype || strcmp(tn, "SpanContext") != 0 || rd(w->pid, sc + w->l->ob_type) != sctype ||
	    span_context_as_bpf(w->pid, &where, span) != sc)
		return;
	/* Its name and parent, where its values keep them too (they do: the
	 * SDK's _Span sets all three in ReadableSpan.__init__). */
	struct pyebpf_py_ctx other;

	w->c->name_index = w->c->parent_index = 0;
	if (py_attr_where(w->pid, w->l, span, "_name", &other) && other.span_how == where.span_how &&
	    other.span_off == where.span_off)
		w->c->name_index = other.span_index + 1;
	if (py_attr_where(w->pid, w->l, span, "_parent", &other) && other.span_how == where.span_how &&
	    other.span_off == where.span_off)
		w->c->parent_index = other.span_index + 1;
	w->c->otel_var = var;
	w->c->otel_hash = hash;
	w->c->span_key = key;
	w->c->spanctx_type = sctype;
	w->c->span_how = where.span_how;
	w->c->span_off = where.span_off;
	w->c->span_index = where.span_index;
	w->c->dict_values = where.dict_values;
	w->found |= PY_CTX_FOUND_OTEL;
}

static void visit(struct walk *w, uint64_t vars, uint64_t key, uint64_t value)
{
	char name[128];
	int32_t hash;

	if (!var_name(w, key, name, sizeof(name)))
		return;
	if (!w->c->otel_var && !strcmp(name, PY_OTEL_CONTEXT_VAR) && var_hash(w, vars, key, value, &hash)) {
		find_span(w, key, hash, value);
		if (!w->c->otel_var)
			w->found |= PY_CTX_SEEN_OTEL;
	}
	if (w->label && !w->c->label_var && !strcmp(name, w->label) && var_hash(w, vars, key, value, &hash)) {
		w->c->label_var = key;
		w->c->label_hash = hash;
		w->found |= PY_CTX_FOUND_LABEL;
	}
}

static void walk_node(struct walk *w, uint64_t vars, uint64_t node, int depth)
{
	uint32_t head = w->l->ob_type + 8;
	uint64_t slots;

	if (!node || depth >= WALK_DEPTH || ++w->nodes > WALK_NODES)
		return;
	switch (node_kind(w, node)) {
	case NODE_BITMAP:
	case NODE_COLLISION:
		slots = rd(w->pid, node + head); /* ob_size: keys and values */
		for (uint64_t i = 0; i + 1 < slots && i < 64; i += 2) {
			uint64_t k = rd(w->pid, node + head + 16 + 8 * i), v = rd(w->pid, node + head + 24 + 8 * i);

			if (k)
				visit(w, vars, k, v);
			else
				walk_node(w, vars, v, depth + 1);
		}
		break;
	case NODE_ARRAY:
		for (int i = 0; i < 32; i++)
			walk_node(w, vars, rd(w->pid, node + head + 8 * (uint64_t)i), depth + 1);
		break;
	default:
		break;
	}
}

unsigned py_ctx_discover(pid_t pid, const struct py_layout *l, uint64_t vars, const char *label,
			 struct pyebpf_py_ctx *c)
{
	struct walk w = { .pid = pid, .l = l, .label = label, .c = c };
	char tn[16];

	type_name(pid, l, vars, tn, sizeof(tn));
	if (strcmp(tn, "hamt") != 0)
		return 0; /* not a thread's variables (gone, or the offsets are wrong) */
	walk_node(&w, vars, rd(pid, vars + l->ob_type + 8), 0);
	return w.found;
}

/* An int's digits (30 bits each) into out, as BPF's long_digits(): how
 * many, 0: not an int of at most max digits. */
static uint8_t long_digits(pid_t pid, const struct pyebpf_py_offsets *o, uint64_t obj, uint32_t *out, uint32_t max)
{
	uint64_t size = rd(pid, obj + o->long_size);
	bool tagged = o->ctx_layout & PYEBPF_CTXL_LONG_TAGGED;
	int64_t n = tagged ? (int64_t)(size >> 3) : (int64_t)size;

	if (!obj || n <= 0 || n > max || (tagged && (size & 3)))
		return 0;
	memset(out, 0, max * sizeof(*out));
	if (procmem_read(pid, obj + o->long_digits, out, (size_t)n * sizeof(*out)))
		return 0;
	return (uint8_t)n;
}

void py_ctx_read(pid_t pid, const struct py_layout *l, const struct pyebpf_py_ctx *c, uint64_t context,
		 struct pyebpf_ctx_read *out)
{
	const struct pyebpf_py_offsets *o = &l->bpf;
	uint64_t vars, ctx, kv[2 * 8], span = 0, values, sc, items[3], v;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (!context || !(vars = rd(pid, context + l->ob_type + 16))) /* PyContext: ctx_prev, ctx_vars */
		return;
	out->vars = vars;
	if (c->label_var && (v = py_ctx_lookup(pid, l, c, vars, c->label_var, c->label_hash)) &&
	    !procmem_read(pid, v, out->label_raw, sizeof(out->label_raw)))
		out->label = v;
	if (!c->otel_var || !(ctx = py_ctx_lookup(pid, l, c, vars, c->otel_var, c->otel_hash)))
		return;
	n = py_dict_items(pid, l, ctx, kv, 8); /* BPF's dict_find: CONTEXT_ENTRIES */
	for (size_t i = 0; i < n && !span; i++)
		if (kv[2 * i] == c->span_key)
			span = kv[2 * i + 1];
	if (!span || !(values = span_values_as_bpf(pid, c, span)) ||
	    !(sc = rd(pid, values + 8 * (uint64_t)c->span_index)) || rd(pid, sc + l->ob_type) != c->spanctx_type ||
	    procmem_read(pid, sc + o->tuple_items, items, 2 * sizeof(items[0])))
		return;
	out->trace_len = long_digits(pid, o, items[0], out->trace_digits, PYEBPF_TRACE_DIGITS);
	out->span_len = long_digits(pid, o, items[1], out->span_digits, PYEBPF_SPAN_DIGITS);
	if (!out->trace_len || !out->span_len)
		return;
	out->span = span;
	if (c->name_index && (v = rd(pid, values + 8 * (uint64_t)(c->name_index - 1))) &&
	    !procmem_read(pid, v, out->name_raw, sizeof(out->name_raw)))
		out->flags |= PYEBPF_CTX_NAME;
	/* The parent: None, or a SpanContext (trace id, span id, is_remote...) */
	if (c->parent_index && (v = rd(pid, values + 8 * (uint64_t)(c->parent_index - 1))) &&
	    rd(pid, v + l->ob_type) == c->spanctx_type &&
	    !procmem_read(pid, v + o->tuple_items, items, sizeof(items))) {
		uint32_t remote = 0;

		out->parent_len = long_digits(pid, o, items[1], out->parent_digits, PYEBPF_SPAN_DIGITS);
		if (long_digits(pid, o, items[2], &remote, 1) == 1 && remote == 1)
			out->flags |= PYEBPF_CTX_PARENT_REMOTE;
	}
}
