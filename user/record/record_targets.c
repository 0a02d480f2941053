// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/record_targets.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "system/proc_tree.h"
#include "base/util.h"

bool record_targets__by_comm(const struct record_opts *o)
{
	return !o->all && !o->npids && !o->cmd && o->filter.ncomms;
}

/* -p's children and --comm's processes running now; how many, or -1. */
static long add_running(struct sampler *s, struct ingest *in, const struct record_opts *o)
{
	bool comms = record_targets__by_comm(o);
	uint32_t *found;
	size_t n;

	if (!comms && (!o->npids || o->no_children))
		return 0;
	if (proc_tree__find("/proc", o->pids, o->npids, comms ? o->filter.comms : NULL, comms ? o->filter.ncomms : 0,
			    !o->no_children, &found, &n)) {
		err_msg("cannot list /proc: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (sampler__add_target(s, found[i])) {
			free(found);
			return -1;
		}
	for (size_t i = 0; i < n; i++)
		ingest__register(in, found[i]);
	free(found);
	return (long)n;
}

static void hook_python(void *ctx, uint32_t pid, const struct py_interp *in)
{
	sampler__python(ctx, pid, in);
}

static void hook_forget(void *ctx, uint32_t pid)
{
	sampler__forget(ctx, pid);
}

static void hook_beyond_walk(void *ctx, uint32_t pid)
{
	sampler__thread_beyond_walk(ctx, pid);
}

static void hook_requests(void *ctx, uint32_t pid, const struct pyebpf_py_ctx *c)
{
	sampler__requests(ctx, pid, c);
}

static void hook_span_named(void *ctx, uint32_t pid, uint64_t span, uint32_t gen)
{
	sampler__span_known(ctx, pid, span, gen);
}

struct ingest_hooks record_targets__hooks(struct sampler *s)
{
	return (struct ingest_hooks){ .ctx = s,
				      .python_changed = hook_python,
				      .forget_pid = hook_forget,
				      .thread_beyond_walk = hook_beyond_walk,
				      .requests_found = hook_requests,
				      .span_named = hook_span_named };
}

long record_targets__add(struct sampler *s, struct ingest *in, const struct record_opts *o)
{
	long n;

	for (size_t i = 0; i < o->npids; i++)
		if (sampler__add_target(s, o->pids[i]))
			return -1;
	n = add_running(s, in, o);
	if (n < 0)
		return -1;
	for (size_t i = 0; i < o->npids; i++)
		ingest__register(in, o->pids[i]);
	return n;
}

void record_targets__note(FILE *f, const struct record_opts *o, size_t running)
{
	if (record_targets__by_comm(o)) {
		fprintf(f, "pyebpf: %zu processes named ", running);
		for (size_t i = 0; i < o->filter.ncomms; i++)
			fprintf(f, "%s%s", i ? " or " : "", o->filter.comms[i]);
		fprintf(f, " now; those started later are profiled from their start\n");
	} else if (o->npids && !o->no_children && running)
		fprintf(f,
			"pyebpf: also profiling the %zu processes -p's pids started, and what they start from now on "
			"(--no-children: only the pids given)\n",
			running);
	else if (o->npids && !o->no_children)
		fprintf(f, "pyebpf: what -p's pids start from now on is profiled too (--no-children: only the "
			   "pids given)\n");
}

const struct container_event *record_targets__follow(struct sampler *s, struct container_watch *w, uint64_t now,
						     size_t *n)
{
	const struct container_event *ev = container_watch__tick(w, now, n);

	for (size_t i = 0; i < *n; i++)
		if (ev[i].old_cgroup || ev[i].new_cgroup)
			sampler__swap_cgroup(s, ev[i].old_cgroup, ev[i].new_cgroup);
	return ev;
}
