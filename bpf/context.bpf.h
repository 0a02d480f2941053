/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Which request a sample belongs to, read from the sampled thread's context
 * variables (docs/requests.md): tstate->context->ctx_vars is an immutable
 * mapping (a HAMT), so one bounded descent by a variable's hash finds its
 * value as it was when the sample was taken. For a process whose variables
 * userspace found (the py_ctx map):
 *
 *  - OpenTelemetry's `current_context` holds a Context (a dict) whose span
 *    key holds the current span; the span's `_context` (a SpanContext
 *    tuple) holds the trace and span ids as ints, whose digits are copied
 *    into the sample: the span may be freed, and its address another
 *    span's, by the time userspace names the sample.
 *  - --context-label's variable: the first bytes of its value.
 *
 * Every pointer read is checked for what it must be (a node type, a key, a
 * type) before it is followed: a miss costs a label, never gives a wrong one.
 */
#ifndef PYEBPF_CONTEXT_BPF_H
#define PYEBPF_CONTEXT_BPF_H

#include "shared.bpf.h"

/* A 32-bit hash, 5 bits a level: 7 levels, then a collision node. */
#define HAMT_LEVELS 8
#define COLLISION_PAIRS 4
#define CONTEXT_ENTRIES 8 /* a Context holds a span and a few values */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* pid */
	__type(value, struct pyebpf_py_ctx);
} py_ctx SEC(".maps") __weak;

/* Spans userspace named: pyebpf.h says why. Its own table per process in
 * userspace has 8,192 spans; twice that here for many processes. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct pyebpf_span_key);
	__type(value, __u32); /* the known_gen it was named under */
} py_spans_known SEC(".maps") __weak;

static __always_inline int ctx_ptr(__u64 addr, __u64 *out)
{
	return user_read(out, sizeof(*out), (const void *)addr);
}

/* The value of the variable `var` (hash `hash`) in the HAMT whose root is
 * `node`; 0 when it is not set or the tree is not as it must be. */
static __always_inline __u64 hamt_find(const struct pyebpf_py_ctx *c, const struct pyebpf_py_offsets *o, __u64 node,
				       __u64 var, __s32 hash, __u64 *pair)
{
	__u32 head = o->obj_type + 8, h = (__u32)hash;

	for (int level = 0; level < HAMT_LEVELS; level++) {
		__u64 type;
		__u32 bitmap, idx = (h >> (5 * level)) & 0x1f, bit = 1u << idx;

		if (!node || ctx_ptr(node + o->obj_type, &type))
			return 0;
		if (type == c->bitmap_type && type) {
			/* PyObject_VAR_HEAD, then b_bitmap, then (key, value) pairs;
			 * a NULL key: the value is the next level's node. */
			if (user_read(&bitmap, sizeof(bitmap), (const void *)(node + head + 8)) || !(bitmap & bit))
				return 0;
			__u32 pos = __builtin_popcount(bitmap & (bit - 1));

			if (user_read(pair, 16, (const void *)(node + head + 16 + 16 * (__u64)(pos & 31))))
				return 0;
			if (!pair[0]) {
				node = pair[1];
				continue;
			}
			return pair[0] == var ? pair[1] : 0;
		}
		if (type == c->array_type && type) {
			if (ctx_ptr(node + head + 8 * (__u64)idx, &node))
				return 0;
			continue;
		}
		if (type == c->collision_type && type) {
			/* PyObject_VAR_HEAD (ob_size: 2 x pairs), c_hash, pairs. */
			for (int i = 0; i < COLLISION_PAIRS; i++) {
				if (user_read(pair, 16, (const void *)(node + head + 16 + 16 * (__u64)i)))
					return 0;
				if (pair[0] == var)
					return pair[1];
			}
			return 0;
		}
		return 0;
	}
	return 0;
}

/* The value under key `key` (compared by address) in a dict of few entries. */
static __always_inline __u64 dict_find(const struct pyebpf_py_offsets *o, __u64 dict, __u64 key, __u64 *hdr)
{
	__u64 keys, n, entries;
	__u32 esize = 24, koff = 8;

	if (ctx_ptr(dict + o->obj_type + 24, &keys) || !keys ||
	    user_read(hdr, 40, (const void *)keys)) /* ma_keys, after ma_used and the version */
		return 0;
	if (o->ctx_layout & PYEBPF_CTXL_DICT_311) {
		__u8 log2_index = (hdr[1] >> 8) & 63, kind = (hdr[1] >> 16) & 0xff;

		n = hdr[3];
		entries = keys + 32 + (1ULL << log2_index);
		if (kind) { /* unicode keys: (key, value) */
			esize = 16;
			koff = 0;
		}
	} else {
		__u64 size = hdr[1];

		n = hdr[4];
		entries = keys + 40 + size * (size <= 0xff ? 1 : size <= 0xffff ? 2 : 4);
	}
	for (int i = 0; i < CONTEXT_ENTRIES; i++) {
		if ((__u64)i >= n || user_read(hdr, 16, (const void *)(entries + (__u64)i * esize + koff)))
			return 0;
		if (hdr[0] == key)
			return hdr[1];
	}
	return 0;
}

/* An int's digits (30 bits each) into out; returns how many, 0: not an int of at most max digits. */
static __always_inline __u8 long_digits(const struct pyebpf_py_offsets *o, __u64 obj, __u32 *out, __u32 max)
{
	__u64 size;
	__s64 n;

	if (ctx_ptr(obj + o->long_size, &size))
		return 0;
	n = o->ctx_layout & PYEBPF_CTXL_LONG_TAGGED ? (__s64)(size >> 3) : (__s64)size;
	if (n <= 0 || n > max || (o->ctx_layout & PYEBPF_CTXL_LONG_TAGGED && (size & 3)))
		return 0; /* 0, negative or too long: not an id */
	if (user_read(out, max * 4, (const void *)(obj + o->long_digits)))
		return 0;
	return n;
}

/* Where a span keeps its attributes' values (pyebpf_attr_how); 0: not found. */
static __always_inline __u64 span_values(const struct pyebpf_py_ctx *c, __u64 span)
{
	__u64 p;
	__u8 valid;

	switch (c->span_how) {
	case PYEBPF_ATTR_VALUES:
	case PYEBPF_ATTR_TAGGED:
		if (ctx_ptr(span + (__s64)c->span_off, &p) || !p)
			return 0;
		if (c->span_how == PYEBPF_ATTR_TAGGED) {
			if (!(p & 1))
				return 0; /* a dict: the values moved */
			p += 1;
		}
		return p + c->dict_values;
	case PYEBPF_ATTR_INLINE:
		p = span + (__s64)c->span_off; /* PyDictValues: capacity, size, embedded, valid */
		if (user_read(&valid, 1, (const void *)(p + 3)) || !valid)
			return 0;
		return p + c->dict_values;
	case PYEBPF_ATTR_DICT:
		if (ctx_ptr(span + (__s64)c->span_off, &p) || !p || ctx_ptr(p + c->dict_values, &p))
			return 0;
		return p;
	default:
		return 0;
	}
}

static __always_inline __u64 value_at(__u64 values, __u32 index)
{
	__u64 v = 0;

	if (ctx_ptr(values + 8 * (__u64)(index & 0xff), &v))
		return 0;
	return v;
}

/* Has userspace named the span of these digits (its id's, least significant first)? */
static __always_inline bool span_known(const struct pyebpf_py_ctx *c, __u32 pid, const __u32 *digits, __u8 n)
{
	struct pyebpf_span_key k = { .pid = pid };
	__u32 *gen;

	k.span = digits[0] | (n > 1 ? (__u64)digits[1] << 30 : 0) | (n > 2 ? (__u64)digits[2] << 60 : 0);
	gen = bpf_map_lookup_elem(&py_spans_known, &k);
	return gen && *gen == c->known_gen;
}

static __always_inline void read_span(struct pyebpf_sample *s, const struct pyebpf_py_ctx *c,
				      const struct pyebpf_py_offsets *o, __u32 pid, __u64 context, __u64 *tmp)
{
	__u64 span = dict_find(o, context, c->span_key, tmp), values, sc, type, v;

	if (!span || !(values = span_values(c, span)) || !(sc = value_at(values, c->span_index)) ||
	    ctx_ptr(sc + o->obj_type, &type) || type != c->spanctx_type ||
	    user_read(tmp, 16, (const void *)(sc + o->tuple_items)))
		return;
	s->ctx.span_len = long_digits(o, tmp[1], s->ctx.span_digits, PYEBPF_SPAN_DIGITS);
	if (!s->ctx.span_len)
		return;
	/* A span id is unique: userspace has its trace, name and parent. */
	if (span_known(c, pid, s->ctx.span_digits, s->ctx.span_len)) {
		s->ctx.span = span;
		s->ctx.flags |= PYEBPF_CTX_KNOWN;
		return;
	}
	s->ctx.trace_len = long_digits(o, tmp[0], s->ctx.trace_digits, PYEBPF_TRACE_DIGITS);
	if (!s->ctx.trace_len)
		return;
	s->ctx.span = span;
	if (c->name_index && (v = value_at(values, c->name_index - 1)) &&
	    !user_read(s->ctx.name_raw, sizeof(s->ctx.name_raw), (const void *)v))
		s->ctx.flags |= PYEBPF_CTX_NAME;
	/* The parent: None, or a SpanContext (trace id, span id, is_remote...) */
	if (c->parent_index && (v = value_at(values, c->parent_index - 1)) && !ctx_ptr(v + o->obj_type, &type) &&
	    type == c->spanctx_type && !user_read(tmp, 24, (const void *)(v + o->tuple_items))) {
		s->ctx.parent_len = long_digits(o, tmp[1], s->ctx.parent_digits, PYEBPF_SPAN_DIGITS);
		/* is_remote, a bool: True is an int of one digit, 1 */
		if (long_digits(o, tmp[2], (__u32 *)tmp, 1) == 1 && (__u32)tmp[0] == 1)
			s->ctx.flags |= PYEBPF_CTX_PARENT_REMOTE;
	}
}

/* Fill s->ctx from the thread's context variables; tmp: 5 words of scratch
 * (the wall-mode programs' stack has no room for them). */
static __always_inline void read_context(struct pyebpf_sample *s, const struct pyebpf_py_offsets *o, __u32 pid,
					 __u64 tstate, __u64 *tmp)
{
	const struct pyebpf_py_ctx *c;
	__u64 context, vars, root, v;

	s->ctx.vars = s->ctx.span = s->ctx.label = 0;
	s->ctx.trace_len = s->ctx.span_len = s->ctx.parent_len = s->ctx.flags = 0;
	if (!o->tstate_context || ctx_ptr(tstate + o->tstate_context, &context) || !context ||
	    ctx_ptr(context + o->obj_type + 16, &vars) || !vars) /* PyContext: ctx_prev, ctx_vars */
		return;
	s->ctx.vars = vars;
	s->flags |= PYEBPF_SAMPLE_CTX;
	c = bpf_map_lookup_elem(&py_ctx, &pid);
	if (!c || ctx_ptr(vars + o->obj_type + 8, &root)) /* PyHamtObject.h_root */
		return;
	if (c->otel_var && (v = hamt_find(c, o, root, c->otel_var, c->otel_hash, tmp)))
		read_span(s, c, o, pid, v, tmp);
	if (c->label_var && (v = hamt_find(c, o, root, c->label_var, c->label_hash, tmp)) &&
	    !user_read(s->ctx.label_raw, sizeof(s->ctx.label_raw), (const void *)v))
		s->ctx.label = v;
}

#endif
