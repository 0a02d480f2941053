// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/record_push.h"

#include <stdint.h>
#include <stdio.h>

static bool push_unsent(void *ctx, const char *name)
{
	return pusher__unsent(ctx, name);
}

static void push_written(void *ctx, const char *name, const struct profile *prof)
{
	pusher__offer(ctx, name, prof);
}

struct pusher *record_push__start(const struct record_opts *o, struct intervals *iv)
{
	struct push_config pc = {
		.dir = o->continuous,
		.endpoints = o->push.endpoints,
		.nendpoints = o->push.nendpoints,
		.series = { .service_name = o->push.service_name, .extra = o->push.labels, .nextra = o->push.nlabels },
		.auth = o->push.auth,
		.connect_timeout_s = PUSH_DEFAULT_CONNECT_TIMEOUT,
		.timeout_s = o->push.timeout_s,
		.since_ns = INT64_MIN,
		.until_ns = INT64_MAX,
		.log = iv->log,
	};
	struct pusher *p = pusher__start(&pc);

	if (!p)
		return NULL;
	if (o->spool_default)
		fprintf(stderr,
			"pyebpf: the spool %s is bounded at 1 GB (--max-disk to change): intervals a backend "
			"lacks are deleted only past it\n",
			o->continuous);
	iv->unsent = push_unsent;
	iv->written = push_written;
	iv->push_ctx = p;
	iv->identity = pc.series; /* o's: they last as long as the recording */
	return p;
}

void record_push__finish(struct pusher *p, const struct intervals *iv, const char *dir)
{
	struct push_stats ps;

	if (!p)
		return;
	pusher__finish(p, PUSH_STOP_SECONDS);
	pusher__stats(p, &ps);
	fprintf(stderr, "pyebpf: pushed %llu intervals (%llu profiles, %.1f KB, %.3f s of CPU)",
		(unsigned long long)ps.sent, (unsigned long long)ps.profiles, (double)ps.bytes / 1024, ps.cpu_s);
	if (ps.rejected)
		fprintf(stderr, "; %llu refused for good (kept)", (unsigned long long)ps.rejected);
	if (iv->unsent_deleted)
		fprintf(stderr, "; %llu deleted unsent (--max-disk)", (unsigned long long)iv->unsent_deleted);
	if (ps.unsent)
		fprintf(stderr, "; %zu not sent yet, kept in %s for the next run or 'pyebpf push %s'", ps.unsent, dir,
			dir);
	fputc('\n', stderr);
}
