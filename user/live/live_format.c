// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "live/live_format.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "base/escape.h"

/* An escaped name can be four times its length (every byte "\xNN"). */
#define NAME_MAX_BYTES 4096
#define ESCAPED (4 * NAME_MAX_BYTES + 1)

size_t live_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

void live_clip(char *s, size_t cols)
{
	size_t n = 0;

	for (char *c = s; *c; c++)
		if (((unsigned char)*c & 0xc0) != 0x80 && n++ == cols) {
			*c = '\0';
			return;
		}
}

void live_clip_left(char *s, size_t cols)
{
	size_t w = live_width(s), skip, n = 0;
	char *c = s;

	if (w <= cols || cols < 4)
		return;
	skip = w - (cols - 3); /* characters to drop */
	for (; *c; c++)
		if (((unsigned char)*c & 0xc0) != 0x80 && n++ == skip)
			break;
	memmove(s + 3, c, strlen(c) + 1);
	memcpy(s, "...", 3);
}

/* A row's name in two parts: the function, and "file:line" (empty for a native frame). */
static void split_name(const struct live_row *r, char *func, char *where)
{
	static char part[NAME_MAX_BYTES];
	size_t len = strlen(r->name), flen = r->func_len < len ? r->func_len : len;

	snprintf(part, sizeof(part), "%.*s", (int)flen, r->name);
	text_escape(part, func, ESCAPED);
	/* "function (where)" */
	if (len >= flen + 3 && r->name[flen] == ' ' && r->name[flen + 1] == '(' && r->name[len - 1] == ')')
		snprintf(part, sizeof(part), "%.*s", (int)(len - flen - 3), r->name + flen + 2);
	else
		part[0] = '\0';
	text_escape(part, where, ESCAPED);
}

size_t live_func_width(const struct live_row *rows, size_t n, size_t max)
{
	static char func[ESCAPED], where[ESCAPED];
	size_t w = 8;

	for (size_t i = 0; i < n && w < max; i++) {
		size_t fw;

		split_name(&rows[i], func, where);
		fw = live_width(func);
		w = fw > w ? fw : w;
	}
	return w < max ? w : max;
}

/* Appends to buf (of size), as snprintf does; never past the end. */
__attribute__((format(printf, 3, 4))) static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

void live_format_status(const struct live_status *s, char *buf, size_t size)
{
	static char targets[1024];

	text_escape(s->targets, targets, sizeof(targets));
	char how[64];

	/* Memory is sampled by bytes of growth, not by a timer. */
	if (!strcmp(s->mode, "memory"))
		snprintf(how, sizeof(how), "memory growth");
	else
		snprintf(how, sizeof(how), "%s %llu Hz on %d CPUs", s->mode, (unsigned long long)s->freq, s->ncpus);
	double rate = s->interval_s > 0 ? (double)s->samples_now / s->interval_s : 0.0;

	snprintf(buf, size, "pyebpf top: %s | %s | %.0f s | ", targets, how, s->elapsed_s);
	/* A memory sample is a point in every mem_sample_bytes of growth: say the bytes. */
	if (s->mem_sample_bytes) {
		char grew[32], per_s[32];

		append(buf, size, "%s grew (%s/s)", human_bytes(s->samples * s->mem_sample_bytes, grew, sizeof(grew)),
		       human_bytes((uint64_t)(rate * (double)s->mem_sample_bytes), per_s, sizeof(per_s)));
	} else {
		append(buf, size, "%llu samples (%.0f/s)", (unsigned long long)s->samples, rate);
	}
	append(buf, size, " | %llu lost", (unsigned long long)s->lost);
	append(buf, size, " | cost: pyebpf %.1f%% of a core", s->own_cpu_pct);
	if (s->bpf_pct >= 0)
		append(buf, size, ", BPF %.2f%% of the CPUs", s->bpf_pct);
	if (s->paused)
		append(buf, size, " | PAUSED");
	if (s->note && *s->note)
		append(buf, size, " | %s", s->note);
}

const char live_keys_help[] = "keys: s self  t total  a last/since start  l lines/functions  p process  "
			      "h thread  c all  space pause  q quit";

/* The thread tid (of pid, or of any process when pid is 0), or NULL. */
static const struct live_thread *find_thread(const struct live_table *t, uint32_t pid, uint32_t tid)
{
	size_t n;
	const struct live_thread *all = live_table__threads(t, &n);

	for (size_t i = 0; i < n; i++)
		if (all[i].tid == tid && (!pid || all[i].pid == pid))
			return &all[i];
	return NULL;
}

void live_format_view(const struct live_table *t, const struct live_view *v, char *buf, size_t size)
{
	static char a[256], b[256];
	const struct live_thread *th;

	snprintf(buf, size, "sort: %s, %s | rows: %s | process: ", v->sort == LIVE_SORT_TOTAL ? "total" : "self",
		 v->since_start ? "since start" : "last interval", v->by_line ? "lines" : "functions");
	if (!v->pid)
		append(buf, size, "all");
	else if ((th = live_table__thread(t, v->pid, live_table__next_tid(t, v->pid, 0))))
		append(buf, size, "%u %s", v->pid, text_escape(th->comm, a, sizeof(a)));
	else
		append(buf, size, "%u", v->pid);
	append(buf, size, " | thread: ");
	if (!v->tid)
		append(buf, size, "all");
	else if ((th = find_thread(t, v->pid, v->tid)))
		append(buf, size, "%u %s", v->tid, text_escape(th->thread, b, sizeof(b)));
	else
		append(buf, size, "%u", v->tid);
}

/* The split's column names. */
static void split_columns(const struct live_layout *l, char *buf, size_t size)
{
	if (!l->wall)
		return;
	append(buf, size, "%6s", "CPU%");
	for (int r = OFFCPU_RUNQUEUE; r < OFFCPU__COUNT; r++)
		if (l->reasons & (1u << r)) {
			char name[16];

			snprintf(name, sizeof(name), "%s%%", offcpu_reason_name((enum offcpu_reason)r));
			append(buf, size, " %8s", name);
		}
	append(buf, size, "  ");
}

/* A column group's label over its columns (width, a space after): "--- label ---". */
static void group(char *buf, size_t size, const char *label, size_t width)
{
	size_t len = strlen(label) + 2, dashes = width > len + 1 ? width - len - 1 : 0;

	for (size_t i = 0; i < dashes / 2; i++)
		append(buf, size, "-");
	append(buf, size, " %s ", label);
	for (size_t i = 0; i < dashes - dashes / 2; i++)
		append(buf, size, "-");
	append(buf, size, " ");
}

static size_t split_width(const struct live_layout *l)
{
	size_t w = 6;

	for (int r = OFFCPU_RUNQUEUE; r < OFFCPU__COUNT; r++)
		w += l->reasons & (1u << r) ? 9 : 0;
	return w;
}

void live_format_groups(const struct live_layout *l, char *buf, size_t size)
{
	char label[64];

	buf[0] = '\0';
	if (l->now) {
		snprintf(label, sizeof(label), "last %.1f s", l->interval_s);
		group(buf, size, label, 15);
	}
	group(buf, size, "since start", 25);
	if (l->wall) {
		const char *split = l->split_all ? "split, since start" : "split, last";

		group(buf, size, strlen(split) + 3 <= split_width(l) + 2 ? split : "split", split_width(l) + 2);
	}
}

void live_format_header(const struct live_layout *l, char *buf, size_t size)
{
	buf[0] = '\0';
	if (l->now)
		append(buf, size, "%6s %6s  ", "SELF%", "TOTAL%");
	append(buf, size, "%6s %6s %9s  ", "SELF%", "TOTAL%", l->mem_sample_bytes ? "GREW" : "SAMPLES");
	split_columns(l, buf, size);
	append(buf, size, "%-*s  %s", (int)l->func_width, "FUNCTION", "FILE:LINE");
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

void live_format_row(const struct live_layout *l, const struct live_row *r, const struct live_totals *t, char *buf,
		     size_t size)
{
	static char func[ESCAPED], where[ESCAPED];
	const struct live_counts *split = l->split_all ? &r->all : &r->now;
	size_t fw;

	buf[0] = '\0';
	if (l->now)
		append(buf, size, "%6.1f %6.1f  ", pct(r->now.self, t->now), pct(r->now.total, t->now));
	append(buf, size, "%6.1f %6.1f ", pct(r->all.self, t->all), pct(r->all.total, t->all));
	if (l->mem_sample_bytes) {
		char grew[32];

		append(buf, size, "%9s  ", human_bytes(r->all.total * l->mem_sample_bytes, grew, sizeof(grew)));
	} else {
		append(buf, size, "%9llu  ", (unsigned long long)r->all.total);
	}
	if (l->wall) {
		append(buf, size, "%6.1f", pct(split->by_reason[OFFCPU_NONE], split->total));
		for (int i = OFFCPU_RUNQUEUE; i < OFFCPU__COUNT; i++)
			if (l->reasons & (1u << i))
				append(buf, size, " %8.1f", pct(split->by_reason[i], split->total));
		append(buf, size, "  ");
	}
	split_name(r, func, where);
	live_clip(func, l->func_width);
	if (l->where_width)
		live_clip_left(where, l->where_width);
	fw = live_width(func);
	if (!where[0]) /* a native or kernel frame: no trailing blanks */
		append(buf, size, "%s", func);
	else
		append(buf, size, "%s%*s  %s", func, (int)(l->func_width > fw ? l->func_width - fw : 0), "", where);
}
