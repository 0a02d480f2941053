// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "profile/label_frames.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/util.h"
#include "profile/profile_import.h"

/* The "[KEY=VALUE]" frame of an entry's labels in out; 0: it has no such label. */
static uint32_t label_frame(const struct profile *in, struct profile *out, const struct sample_labels *l,
			    const char *key)
{
	const char *v = profile__label_value(in, l, key);
	char shown[1024], name[1200];

	if (!v)
		return 0;
	/* Escaped as folded escapes it: a route is outside bytes. */
	snprintf(name, sizeof(name), "[%s=%s]", key, text_escape(v, shown, sizeof(shown)));
	return profile__frame(out, &(struct frame){ .kind = FRAME_MARK, .name = profile__str(out, name) }) + 1;
}

struct profile *profile__label_frames(const struct profile *in, const char *key)
{
	struct profile *out = profile__new();
	struct profile_import im;
	struct profile_event_cursor c = { 0 };
	struct profile_event ev;
	uint32_t *frames = NULL, *mark = xcalloc(profile__nstacks(in) + 1, sizeof(*mark));
	size_t cap = 0;

	*profile__meta(out) = *profile__meta_of(in);
	profile_import__init(&im, out, in, false);
	profile_import__notes(&im);
	/* Every add in its order, so the timeline the writers draw stays. */
	while (profile__next_event(in, &c, &ev)) {
		struct profile_entry e;
		struct sample_labels l;
		uint32_t n = 0;

		profile__entry(in, ev.entry, &e);
		if (!mark[ev.entry]) /* an entry's frame, found once: its labels do not change */
			mark[ev.entry] = label_frame(in, out, &e.labels, key) + 1;
		xgrow(&frames, &cap, e.nframes + 2, sizeof(*frames));
		if (mark[ev.entry] > 1)
			frames[n++] = mark[ev.entry] - 2;
		for (uint32_t k = 0; k < e.nframes; k++)
			frames[n++] = profile_import__frame(&im, e.frames[k]);
		l = e.labels;
		profile_import__labels(&im, &l);
		profile__add_at(out, &l, frames, n, ev.count, ev.time_ns);
	}
	free(frames);
	free(mark);
	profile_import__free(&im);
	return out;
}
