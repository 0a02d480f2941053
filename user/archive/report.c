// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "archive/report.h"
#include "profile/mem_view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "archive/archive.h"
#include "base/escape.h"
#include "profile/containers_seen.h"
#include "profile/filter.h"
#include "write/formats.h"
#include "base/outfile.h"
#include "profile/filter_idle.h"
#include "archive/report_args.h"
#include "write/by_table.h"
#include "write/top.h"
#include "base/util.h"
#include "base/wallclock.h"

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
				 .by = o->by,
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
	else if (profile__meta_of(p)->value_unit == PROFILE_UNIT_BYTES) {
		char size[32];

		fprintf(stderr, "pyebpf: wrote %s (%s, %zu stacks)\n", o->output,
			human_bytes(profile__total(p), size, sizeof(size)), profile__nstacks(p));
	} else
		fprintf(stderr, "pyebpf: wrote %s (%llu samples, %zu stacks)\n", o->output,
			(unsigned long long)profile__total(p), profile__nstacks(p));
	return 0;
}

/* What was read and kept, on stderr: a window or filters that left samples
 * out say so, and how many files the window spared. A window with nothing
 * in it is an error (-1): a header-only table would read as an idle host. */
static int tell(const char *side, const struct archive *a, const struct archive_stats *st, const struct filter *f,
		const char *name, char *what, size_t size)
{
	char since[64] = "the start", until[64] = "the end";
	bool window = st->since_ns != INT64_MIN || st->until_ns != INT64_MAX;

	if (st->since_ns != INT64_MIN)
		epoch_format(st->since_ns, since, sizeof(since));
	if (st->until_ns != INT64_MAX)
		epoch_format(st->until_ns, until, sizeof(until));
	if (window)
		snprintf(what, size, "%s from %s until %s", name, since, until);
	if (window && st->samples == st->dropped && a->n) {
		char first[64], last[64];
		struct filter others = *f; /* the filters besides the window */

		others.timed = false;
		epoch_format(st->first_ns, first, sizeof(first));
		epoch_format(st->last_ns, last, sizeof(last));
		err_msg("%s%s sample from %s until %s: the recordings run from %s to %s", side,
			filter__drops_samples(&others) ? "the filters kept no" : "no recording has a", since, until,
			first, last);
		return -1;
	}
	if (a->n > 1 || window)
		fprintf(stderr, "pyebpf: %sread %zu of %zu recordings (from %s until %s)\n", side, st->files, a->n,
			since, until);
	/* The other kind of time is a view's choice, said apart from what the filters left out. */
	if (st->other_time)
		fprintf(stderr, "pyebpf: %s%llu samples of %s time left out (%s)\n", side,
			(unsigned long long)st->other_time,
			f->time_kind == FILTER_TIME_TASKS ? "the threads'" : "asyncio task",
			f->time_kind == FILTER_TIME_TASKS ? "--tasks shows task time alone"
							  : "report --tasks shows it");
	if (st->dropped > st->other_time)
		fprintf(stderr, "pyebpf: %sthe window and filters kept %llu of %llu samples\n", side,
			(unsigned long long)(st->samples - st->dropped),
			(unsigned long long)(st->samples - st->other_time));
	return 0;
}

/* Is the output (when it exists) one of the recordings? Writing it would
 * replace an input with the merge: `report DIR -o DIR/pyebpf-...pb.gz`. */
static int writes_over_input(const struct archive *a, const char *output)
{
	struct stat out, in;

	if (!output || stat(output, &out) || !S_ISREG(out.st_mode))
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (!stat(a->v[i].path, &in) && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
			err_msg("cannot write '%s': it is '%s', one of the recordings read", output, a->v[i].path);
			return -1;
		}
	return 0;
}

/* --container kept nothing: an error that names the containers the
 * recordings hold (read again without it), not an empty output, so a
 * mistyped name or an id of another host reads as such. */
static int no_such_container(const char *side, struct archive *a, const struct filter *f, uint32_t flags)
{
	struct filter others = *f;
	struct archive_stats st;
	struct profile *all;
	char held[1024], arg[4 * 64 + 1];
	size_t n;

	others.ncontainers = others.ncontainer_names = 0;
	all = archive__load(a, &others, flags, &st);
	if (!all)
		return -1;
	n = containers_seen(all, 8, held, sizeof(held));
	/* As given: a name the runtime knows now stands in containers[] as its id. */
	text_escape(f->ncontainer_names ? f->container_names[0] : f->containers[0], arg, sizeof(arg));
	if (n)
		err_msg("%sno sample of container '%s'%s: the recordings hold %zu container%s: %s", side, arg,
			f->ncontainers > 1 ? " or the others given" : "", n, n > 1 ? "s" : "", held);
	else
		err_msg("%sno sample of container '%s'%s: the recordings hold no sample of any container", side, arg,
			f->ncontainers > 1 ? " or the others given" : "");
	profile__free(all);
	return -1;
}

/* The recordings read as one; `what` names them for titles. */
static struct profile *load(const char *side, const char *const *paths, size_t n, const struct filter *f,
			    bool exclude_idle, uint32_t flags, const char *output, char *what, size_t size)
{
	struct archive a = { 0 };
	struct archive_stats st;
	struct profile *p = NULL;

	for (size_t i = 0; i < n; i++)
		if (archive__add(&a, paths[i]))
			goto out;
	if (writes_over_input(&a, output))
		goto out;
	char name[300];

	snprintf(name, sizeof(name), "%s%s", paths[0], n > 1 ? " and more" : "");
	snprintf(what, size, "%s", name);
	p = archive__load(&a, f, flags, &st);
	if (p && f->ncontainers && !profile__total(p) && st.samples && no_such_container(side, &a, f, flags)) {
		profile__free(p);
		p = NULL;
	}
	if (p && tell(side, &a, &st, f, name, what, size)) {
		profile__free(p);
		p = NULL;
	}
	if (p && exclude_idle) {
		struct idle_stats idle;
		struct profile *busy = filter__without_idle(p, &idle);

		profile__free(p);
		p = busy;
		fprintf(stderr,
			"pyebpf: %s--exclude-idle left out %llu threads that did not run in the window (%llu "
			"samples)\n",
			side, (unsigned long long)idle.threads, (unsigned long long)idle.samples);
	}
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
	p = load("", o.inputs, o.ninputs, &o.filter, o.exclude_idle, 0, o.output, title, sizeof(title));
	if (!p)
		goto out;
	if (o.filter.time_kind == FILTER_TIME_TASKS) { /* its widths are no thread's time: say so */
		size_t used = strlen(title);

		snprintf(title + used, sizeof(title) - used,
			 ": asyncio task time, %.1f s of tasks pending (not thread time)",
			 (double)profile__total(p) * (double)profile__meta_of(p)->period_ns / 1e9);
	}
	if (profile__meta_of(p)->mem_sample_bytes && o.output && !output_format_without_time(o.format)) {
		err_msg("'%s' is a memory recording: it is written as pprof, folded, SVG or speedscope (timelines and "
			"heat maps are of time)",
			o.inputs[0]);
		goto out;
	}
	if (profile__meta_of(p)->mem_sample_bytes && (!o.output || o.format != FORMAT_PPROF)) {
		/* A memory recording: the table and the other outputs show one of its values. */
		struct profile *view = mem_view(p, (enum mem_value)o.sample_type);
		size_t used = strlen(title);

		profile__free(p);
		p = view;
		snprintf(title + used, sizeof(title) - used, ": %s", mem_value_name((enum mem_value)o.sample_type));
		fprintf(stderr, "pyebpf: %s of a memory recording (--sample-type)\n",
			mem_value_name((enum mem_value)o.sample_type));
	} else if (o.sample_type_given && !profile__meta_of(p)->mem_sample_bytes) {
		err_msg("--sample-type chooses what a memory recording (--mode memory) shows: '%s' records %s",
			o.inputs[0], profile__kind(p));
		goto out;
	}
	if (o.nbases) {
		char before[512];
		size_t used = strlen(title);

		base = load("base: ", o.bases, o.nbases, &o.base_filter, o.exclude_idle, LABEL_BASE, o.output, before,
			    sizeof(before));
		if (!base)
			goto out;
		/* A memory recording's base shows the same value as its other side. */
		if (profile__meta_of(base)->mem_sample_bytes) {
			struct profile *view = mem_view(base, (enum mem_value)o.sample_type);

			profile__free(base);
			base = view;
		}
		/* As a merge refuses them: CPU samples against wall-clock time compare nothing. */
		if (profile__total(p) && profile__total(base) &&
		    (profile__meta_of(p)->wall != profile__meta_of(base)->wall ||
		     !profile__meta_of(p)->value_unit != !profile__meta_of(base)->value_unit)) {
			err_msg("cannot diff '%s' against '%s': it records %s, the base %s", o.inputs[0], o.bases[0],
				profile__kind(p), profile__kind(base));
			goto out;
		}
		snprintf(title + used, sizeof(title) - used, " against %s", before);
		diff = combine(p, base);
	}
	if (o.output ? write_output(&o, diff ? diff : p, title)
	    : diff   ? top__print_diff(diff, o.top, stdout)
	    : o.by   ? by_table__print(p, o.by, o.top, stdout)
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
