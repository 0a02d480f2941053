// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "profile/profile_import.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void profile_import__init(struct profile_import *im, struct profile *out, const struct profile *in, bool functions)
{
	*im = (struct profile_import){ .in = in, .out = out, .functions = functions };
	im->str = xcalloc(profile__nstrs(in) + 1, sizeof(*im->str));
	im->frame = xcalloc(profile__nframes(in) + 1, sizeof(*im->frame));
}

void profile_import__free(struct profile_import *im)
{
	free(im->str);
	free(im->frame);
	im->str = im->frame = NULL;
}

uint32_t profile_import__str(struct profile_import *im, uint32_t id)
{
	if (!im->str[id])
		im->str[id] = profile__str(im->out, profile__str_at(im->in, id)) + 1;
	return im->str[id] - 1;
}

uint32_t profile_import__frame(struct profile_import *im, uint32_t id)
{
	if (!im->frame[id]) {
		struct frame f = *profile__frame_at(im->in, id);

		f.name = profile_import__str(im, f.name);
		f.module = profile_import__str(im, f.module);
		if (im->functions && f.kind == FRAME_PYTHON)
			f.line = 0;
		im->frame[id] = profile__frame(im->out, &f) + 1;
	}
	return im->frame[id] - 1;
}

/* A request's own strings stay a request's own in out (gone with its samples). */
static uint32_t import_str(void *ctx, uint32_t id)
{
	struct profile_import *im = ctx;

	if (id & PROFILE_REQUEST_STR)
		return profile__request_str(im->out, profile__str_at(im->in, id));
	return profile_import__str(im, id);
}

void profile_import__labels(struct profile_import *im, struct sample_labels *l)
{
	l->comm = profile_import__str(im, l->comm);
	l->thread = profile_import__str(im, l->thread);
	l->python = profile_import__str(im, l->python);
	l->container = profile_import__str(im, l->container);
	l->container_name = profile_import__str(im, l->container_name);
	l->cgroup_path = profile_import__str(im, l->cgroup_path);
	l->process = profile_import__str(im, l->process);
	l->k8s_pod = profile_import__str(im, l->k8s_pod);
	if (l->request) {
		struct sample_request r = *profile__request_at(im->in, l->request);

		sample_request__map(&r, import_str, im);
		l->request = profile__request(im->out, &r);
	}
}

static bool has_comment(const struct profile *p, const char *text)
{
	size_t n;
	const char *const *c = profile__comments(p, &n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(c[i], text))
			return true;
	return false;
}

void profile_import__notes(struct profile_import *im)
{
	size_t nc, nm;
	const char *const *comments = profile__comments(im->in, &nc);
	const struct profile_module *mods = profile__modules(im->in, &nm);

	for (size_t i = 0; i < nc; i++)
		if (!has_comment(im->out, comments[i]))
			profile__add_comment(im->out, comments[i]);
	for (size_t i = 0; i < nm; i++) {
		struct profile_module pm = mods[i];

		pm.module = profile_import__str(im, pm.module);
		pm.build_id = profile_import__str(im, pm.build_id);
		profile__note_module(im->out, &pm);
	}
}
