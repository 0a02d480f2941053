// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "sample_view.h"

#include <string.h>

/*
 * Where the Python frames and the --native tail sit depends on whether the
 * sample is a Python one: bpf/sample.bpf.c sends the whole stack[] array
 * before py[] for Python processes and with --native, only the used part of
 * stack[] otherwise.
 */
static enum sample_decode_err decode_tail(const struct pyebpf_sample *s, size_t size, struct sample_view *v)
{
	size_t off;

	if (s->flags & PYEBPF_SAMPLE_PY) {
		if (s->py_len > PYEBPF_MAX_PY_FRAMES || size < PYEBPF_PY_SAMPLE_SIZE(s->py_len))
			return SAMPLE_PY_LEN;
		v->py = s->py;
		v->npy = s->py_len;
	}
	if (!(s->flags & PYEBPF_SAMPLE_UREGS))
		return SAMPLE_OK;
	/* The tail follows py[0 .. py_len): py_len is 0 outside Python processes. */
	if (s->py_len > PYEBPF_MAX_PY_FRAMES)
		return SAMPLE_UREGS;
	off = PYEBPF_PY_SAMPLE_SIZE(s->py_len);
	if (size < off + sizeof(struct pyebpf_uregs))
		return SAMPLE_UREGS;
	v->regs = (const struct pyebpf_uregs *)((const char *)s + off);
	if (v->regs->copied > PYEBPF_MAX_USTACK_COPY || size - off - sizeof(struct pyebpf_uregs) < v->regs->copied)
		return SAMPLE_UREGS;
	v->stack_copy = (const uint8_t *)(v->regs + 1);
	v->copied = v->regs->copied;
	return SAMPLE_OK;
}

enum sample_decode_err sample_decode(const void *data, size_t size, struct sample_view *v)
{
	const struct pyebpf_sample *s = data;
	enum sample_decode_err e;

	memset(v, 0, sizeof(*v));
	if (size < PYEBPF_SAMPLE_SIZE(0))
		return SAMPLE_SHORT;
	if (s->h.type != PYEBPF_EVENT_SAMPLE)
		return SAMPLE_NOT_A_SAMPLE;
	if (s->kstack_len > PYEBPF_MAX_STACK || s->ustack_len > PYEBPF_MAX_STACK ||
	    size < PYEBPF_SAMPLE_SIZE(s->kstack_len + s->ustack_len))
		return SAMPLE_STACK_LEN;
	v->s = s;
	v->kstack = s->stack;
	v->nkstack = s->kstack_len;
	v->ustack = s->stack + s->kstack_len;
	v->nustack = s->ustack_len;
	e = decode_tail(s, size, v);
	if (e != SAMPLE_OK)
		memset(v, 0, sizeof(*v));
	return e;
}

const char *sample_decode_strerror(enum sample_decode_err e)
{
	switch (e) {
	case SAMPLE_OK:
		return "ok";
	case SAMPLE_SHORT:
		return "shorter than a sample header";
	case SAMPLE_NOT_A_SAMPLE:
		return "not a sample";
	case SAMPLE_STACK_LEN:
		return "stack length out of bounds";
	case SAMPLE_PY_LEN:
		return "Python frame count out of bounds";
	case SAMPLE_UREGS:
		return "native registers or stack copy out of bounds";
	}
	return "unknown";
}
