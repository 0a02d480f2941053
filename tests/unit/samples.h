/* Synthetic ring-buffer records for the ingest and decoder tests. */
#ifndef PYEBPF_TEST_SAMPLES_H
#define PYEBPF_TEST_SAMPLES_H

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "pyebpf.h"

/* 8-byte aligned, like ring-buffer records; room for the largest sample. */
struct sample_rec {
	uint64_t words[(sizeof(struct pyebpf_sample_buf) + 7) / 8];
};

static inline struct pyebpf_sample *sample_init(struct sample_rec *r, uint32_t pid, uint32_t tid, uint64_t ts)
{
	struct pyebpf_sample *s = (struct pyebpf_sample *)r->words;

	memset(r, 0, sizeof(*r));
	s->h.type = PYEBPF_EVENT_SAMPLE;
	s->h.pid = pid;
	s->h.tid = tid;
	s->h.ts_ns = ts;
	strcpy(s->comm, "unit-comm");
	strcpy(s->task_comm, "unit-comm");
	return s;
}

/* A native sample: kernel then user addresses, leaf first; returns its wire size. */
static inline size_t sample_native(struct pyebpf_sample *s, const uint64_t *k, uint32_t nk, const uint64_t *u,
				   uint32_t nu)
{
	for (uint32_t i = 0; i < nk; i++)
		s->stack[i] = k[i];
	for (uint32_t i = 0; i < nu; i++)
		s->stack[nk + i] = u[i];
	s->kstack_len = nk;
	s->ustack_len = nu;
	return PYEBPF_SAMPLE_SIZE(nk + nu);
}

#endif
