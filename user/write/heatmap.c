// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "write/heatmap.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
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
	if (!realpath(path, real)) {
		if (errno == ENOENT)
			*why = "no longer on this host (deleted or moved since)";
		return NULL;
	}
	*why = "a link to a file that is not a .py";
	if (!ends_py(real))
		return NULL;
	*why = "not a regular file here";
	return target_read(0, real, HEAT_MAX_SOURCE, len);
}

/* Lines this far from a sampled one are folded away (a stretch of at least
 * HEAT_FOLD_MIN of them: a shorter one shows). */
#define HEAT_CONTEXT 3
#define HEAT_FOLD_MIN 8

/* What the page shades by: the hottest line of the whole profile is the
 * darkest (per file, a file's one cold line read as hot as the program's
 * hottest); a square root keeps a 1% line visible beside a 90% one. */
struct heat_scale {
	uint64_t all, max_total, max_self;
};

static double shade(uint64_t v, uint64_t max)
{
	return v && max ? 0.06 + 0.74 * sqrt((double)v / (double)max) : 0;
}

static void row(FILE *out, size_t k, uint32_t n, const struct heat_line *ln, const struct heat_scale *sc,
		const char *text, size_t len)
{
	char *line = xmalloc(len + 1);

	memcpy(line, text, len);
	line[len] = '\0';
	if (ln && ln->total)
		fprintf(out,
			"<tr id=f%zu-l%u style=\"--t:%.2f;--s:%.2f\"><td class=n>%u<td class=c>%" PRIu64
			"<td class=c>%" PRIu64,
			k, n, shade(ln->total, sc->max_total), shade(ln->self, sc->max_self), n, ln->total, ln->self);
	else
		fprintf(out, "<tr><td class=n>%u<td class=c><td class=c>", n);
	fputs("<td><pre>", out);
	xml_text(out, line);
	fputs("</pre></tr>\n", out);
	free(line);
}

static bool sampled(const struct heat_file *f, uint32_t n)
{
	return n < f->nlines && f->lines[n].total;
}

/* Is line n within HEAT_CONTEXT of a sampled line? */
static bool near_sampled(const struct heat_file *f, uint32_t n)
{
	for (uint32_t d = n > HEAT_CONTEXT ? n - HEAT_CONTEXT : 1; d <= n + HEAT_CONTEXT; d++)
		if (sampled(f, d))
			return true;
	return false;
}

/* The source's lines: every one, those far from any sample folded away
 * behind a row that says how many (a click, or "every line", shows them). */
static void source_rows(FILE *out, size_t k, const struct heat_file *f, const struct heat_scale *sc, const char *src,
			size_t len)
{
	const char *s = src, *end = src + len;
	uint32_t total = 0;

	for (const char *c = src; c < end; total++) {
		const char *nl = memchr(c, '\n', (size_t)(end - c));

		c = nl ? nl + 1 : end;
	}
	for (uint32_t n = 1; s < end; n++) {
		uint32_t run = 0;

		if (!near_sampled(f, n))
			while (n + run <= total && !near_sampled(f, n + run))
				run++;
		if (run >= HEAT_FOLD_MIN)
			fprintf(out,
				"</tbody><tbody class=gap><tr><td colspan=4>&#8943; lines %u&#8211;%u: no "
				"samples</tbody>"
				"<tbody class=cold>\n",
				n, n + run - 1);
		for (uint32_t last = n + (run >= HEAT_FOLD_MIN ? run - 1 : 0); s < end && n <= last; n++) {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			size_t l = nl ? (size_t)(nl - s) : (size_t)(end - s);

			row(out, k, n, sampled(f, n) ? &f->lines[n] : NULL, sc, s, l);
			s += l + 1;
		}
		n--;
		if (run >= HEAT_FOLD_MIN)
			fputs("</tbody><tbody>\n", out);
	}
}

static void file_out(FILE *out, const struct profile *p, const struct heat_file *f, const struct heat_scale *sc,
		     bool fresh, size_t k)
{
	uint32_t hottest = 0;
	size_t len = 0;
	const char *why;
	char *src = source_of(p, f, fresh, &len, &why);

	for (uint32_t i = 1; i < f->nlines; i++)
		if (f->lines[i].total > f->lines[hottest].total) /* line 0 is no line: its total stays 0 */
			hottest = i;
	fprintf(out, "<section id=f%zu><h2>", k);
	xml_text(out, profile__str_at(p, f->module));
	fprintf(out, "</h2><p>%" PRIu64 " samples ran its code (%.1f%%), %" PRIu64 " in it (self)", f->total,
		sc->all ? 100.0 * (double)f->total / (double)sc->all : 0, f->self);
	if (hottest)
		fprintf(out, "; hottest: <a href=\"#f%zu-l%u\">line %u</a>", k, hottest, hottest);
	if (!src)
		fprintf(out, "; source not shown: %s (sampled lines only)", why);
	fputs("</p>\n<div class=scroll><table class=src><thead><tr><th>line<th>total<th>self<th></thead><tbody>\n",
	      out);
	if (src) {
		source_rows(out, k, f, sc, src, len);
	} else {
		for (uint32_t n = 1; n < f->nlines; n++)
			if (f->lines[n].total)
				row(out, k, n, &f->lines[n], sc, "", 0);
	}
	fputs("</tbody></table></div></section>\n", out);
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
	struct heat_scale sc = { 0 };
	const struct profile_meta *m = profile__meta_of(p);
	bool fresh = epoch_now_ns() - (m->start_epoch_ns + m->duration_ns) < 10 * 1000000000LL;

	count(p, files, &all);
	v = xcalloc(hashmap__size(files) + 1, sizeof(*v));
	while (hashmap__next_ptr(files, &pos, &key, &len, &val))
		v[n++] = val;
	qsort(v, n, sizeof(*v), by_total);
	sc.all = all;
	for (size_t i = 0; i < n && i < HEAT_MAX_FILES; i++)
		for (uint32_t l = 1; l < v[i]->nlines; l++) {
			sc.max_total = v[i]->lines[l].total > sc.max_total ? v[i]->lines[l].total : sc.max_total;
			sc.max_self = v[i]->lines[l].self > sc.max_self ? v[i]->lines[l].self : sc.max_self;
		}
	fputs("<!doctype html>\n<html><head><meta charset=utf-8><title>pyebpf heatmap</title><style>\n"
	      "body{font:14px system-ui,sans-serif;margin:1em 2em;color:#111}h2{font-size:15px;margin:1.5em 0 .2em}\n"
	      "table{border-collapse:collapse}td,th{padding:0 .6em;text-align:left}\n"
	      ".scroll{overflow-x:auto}.src{width:100%}.src td:last-child{width:100%}\n"
	      ".src tr{background:rgba(255,90,0,var(--t,0))}body.self .src tr{background:rgba(255,90,0,var(--s,0))}\n"
	      ".src td.n{text-align:right;color:#666;font:12px monospace}\n"
	      ".src td.c{text-align:right;color:#000;font:12px monospace}\n"
	      ".src pre{margin:0;font:12px/1.35 monospace;white-space:pre}\n"
	      ".cold{display:none}.cold.open,body.all .cold{display:table-row-group}body.all .gap{display:none}\n"
	      ".gap td{color:#666;font:12px monospace;cursor:pointer;padding:.2em 3em;background:#f4f4f4}\n"
	      ".idx td:nth-child(n+2){text-align:right}\n"
	      ".legend{display:inline-block;width:12em;height:.9em;vertical-align:middle;"
	      "background:linear-gradient(90deg,rgba(255,90,0,.06),rgba(255,90,0,.8))}\n"
	      "</style></head><body>\n",
	      out);
	fprintf(out,
		"<h1>Python source heatmap</h1><p>%" PRIu64 " samples; %zu source files ran (%s). Each line "
		"is shaded by the samples that had it on their stack (total), or by those where it ran itself "
		"(self); the whole profile's hottest line is the darkest.</p>\n"
		"<p>0 <span class=legend></span> the hottest line: %" PRIu64 " samples (%.1f%%) total, %" PRIu64
		" self &#160; <label><input type=checkbox id=by-self> shade by self</label> &#160; "
		"<label><input type=checkbox id=every> show every line</label></p>\n"
		"<script>\n"
		"document.getElementById('by-self').onchange=e=>document.body.classList.toggle('self',e.target.checked)"
		";\n"
		"document.getElementById('every').onchange=e=>document.body.classList.toggle('all',e.target.checked);\n"
		"document.addEventListener('click',e=>{const g=e.target.closest('.gap');"
		"if(g){g.style.display='none';g.nextElementSibling.classList.add('open');}});\n"
		"</script>\n<table class=idx><tr><th>file<th>total<th>%%<th>self\n",
		all, n, n > HEAT_MAX_FILES ? "the busiest 500 shown" : "all shown", sc.max_total,
		all ? 100.0 * (double)sc.max_total / (double)all : 0, sc.max_self);
	for (size_t i = 0; i < n && i < HEAT_MAX_FILES; i++) {
		fprintf(out, "<tr><td><a href=\"#f%zu\">", i);
		xml_text(out, profile__str_at(p, v[i]->module));
		fprintf(out, "</a><td>%" PRIu64 "<td>%.1f<td>%" PRIu64 "\n", v[i]->total,
			all ? 100.0 * (double)v[i]->total / (double)all : 0, v[i]->self);
	}
	fputs("</table>\n", out);
	for (size_t i = 0; i < n && i < HEAT_MAX_FILES; i++)
		file_out(out, p, v[i], &sc, fresh, i);
	fputs("</body></html>\n", out);
	free(v);
	hashmap__free_values(files, heat_file_free);
	return stream_finish(out);
}
