// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/intervals.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/outfile.h"
#include "push/series.h"
#include "archive/rotation.h"
#include "base/util.h"
#include "write/pprof.h"

void intervals__begin(struct intervals *iv, uint64_t now)
{
	iv->start_ns = now;
	/* The wall-clock time of `now`, not of this later moment (the last
	 * interval's file was written in between): intervals chain exactly. */
	iv->epoch_ns = epoch_now_ns() - (int64_t)(now_ns() - now);
	iv->cpu = own_cpu_seconds();
}

bool intervals__due(const struct intervals *iv, uint64_t now)
{
	return now - iv->start_ns >= (uint64_t)(iv->seconds * 1e9);
}

static int write_file(const char *path, struct profile *prof)
{
	struct outfile out = { 0 };

	if (outfile__open(&out, path))
		return -1;
	if (pprof__write(prof, out.f)) { /* a regular file: open already */
		err_msg("cannot write '%s': %s", path, strerror(errno));
		outfile__abort(&out);
		return -1;
	}
	return outfile__commit(&out);
}

/* The host this file is recorded on: a backend's "host" label, even when
 * the file is pushed from elsewhere later (push/series.h). PYEBPF_HOST
 * names it where the host name is not the host's (a DaemonSet's pod has the
 * pod's name: deploy/daemonset.yaml gives it the node's). */
static void note_host(struct profile *prof)
{
	char host[256], note[300];
	const char *env = getenv("PYEBPF_HOST");

	if (env && *env)
		utf8_clean(env, host, sizeof(host));
	else if (gethostname(host, sizeof(host)))
		return;
	host[sizeof(host) - 1] = 0;
	snprintf(note, sizeof(note), "%s%s", SERIES_HOST_COMMENT, host);
	profile__add_comment(prof, note);
}

void intervals__write(struct intervals *iv, struct profile *prof, uint64_t freq, uint64_t now)
{
	struct profile_meta *m = profile__meta(prof);
	char name[128], *path;
	uint64_t samples = profile__total(prof);

	m->period_ns = 1000000000ULL / freq;
	m->start_epoch_ns = iv->epoch_ns;
	m->duration_ns = (int64_t)(now - iv->start_ns);
	rotation_file_name(iv->epoch_ns, iv->seq++, name, sizeof(name));
	note_host(prof);
	series_note_identity(prof, &iv->identity);
	path = xasprintf("%s/%s", iv->dir, name);
	if (write_file(path, prof))
		iv->write_failures++;
	else {
		iv->files_written++;
		if (iv->written)
			iv->written(iv->push_ctx, name, prof);
		if (iv->log)
			fprintf(stderr, "pyebpf: wrote %s (%llu samples in %.1f s)\n", path,
				(unsigned long long)samples, (double)m->duration_ns / 1e9);
	}
	free(path);
	if (iv->clear)
		iv->clear(iv->clear_ctx);
	else
		profile__clear_samples(prof);
	if (iv->keep || iv->max_disk) {
		struct rotation_prune pr = {
			.keep = iv->keep,
			.max_bytes = iv->max_disk,
			.written = name,
			.now_ns = epoch_now_ns(),
			.unsent = iv->unsent,
			.unsent_ctx = iv->push_ctx,
		};

		rotation_prune(iv->dir, &pr);
		iv->unsent_deleted += pr.unsent_deleted;
		/* Said when it changes, not at every interval. */
		if (pr.foreign != iv->foreign_told && pr.foreign)
			fprintf(stderr,
				"pyebpf: %zu files in %s have an interval file's name but are not pyebpf's (dated in "
				"the future, owned by another user or hard-linked): not counted, never deleted\n",
				pr.foreign, iv->dir);
		iv->foreign_told = pr.foreign;
	}
	/* Writing an interval allocates and frees its size several times over;
	 * without this the freed pages stay resident and RSS steps up with each
	 * busier interval in a process that runs for days. */
	malloc_trim(0);
}

double intervals__cpu_share(const struct intervals *iv, uint64_t now)
{
	double wall = (double)(now - iv->start_ns) / 1e9;

	return wall > 0 ? 100.0 * (own_cpu_seconds() - iv->cpu) / wall : 0;
}
