// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "write/heatmap.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/hashmap.h"
#include "base/util.h"
#include "system/target_fs.h"

/* Bounds: the files shown (busiest first), a source's bytes, a line number. */
#define HEAT_MAX_FILES 500
#define HEAT_MAX_SOURCE (8 << 20)
#define HEAT_MAX_LINE 1000000

struct heat_line {
	uint64_t self, total;
	size_t stamp; /* the entry that counted it last: a line once per stack */
};

struct heat_file {
	uint32_t module; /* string id of its path */
	uint32_t pid;    /* a process that ran it: its view of the file */
	bool contained;  /* that process is in a container: never the host's file */
	uint64_t self, total;
	struct heat_line *lines; /* by line number */
	uint32_t nlines;
};

static struct heat_file *file_of(struct hashmap *files, uint32_t module, const struct sample_labels *l)
{
	bool created;
	void **slot = hashmap__put_ptr(files, &module, sizeof(module), &created);
	struct heat_file *f = *slot;

	if (created) {
		f = *slot = xcalloc(1, sizeof(*f));
		f->module = module;
		f->pid = l->pid;
		f->contained = l->container != 0;
	}
	return f;
}

static struct heat_line *line_of(struct heat_file *f, uint32_t line)
{
	if (line >= f->nlines) {
		uint32_t n = line + 1 > 2 * f->nlines ? line + 1 : 2 * f->nlines;

		f->lines = xrealloc(f->lines, n * sizeof(*f->lines));
		memset(f->lines + f->nlines, 0, (n - f->nlines) * sizeof(*f->lines));
		f->nlines = n;
	}
	return &f->lines[line];
}

/* Every Python frame's line: total once per stack, self at the Python leaf;
 * a file's total: the stacks that ran any of its lines. */
static void count(const struct profile *p, struct hashmap *files, uint64_t *all)
{
	struct profile_entry e;
	size_t pos = 0;

	for (size_t id = 1; profile__next(p, &pos, &e); id++) {
		bool leaf = true;

		*all += e.count;
		for (uint32_t i = e.nframes; i-- > 0;) {
			const struct frame *fr = profile__frame_at(p, e.frames[i]);

			if (fr->kind != FRAME_PYTHON || !fr->module || !fr->line || fr->line > HEAT_MAX_LINE)
				continue;
			struct heat_file *f = file_of(files, fr->module, &e.labels);
			struct heat_line *ln = line_of(f, fr->line);

			if (leaf) {
				ln->self += e.count;
				f->self += e.count;
				leaf = false;
			}
			if (ln->stamp != id) { /* recursion: a line once per stack */
				ln->stamp = id;
				ln->total += e.count;
			}
			if (f->lines[0].stamp != id) { /* line 0 is no line: the file's stamp */
				f->lines[0].stamp = id;
				f->total += e.count;
			}
		}
	}
}

static int by_total(const void *a, const void *b)
{
	const struct heat_file *x = *(struct heat_file *const *)a, *y = *(struct heat_file *const *)b;

	return x->total != y->total ? (x->total < y->total ? 1 : -1)
				    : (x->module > y->module) - (x->module < y->module);
}

static bool ends_py(const char *path)
{
	size_t n = strlen(path);

	return n > 3 && !strcmp(path + n - 3, ".py");
}

/*
 * The file's source as its process saw it while it lives, else (outside a
 * container) as this host sees it; only a regular .py file, its real name a
 * .py too (a link named x.py to another file is not read). NULL with *why.
 */
static char *source_of(const struct profile *p, const struct heat_file *f, bool fresh, size_t *len, const char **why)
{
	const char *path = profile__str_at(p, f->module);
	char real[PATH_MAX];
	char *s;

	*why = "not a .py file";
	if (path[0] != '/' || !ends_py(path))
		return NULL;
	/* Its process, if the recording just ended (report of an old one: the
	 * pid may be another process's by now). */
	s = fresh ? target_read(f->pid, path, HEAT_MAX_SOURCE, len) : NULL;
	if (s || f->contained) {
		*why = "its process is gone, and its files were in its container";
		return s;
	}
	*why = "not readable on this host";
	if (!realpath(path, real))
		return NULL;
	*why = "a link to a file that is not a .py";
	if (!ends_py(real))
		return NULL;
	*why = "not a regular file here";
	return target_read(0, real, HEAT_MAX_SOURCE, len);
}

static void row(FILE *out, uint32_t n, const struct heat_line *ln, uint64_t max, const char *text, size_t len)
{
	double a = ln && ln->total && max ? 0.08 + 0.72 * (double)ln->total / (double)max : 0;
	char *line = xmalloc(len + 1);

	memcpy(line, text, len);
	line[len] = '\0';
	if (a > 0)
		fprintf(out, "<tr style=\"background:rgba(255,90,0,%.2f)\">", a);
	else
		fputs("<tr>", out);
	fprintf(out, "<td class=n>%u<td class=c>", n);
	if (ln && ln->total)
		fprintf(out, "%" PRIu64 "<td class=c>%" PRIu64, ln->total, ln->self);
	else
		fputs("<td class=c>", out);
	fputs("<td><pre>", out);
	xml_text(out, line);
	fputs("</pre></tr>\n", out);
	free(line);
}

static void file_out(FILE *out, const struct profile *p, const struct heat_file *f, bool fresh, size_t k)
{
	uint64_t max = 0;
	size_t len = 0;
	const char *why;
	char *src = source_of(p, f, fresh, &len, &why);

	for (uint32_t i = 1; i < f->nlines; i++)
		if (f->lines[i].total > max)
			max = f->lines[i].total;
	fprintf(out, "<section id=f%zu><h2>", k);
	xml_text(out, profile__str_at(p, f->module));
	fprintf(out, "</h2><p>%" PRIu64 " samples ran its code, %" PRIu64 " in it (self)", f->total, f->self);
	if (!src)
		fprintf(out, "; source not shown: %s (sampled lines only)", why);
	fputs("</p>\n<table class=src><tr><th>line<th>total<th>self<th>\n", out);
	if (src) {
		const char *s = src, *end = src + len;

		for (uint32_t n = 1; s < end; n++) {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			size_t l = nl ? (size_t)(nl - s) : (size_t)(end - s);

			row(out, n, n < f->nlines ? &f->lines[n] : NULL, max, s, l);
			s += l + 1;
		}
	} else {
		for (uint32_t n = 1; n < f->nlines; n++)
			if (f->lines[n].total)
				row(out, n, &f->lines[n], max, "", 0);
	}
	fputs("</table></section>\n", out);
	free(src);
}

static void heat_file_free(void *v)
{
	struct heat_file *f = v;

	free(f->lines);
	free(f);
}

int heatmap__write(const struct profile *p, FILE *out)
{
	struct hashmap *files = hashmap__new();
	struct heat_file **v;
	size_t n = 0, pos = 0, len;
	const void *key;
	void *val;
	uint64_t all = 0;
	const struct profile_meta *m = profile__meta_of(p);
	bool fresh = epoch_now_ns() - (m->start_epoch_ns + m->duration_ns) < 10 * 1000000000LL;

	count(p, files, &all);
	v = xcalloc(hashmap__size(files) + 1, sizeof(*v));
	while (hashmap__next_ptr(files, &pos, &key, &len, &val))
		v[n++] = val;
	qsort(v, n, sizeof(*v), by_total);
	fputs("<!doctype html>\n<html><head><meta charset=utf-8><title>pyebpf heatmap</title><style>\n"
	      "body{font:14px system-ui,sans-serif;margin:1em 2em}h2{font-size:15px;margin:1.5em 0 .2em}\n"
	      "table{border-collapse:collapse}td,th{padding:0 .6em;text-align:left}\n"
	      ".src td.n,.src td.c{text-align:right;color:#555;font:12px monospace}\n"
	      ".src pre{margin:0;font:12px/1.35 monospace;white-space:pre}\n"
	      ".idx td:nth-child(n+2){text-align:right}\n"
	      "</style></head><body>\n",
	      out);
	fprintf(out,
		"<h1>Python source heatmap</h1><p>%" PRIu64 " samples; %zu source files ran (%s). Each line "
		"is shaded by the samples that had it on their stack (total); self: the samples where it ran "
		"itself.</p>\n<table class=idx><tr><th>file<th>total<th>self\n",
		all, n, n > HEAT_MAX_FILES ? "the busiest 500 shown" : "all shown");
	for (size_t i = 0; i < n && i < HEAT_MAX_FILES; i++) {
		fprintf(out, "<tr><td><a href=\"#f%zu\">", i);
		xml_text(out, profile__str_at(p, v[i]->module));
		fprintf(out, "</a><td>%" PRIu64 "<td>%" PRIu64 "\n", v[i]->total, v[i]->self);
	}
	fputs("</table>\n", out);
	for (size_t i = 0; i < n && i < HEAT_MAX_FILES; i++)
		file_out(out, p, v[i], fresh, i);
	fputs("</body></html>\n", out);
	free(v);
	hashmap__free_values(files, heat_file_free);
	return stream_finish(out);
}
