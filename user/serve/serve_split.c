// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "serve/serve_split.h"

#include <inttypes.h>

void serve_split__count(struct serve_split *s, const struct profile *p)
{
	struct profile_entry e;
	size_t pos = 0;

	while (profile__next(p, &pos, &e)) {
		uint32_t r = e.labels.offcpu;

		s->n[r < OFFCPU__COUNT ? r : OFFCPU_OTHER] += e.count;
	}
}

uint64_t serve_split__offcpu(const struct serve_split *s)
{
	uint64_t off = 0;

	for (int r = OFFCPU_RUNQUEUE; r < OFFCPU__COUNT; r++)
		off += s->n[r];
	return off;
}

void serve_split__write_json(const struct serve_split *s, FILE *f)
{
	fprintf(f, "\"split\":{\"cpu\":%" PRIu64, s->n[OFFCPU_NONE]);
	/* Reason names are ours (offcpu.c): nothing to escape. */
	for (int r = OFFCPU_RUNQUEUE; r < OFFCPU__COUNT; r++)
		fprintf(f, ",\"%s\":%" PRIu64, offcpu_reason_name((enum offcpu_reason)r), s->n[r]);
	fputc('}', f);
}
