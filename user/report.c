// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "archive.h"
#include "filter.h"
#include "formats.h"
#include "outfile.h"
#include "report_args.h"
#include "top.h"
#include "util.h"
#include "wallclock.h"

/* A diff's samples of one side. */
static uint64_t count(const struct profile *p, uint32_t base)
{
	struct profile_entry e;
	size_t pos = 0;
	uint64_t n = 0;

	while (profile__next(p, &pos, &e))
		if ((e.labels.flags & LABEL_BASE) == base)
			n += e.count;
	return n;
}

static int write_output(const struct report_opts *o, const struct profile *p, const char *title)
{
	struct write_opts wo = { .threads = o->threads,
				 .containers = o->containers,
				 .title = title,
				 .processes = o->processes,
				 .diff = o->nbases > 0 };
	struct outfile out = { 0 };

	FILE *f;

	if (outfile__open(&out, o->output) || !(f = outfile__file(&out))) {
		outfile__abort(&out);
		return -1;
	}
	if (write_profile(p, o->format, &wo, f)) {
		err_msg("cannot write '%s': %s", o->output, strerror(errno));
		outfile__abort(&out);
		return -1;
	}
	if (outfile__commit(&out))
		return -1;
	if (o->nbases)
		fprintf(stderr, "pyebpf: wrote %s (a diff of %llu samples after and %llu before)\n", o->output,
			(unsigned long long)count(p, 0), (unsigned long long)count(p, LABEL_BASE));
	else
		fprintf(stderr, "pyebpf: wrote %s (%llu samples, %zu stacks)\n", o->output,
			(unsigned long long)profile__total(p), profile__nstacks(p));
	return 0;
}

/* What was read and kept, on stderr: a window or filters that left samples
 * out say so, and how many files the window spared. */
static void tell(const char *side, const struct archive *a, const struct archive_stats *st, const char *name,
		 char *what, size_t size)
{
	char since[64] = "the start", until[64] = "the end";

	if (st->since_ns != INT64_MIN)
		epoch_format(st->since_ns, since, sizeof(since));
	if (st->until_ns != INT64_MAX)
		epoch_format(st->until_ns, until, sizeof(until));
	if (st->since_ns != INT64_MIN || st->until_ns != INT64_MAX)
		snprintf(what, size, "%s from %s until %s", name, since, until);
	if (a->n > 1 || st->since_ns != INT64_MIN || st->until_ns != INT64_MAX)
		fprintf(stderr, "pyebpf: %sread %zu of %zu recordings (from %s until %s)\n", side, st->files, a->n,
			since, until);
	if (st->dropped)
		fprintf(stderr, "pyebpf: %sthe window and filters kept %llu of %llu samples\n", side,
			(unsigned long long)(st->samples - st->dropped), (unsigned long long)st->samples);
	if (st->samples == st->dropped && (st->since_ns != INT64_MIN || st->until_ns != INT64_MAX) && a->n) {
		char first[64], last[64];

		epoch_format(st->first_ns, first, sizeof(first));
		epoch_format(st->last_ns, last, sizeof(last));
		fprintf(stderr, "pyebpf: %sno sample in the window: the recordings run from %s to %s\n", side, first,
			last);
	}
}

/* The recordings read as one; `what` names them for titles. */
static struct profile *load(const char *side, const char *const *paths, size_t n, const struct filter *f,
			    uint32_t flags, char *what, size_t size)
{
	struct archive a = { 0 };
	struct archive_stats st;
	struct profile *p = NULL;

	for (size_t i = 0; i < n; i++)
		if (archive__add(&a, paths[i]))
			goto out;
	char name[300];

	snprintf(name, sizeof(name), "%s%s", paths[0], n > 1 ? " and more" : "");
	snprintf(what, size, "%s", name);
	p = archive__load(&a, f, flags, &st);
	if (p)
		tell(side, &a, &st, name, what, size);
out:
	archive__free(&a);
	return p;
}

/* Both sides in one profile: the base's samples labelled LABEL_BASE. */
static struct profile *combine(const struct profile *after, const struct profile *before)
{
	struct profile *p = profile__new();
	struct filter all;

	filter__init(&all);
	*profile__meta(p) = *profile__meta_of(after);
	filter__copy(&all, after, p, 0, 1, 0);
	filter__copy(&all, before, p, 0, 1, 0); /* labelled when loaded */
	return p;
}

int report_main(int argc, char **argv)
{
	struct report_opts o;
	struct profile *p = NULL, *base = NULL, *diff = NULL;
	char title[1100];
	int ret = 1, perr;

	perr = report_args__parse(argc, argv, &o);
	if (perr)
		return perr > 0 ? 0 : 2;
	p = load("", o.inputs, o.ninputs, &o.filter, 0, title, sizeof(title));
	if (!p)
		goto out;
	if (o.nbases) {
		char before[512];
		size_t used = strlen(title);

		base = load("base: ", o.bases, o.nbases, &o.base_filter, LABEL_BASE, before, sizeof(before));
		if (!base)
			goto out;
		snprintf(title + used, sizeof(title) - used, " against %s", before);
		diff = combine(p, base);
	}
	if (o.output ? write_output(&o, diff ? diff : p, title)
	    : diff   ? top__print_diff(diff, o.top, stdout)
		     : top__print(p, o.top, stdout)) {
		if (!o.output)
			err_msg("cannot print the table: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	profile__free(p);
	profile__free(base);
	profile__free(diff);
	report_args__free(&o);
	return ret;
}
