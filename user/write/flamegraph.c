// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "write/flamegraph.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/frame_format.h"
#include "base/hashmap.h"
#include "base/util.h"
#include "base/escape.h"
#include "write/thread_names.h"
#include "flamegraph_js.h" /* generated from flamegraph.js */

#define WIDTH 1200
#define PAD 10
#define FRAME_H 16
#define TOP 56    /* title, buttons and legend above the frames */
#define BOTTOM 24 /* the details line below */
#define MIN_PX 0.1
/* Frames drawn at most: thousands of distinct deep stacks, each wide enough
 * to draw, would make a picture of gigabytes no viewer opens. The graph
 * stops at the depth that would pass this, and says so. */
#define MAX_NODES 1000000

/* A node's identity under its parent: a frame, a process or a thread. */
enum node_kind {
	NODE_ROOT,
	NODE_FRAME,
	NODE_PROCESS,
	NODE_THREAD,
	NODE_CONTAINER
};

struct node_key {
	uint32_t parent;
	uint32_t kind; /* enum node_kind */
	uint32_t id;   /* frame id, or the comm / thread string id */
	uint32_t tid;  /* NODE_THREAD */
};

struct node {
	struct node_key key;
	uint64_t total;
	uint64_t base;                      /* a diff's before: samples labelled LABEL_BASE (not in total) */
	uint32_t first_child, next_sibling; /* 0: none (node 0 is the root) */
	uint32_t depth;
	char *name; /* set when drawn */
};

struct tree {
	const struct profile *p;
	struct node *v;
	size_t n, cap;
	struct process_split *split; /* the process frames' names */
	bool diff;
	double max_change;  /* the largest change of share of a drawn node */
	uint32_t cut_depth; /* 0, or the first depth left out (MAX_NODES) */
};

/* A node of this level, under a parent of the level above (h: this level's
 * nodes by key). */
static uint32_t child_node(struct tree *t, struct hashmap *h, uint32_t parent, uint32_t kind, uint32_t id, uint32_t tid,
			   uint64_t count, bool base)
{
	struct node_key k = { parent, kind, id, tid };
	bool created;
	uint64_t *v = hashmap__put(h, &k, sizeof(k), &created);

	if (created) {
		xgrow(&t->v, &t->cap, t->n + 1, sizeof(*t->v));
		t->v[t->n] = (struct node){ .key = k, .depth = t->v[parent].depth + 1 };
		*v = t->n++;
	}
	*(base ? &t->v[*v].base : &t->v[*v].total) += count;
	return (uint32_t)*v;
}

static void node_name(const struct tree *t, const struct node *n, char *buf, size_t size)
{
	const struct frame *f;

	switch (n->key.kind) {
	case NODE_ROOT:
		snprintf(buf, size, "all");
		break;
	case NODE_PROCESS: /* tid holds the pid when processes are told apart */
		if (n->key.tid)
			process_split__name(t->split, t->p, n->key.id, n->key.tid, buf, size);
		else
			snprintf(buf, size, "%s", profile__str_at(t->p, n->key.id));
		break;
	case NODE_THREAD:
		snprintf(buf, size, "%s [tid %u]", profile__str_at(t->p, n->key.id), n->key.tid);
		break;
	case NODE_CONTAINER:
		container_frame__format(t->p, n->key.id, n->key.tid, buf, size);
		break;
	default:
		f = profile__frame_at(t->p, n->key.id);
		frame__format(t->p, f, buf, size);
		if (f->kind == FRAME_KERNEL)
			strncat(buf, "_[k]", size - strlen(buf) - 1);
	}
}

/* Children in name order, as flame graphs draw them. */
static int cmp_name(const void *a, const void *b)
{
	return strcmp((*(struct node *const *)a)->name, (*(struct node *const *)b)->name);
}

/* FNV-1a of the name, for a stable colour variation. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* A node's change of share from before to after, in points of 100. */
static double change(const struct tree *t, const struct node *n)
{
	double after = t->v[0].total ? 100.0 * (double)n->total / (double)t->v[0].total : 0;
	double before = t->v[0].base ? 100.0 * (double)n->base / (double)t->v[0].base : 0;

	return after - before;
}

/* A diff's colours: red grew, blue shrank, as deep as the change is large
 * against the largest one drawn; near-white for no change. */
static void diff_colour(const struct tree *t, const struct node *n, char *buf, size_t size)
{
	double c = change(t, n), k = t->max_change > 0 ? (c < 0 ? -c : c) / t->max_change : 0;
	unsigned v = (unsigned)(238 - 200 * k);

	if (c > 0)
		snprintf(buf, size, "rgb(255,%u,%u)", v, v);
	else if (c < 0)
		snprintf(buf, size, "rgb(%u,%u,255)", v, v);
	else
		snprintf(buf, size, "rgb(238,238,238)");
}

static void colour(const struct tree *t, const struct node *n, char *buf, size_t size)
{
	uint32_t h = name_hash(n->name), v1 = h % 1000, v2 = (h / 1000) % 1000;

	if (t->diff) {
		diff_colour(t, n, buf, size);
		return;
	}

	if (n->key.kind != NODE_FRAME) {
		snprintf(buf, size, "rgb(%u,%u,%u)", 190 + v1 % 30, 190 + v1 % 30, 200 + v2 % 30); /* grey-blue */
		return;
	}
	switch (profile__frame_at(t->p, n->key.id)->kind) {
	case FRAME_PYTHON: /* blues */
		snprintf(buf, size, "rgb(%u,%u,%u)", 90 + v1 * 60 / 1000, 140 + v2 * 50 / 1000, 235 + v1 % 20);
		break;
	case FRAME_KERNEL: /* aquas */
		snprintf(buf, size, "rgb(%u,%u,%u)", 60 + v1 * 50 / 1000, 200 + v2 * 40 / 1000, 140 + v1 % 40);
		break;
	case FRAME_NATIVE: /* the classic warm palette */
		snprintf(buf, size, "rgb(%u,%u,%u)", 205 + v1 * 50 / 1000, v2 * 230 / 1000, 55 * v1 / 1000);
		break;
	default: /* marks; time off the CPU (or awaiting) in the cool colours of off-CPU flame graphs */
		if (!strncmp(n->name, "[off-cpu:", 9) || !strncmp(n->name, "[await:", 7))
			snprintf(buf, size, "rgb(%u,%u,%u)", 160 + v1 * 30 / 1000, 95 + v2 * 25 / 1000, 215 + v1 % 25);
		else if (!strncmp(n->name, "[task", 5)) /* asyncio tasks: pinks */
			snprintf(buf, size, "rgb(%u,%u,%u)", 235 + v1 % 15, 140 + v2 * 30 / 1000, 185 + v1 % 20);
		else
			snprintf(buf, size, "rgb(160,160,160)");
	}
}

struct drawer {
	struct tree *t;
	FILE *out;
	uint64_t total;
	int unit;     /* enum profile_unit: what a count is */
	double scale; /* pixels per sample */
	int height;
	size_t drawn;
	char buf[4096]; /* one name at a time */
};

/* A node being drawn: its children, sorted, and where the next one goes. */
struct pending {
	struct node **kids;
	size_t nk, next;
	double x; /* left edge of the next child */
};

/* Draw one node and list its children wide enough to see, in name order. */
static void draw_node(struct drawer *d, uint32_t id, double x, struct pending *p)
{
	struct node *n = &d->t->v[id];
	size_t cap = 0;
	char fill[32];
	double w = n->total * d->scale;
	int y = d->height - BOTTOM - (int)(n->depth + 1) * FRAME_H;

	node_name(d->t, n, d->buf, sizeof(d->buf));
	n->name = xstrdup(d->buf);
	colour(d->t, n, fill, sizeof(fill));
	fprintf(d->out, "<g><title>");
	xml_text(d->out, d->buf);
	if (d->unit == PROFILE_UNIT_BYTES) { /* a memory profile's view */
		char size[32];

		fprintf(d->out, " (%s, %.2f%%", human_bytes(n->total, size, sizeof(size)), 100.0 * n->total / d->total);
	} else {
		fprintf(d->out, " (%" PRIu64 " %s, %.2f%%", n->total,
			d->unit == PROFILE_UNIT_OBJECTS ? "sample points" : "samples", 100.0 * n->total / d->total);
	}
	if (d->t->diff)
		fprintf(d->out, "; before %" PRIu64 " samples, %.2f%%; %+.2f points", n->base,
			d->t->v[0].base ? 100.0 * n->base / d->t->v[0].base : 0.0, change(d->t, n));
	fprintf(d->out,
		")</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
		"fill=\"%s\" rx=\"2\" ry=\"2\"/><text x=\"%.1f\" y=\"%d\"></text></g>\n",
		x, y, w, FRAME_H - 1, fill, x + 3, y + FRAME_H - 5);
	d->drawn++;
	free(n->name);
	n->name = NULL;

	*p = (struct pending){ .x = x };
	for (uint32_t c = n->first_child; c; c = d->t->v[c].next_sibling)
		if (d->t->v[c].total * d->scale >= MIN_PX) {
			node_name(d->t, &d->t->v[c], d->buf, sizeof(d->buf));
			d->t->v[c].name = xstrdup(d->buf);
			xgrow(&p->kids, &cap, p->nk + 1, sizeof(*p->kids));
			p->kids[p->nk++] = &d->t->v[c];
		}
	if (p->nk)
		qsort(p->kids, p->nk, sizeof(*p->kids), cmp_name);
	for (size_t i = 0; i < p->nk; i++) {
		free(p->kids[i]->name);
		p->kids[i]->name = NULL;
	}
}

/* Depth first, with a stack of our own: stacks can be deeper than the C stack allows. */
static void draw(struct drawer *d, uint32_t root, double x0)
{
	struct pending *stack = NULL;
	size_t sp = 0, cap = 0;

	xgrow(&stack, &cap, 1, sizeof(*stack));
	draw_node(d, root, x0, &stack[sp++]);
	while (sp) {
		struct pending *top = &stack[sp - 1];

		if (top->next == top->nk) {
			free(top->kids);
			sp--;
			continue;
		}
		struct node *kid = top->kids[top->next++];
		double x = top->x;

		top->x += kid->total * d->scale;
		xgrow(&stack, &cap, sp + 1, sizeof(*stack)); /* may move top */
		draw_node(d, (uint32_t)(kid - d->t->v), x, &stack[sp++]);
	}
	free(stack);
}

/* An entry on its way down the tree: the node it has reached. */
struct walker {
	uint32_t entry, at;
};

/* Step `level` of an entry's path: its process, container, thread, then its
 * frames root first; false past its end. */
static bool step(const struct tree *t, const struct flamegraph_opts *o, struct hashmap *names,
		 const struct profile_entry *e, uint32_t level, struct node_key *k)
{
	bool container = o->containers && e->labels.container;

	if (level-- == 0) {
		bool split = process_split__by_pid(t->split);

		*k = (struct node_key){ .kind = NODE_PROCESS, .id = e->labels.comm, .tid = split ? e->labels.pid : 0 };
		return true;
	}
	if (container && level-- == 0) {
		/* tid holds the container's name (a string id) */
		*k = (struct node_key){ .kind = NODE_CONTAINER,
					.id = e->labels.container,
					.tid = e->labels.container_name };
		return true;
	}
	if (o->threads && level-- == 0) {
		*k = (struct node_key){ .kind = NODE_THREAD,
					.id = thread_names__of(names, &e->labels),
					.tid = e->labels.tid };
		return true;
	}
	if (level >= e->nframes)
		return false;
	*k = (struct node_key){ .kind = NODE_FRAME, .id = e->frames[level] };
	return true;
}

/*
 * The tree one level at a time, keeping only nodes wide enough to be drawn
 * (the test draw_node makes): an entry stops where its path gets too
 * narrow. The tree then holds what the picture shows (at most ~12,000
 * nodes a level), not one node per frame of every distinct stack, which
 * for thousands of deep stacks of distinct processes took gigabytes.
 */
static void build(struct tree *t, const struct flamegraph_opts *o)
{
	size_t pos = 0, nw = 0;
	struct profile_entry e;
	struct walker *w = xcalloc(profile__nstacks(t->p) + 1, sizeof(*w));
	struct hashmap *names = o->threads ? thread_names__latest(t->p) : NULL;
	double scale;

	xgrow(&t->v, &t->cap, 1, sizeof(*t->v));
	t->v[0] = (struct node){ .key = { .kind = NODE_ROOT } };
	t->n = 1;
	t->split = process_split__new(t->p, o->processes);
	while (profile__next(t->p, &pos, &e)) {
		*((e.labels.flags & LABEL_BASE) ? &t->v[0].base : &t->v[0].total) += e.count;
		w[nw++] = (struct walker){ .entry = (uint32_t)(pos - 1) };
	}
	scale = t->v[0].total ? (WIDTH - 2.0 * PAD) / t->v[0].total : 0;
	for (uint32_t level = 0; nw; level++) {
		struct hashmap *h = hashmap__new();
		size_t first = t->n, kept = first, alive = 0;

		for (size_t i = 0; i < nw; i++) {
			struct node_key k;

			profile__entry(t->p, w[i].entry, &e);
			if (!step(t, o, names, &e, level, &k))
				continue;
			w[i].at = child_node(t, h, w[i].at, k.kind, k.id, k.tid, e.count, e.labels.flags & LABEL_BASE);
			w[alive++] = w[i];
		}
		hashmap__free(h);
		/* This level's nodes too narrow to draw go, and the entries in them. */
		uint32_t *to = xcalloc(t->n - first + 1, sizeof(*to));
		for (size_t i = first; i < t->n; i++) {
			to[i - first] = t->v[i].total * scale >= MIN_PX ? (uint32_t)kept : UINT32_MAX;
			if (to[i - first] != UINT32_MAX)
				t->v[kept++] = t->v[i];
		}
		nw = 0;
		for (size_t i = 0; i < alive; i++)
			if ((w[i].at = to[w[i].at - first]) != UINT32_MAX)
				w[nw++] = w[i];
		free(to);
		if (kept > MAX_NODES) {           /* this level is one too many */
			t->cut_depth = level + 1; /* the depth of this level's nodes */
			kept = first;
			nw = 0;
		}
		t->n = kept;
	}
	free(w);
	hashmap__free(names);
	/* Link children once, now that the tree is complete. */
	for (size_t i = t->n; i-- > 1;) {
		struct node *parent = &t->v[t->v[i].key.parent];

		t->v[i].next_sibling = parent->first_child;
		parent->first_child = (uint32_t)i;
	}
}

/* The deepest frame wide enough to be drawn: the picture is as tall as
 * that, not as the deepest stack, or it opens on empty space above thin
 * towers. A child is never wider than its parent, so width alone decides. */
static uint32_t drawn_depth(const struct tree *t, double scale)
{
	uint32_t deepest = 0;

	for (size_t i = 1; i < t->n; i++)
		if (t->v[i].total * scale >= MIN_PX && t->v[i].depth > deepest)
			deepest = t->v[i].depth;
	return deepest;
}

/* The largest change of share among the frames drawn: the diff's colour scale. */
static double max_change(const struct tree *t, double scale)
{
	double m = 0;

	for (size_t i = 1; i < t->n; i++) {
		double c = change(t, &t->v[i]);

		if (t->v[i].total * scale >= MIN_PX && (c < 0 ? -c : c) > m)
			m = c < 0 ? -c : c;
	}
	return m;
}

int flamegraph__write(const struct profile *p, const struct flamegraph_opts *o, FILE *out)
{
	struct tree t = { .p = p, .diff = o->diff };
	struct drawer d = { .t = &t, .out = out, .unit = profile__meta_of(p)->value_unit };
	const char *title = o->title ? o->title : "pyebpf";

	build(&t, o);
	d.total = t.v[0].total;
	d.scale = d.total ? (WIDTH - 2.0 * PAD) / d.total : 0;
	d.height = TOP + (int)(drawn_depth(&t, d.scale) + 1) * FRAME_H + BOTTOM;
	if (t.diff)
		t.max_change = max_change(&t, d.scale);

	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\" onload=\"init(evt)\">\n"
		"<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
		"#title { font-size: 17px; text-anchor: middle; }\n"
		"#frames > g:hover > rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
		".button { cursor: pointer; fill: rgb(60,60,160); } .hide { display: none; }\n"
		".parent { opacity: 0.5; }</style>\n",
		WIDTH, d.height, WIDTH, d.height);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s\n]]></script>\n", flamegraph_js);
	fprintf(out,
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"rgb(248,248,248)\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"22\">",
		WIDTH, d.height, WIDTH / 2);
	xml_text(out, title);
	if (t.cut_depth)
		fprintf(out, " (frames from depth %u on left out: a graph draws at most %d)", t.cut_depth, MAX_NODES);
	fprintf(out,
		"</text>\n"
		"<text id=\"unzoom\" class=\"button hide\" x=\"%d\" y=\"22\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%d\" y=\"22\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"flip\" class=\"button\" x=\"%d\" y=\"22\" text-anchor=\"end\">Icicle</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
		PAD, WIDTH - PAD, WIDTH - PAD - 80, WIDTH - PAD, d.height - 8, PAD, d.height - 8);
	/* The legend: one swatch per kind of frame. */
	static const struct {
		const char *name, *fill;
	} legend[] = { { "Python", "rgb(120,165,245)" },
		       { "native", "rgb(230,115,27)" },
		       { "kernel", "rgb(85,220,160)" },
		       { "process / thread", "rgb(205,205,215)" },
		       { "off-CPU / await: why it waited", "rgb(175,105,228)" },
		       { "asyncio task", "rgb(242,155,195)" } };
	/* The off-CPU and task swatches only where there can be such time. */
	static const struct {
		const char *name, *fill;
	} diff_legend[] = { { "share grew", "rgb(255,60,60)" },
			    { "share shrank", "rgb(60,60,255)" },
			    { "no change (widths: after)", "rgb(238,238,238)" } };
	size_t nlegend = sizeof(legend) / sizeof(legend[0]) - (profile__meta_of(p)->wall ? 0 : 2), x = PAD;

	if (t.diff) {
		for (size_t i = 0; i < sizeof(diff_legend) / sizeof(diff_legend[0]); i++)
			fprintf(out,
				"<rect x=\"%zu\" y=\"34\" width=\"12\" height=\"12\" fill=\"%s\"/>"
				"<text x=\"%zu\" y=\"44\">%s</text>\n",
				PAD + i * 130, diff_legend[i].fill, PAD + i * 130 + 16, diff_legend[i].name);
		nlegend = 0;
	}
	for (size_t i = 0; i < nlegend; i++) {
		fprintf(out,
			"<rect x=\"%zu\" y=\"34\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			"<text x=\"%zu\" y=\"44\">%s</text>\n",
			x, legend[i].fill, x + 16, legend[i].name);
		x += 16 + strlen(legend[i].name) * 7 + 24; /* 12px Verdana: about 7px a letter */
	}
	fprintf(out, "<g id=\"frames\" data-total=\"%" PRIu64 "\">\n", d.total);
	if (d.total)
		draw(&d, 0, PAD);
	fputs("</g>\n</svg>\n", out);

	process_split__free(t.split);
	free(t.v);
	return stream_finish(out);
}
