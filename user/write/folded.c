// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "write/folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "profile/frame_format.h"
#include "base/util.h"
#include "base/escape.h"
#include "write/thread_names.h"

struct line {
	char *text;
	uint64_t count, base;
};

struct strbuf {
	char *s;
	size_t len, cap;
};

static void sb_append_frame(struct strbuf *b, const char *raw, const char *suffix)
{
	static char text[4 * 4096 + 1]; /* every byte escaped: "\xNN" */
	size_t n = strlen(text_escape(raw, text, sizeof(text))), m = strlen(suffix);

	xgrow(&b->s, &b->cap, b->len + n + m + 2, 1);
	if (b->len)
		b->s[b->len++] = ';';
	for (size_t i = 0; i < n; i++) {
		char c = text[i];
		/* ';' separates frames; control characters were escaped already. */
		b->s[b->len++] = c == ';' ? ':' : c;
	}
	memcpy(b->s + b->len, suffix, m);
	b->len += m;
	b->s[b->len] = '\0';
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

int folded__write(const struct profile *p, const struct folded_opts *o, FILE *out)
{
	size_t n = 0, cap = 0, pos = 0;
	struct line *lines = NULL;
	struct profile_entry e;
	char name[4096];
	int ret = 0;

	struct process_split *split = process_split__new(p, o ? o->processes : PROCESSES_MERGED);
	struct hashmap *names = o && o->threads ? thread_names__latest(p) : NULL;

	while (profile__next(p, &pos, &e)) {
		struct strbuf b = { 0 };

		process_split__name(split, p, e.labels.comm, e.labels.pid, name, sizeof(name));
		sb_append_frame(&b, name, "");
		if (o && o->containers && e.labels.container) {
			container_frame__format(p, e.labels.container, e.labels.container_name, name, sizeof(name));
			sb_append_frame(&b, name, "");
		}
		if (o && o->by) { /* samples without the label have no such frame */
			const char *v = profile__label_value(p, &e.labels, o->by);
			char shown[1024];

			snprintf(name, sizeof(name), "[%s=%s]", o->by, v ? text_escape(v, shown, sizeof(shown)) : "");
			if (v)
				sb_append_frame(&b, name, "");
		}
		if (o && o->threads) {
			snprintf(name, sizeof(name), "%s [tid %u]",
				 profile__str_at(p, thread_names__of(names, &e.labels)), e.labels.tid);
			sb_append_frame(&b, name, "");
		}
		for (uint32_t i = 0; i < e.nframes; i++) {
			const struct frame *f = profile__frame_at(p, e.frames[i]);

			frame__format(p, f, name, sizeof(name));
			sb_append_frame(&b, name, f->kind == FRAME_KERNEL ? "_[k]" : "");
		}
		xgrow(&lines, &cap, n + 1, sizeof(*lines));
		lines[n].text = b.s;
		lines[n].count = e.labels.flags & LABEL_BASE ? 0 : e.count;
		lines[n++].base = e.labels.flags & LABEL_BASE ? e.count : 0;
	}
	process_split__free(split);
	hashmap__free(names);
	if (n)
		qsort(lines, n, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < n; i++) {
		uint64_t count = lines[i].count, base = lines[i].base;

		/* Entries differing only in labels (pid, tid) fold into one line. */
		while (i + 1 < n && strcmp(lines[i].text, lines[i + 1].text) == 0) {
			count += lines[++i].count;
			base += lines[i].base;
		}
		if ((o && o->diff ? fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", lines[i].text, base, count)
				  : fprintf(out, "%s %" PRIu64 "\n", lines[i].text, count)) < 0)
			ret = -1;
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	if (ret) {
		if (!errno)
			errno = EIO;
		return ret;
	}
	return stream_finish(out);
}
