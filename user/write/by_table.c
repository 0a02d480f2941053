// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "write/by_table.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "base/hashmap.h"
#include "base/util.h"
#include "write/top.h"

/* The functions named per value. */
#define TOP_FUNCTIONS 3

struct value_row {
	const char *value; /* the profile's string; NULL: without the label */
	uint64_t total, on_cpu;
};

static int cmp_value(const void *a, const void *b)
{
	const struct value_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (!x->value || !y->value)
		return !x->value - !y->value; /* "-" last of its count */
	return strcmp(x->value, y->value);
}

static void amount(const struct profile *p, uint64_t v, char *out, size_t size)
{
	if (profile__meta_of(p)->value_unit == PROFILE_UNIT_BYTES)
		human_bytes(v, out, size);
	else
		snprintf(out, size, "%" PRIu64, v);
}

/* The value's top functions, "f 41%, g 12%" (of the value's own total). */
static void top_functions(const struct profile *p, const char *key, const struct value_row *v, char *out, size_t size)
{
	struct top_opts o = { .by = key, .by_value = v->value };
	size_t n, at = 0;
	struct top_row *rows = top__rows_opts(p, &o, &n);
	char name[1024];

	out[0] = '\0';
	for (size_t i = 0; i < n && i < TOP_FUNCTIONS && rows[i].self && at < size; i++) {
		snprintf(name, sizeof(name), "%.*s", (int)rows[i].func_len, rows[i].name);
		at += (size_t)snprintf(out + at, size - at, "%s%s %.0f%%", i ? ", " : "", name,
				       v->total ? 100.0 * (double)rows[i].self / (double)v->total : 0.0);
	}
	top__free(rows, n);
}

int by_table__print(const struct profile *p, const char *key, size_t limit, FILE *out)
{
	struct hashmap *ids = hashmap__new(); /* a value with its NUL (none: the empty key) → its row */
	size_t n = 0, cap = 1, pos = 0;
	struct value_row *rows = xcalloc(cap, sizeof(*rows));
	struct profile_entry e;
	uint64_t total = profile__total(p);
	bool wall = profile__meta_of(p)->wall;
	static char value[4 * 48 + 1], fns[4 * 1024 + 1], shown[4 * 1024 + 1];

	while (profile__next(p, &pos, &e)) {
		const char *v = profile__label_value(p, &e.labels, key);
		bool created;
		uint64_t *id = hashmap__put(ids, v ? v : "", v ? strlen(v) + 1 : 0, &created);

		if (created) {
			xgrow(&rows, &cap, n + 1, sizeof(*rows));
			rows[n] = (struct value_row){ .value = v };
			*id = n++;
		}
		rows[*id].total += e.count;
		if (!e.labels.offcpu)
			rows[*id].on_cpu += e.count;
	}
	hashmap__free(ids);
	qsort(rows, n, sizeof(*rows), cmp_value);
	text_escape(key, value, sizeof(value));
	for (char *c = value; *c; c++)
		*c = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
	fprintf(out, "%-40s %9s %7s %s %s\n", value,
		profile__meta_of(p)->value_unit == PROFILE_UNIT_BYTES ? "BYTES" : "SAMPLES", "SHARE",
		wall ? " ON-CPU" : "", "TOP FUNCTIONS (self)");
	for (size_t i = 0; i < n && i < limit; i++) {
		char count[32], cpu[16] = "";

		/* Values and names come from the profiled processes: escaped, cut to the column. */
		text_escape(rows[i].value ? rows[i].value : "-", value, sizeof(value));
		if (strlen(value) > 40) {
			size_t cut = 37;

			while (cut && ((unsigned char)value[cut] & 0xc0) == 0x80) /* not inside a character */
				cut--;
			snprintf(value + cut, sizeof(value) - cut, "...");
		}
		amount(p, rows[i].total, count, sizeof(count));
		if (wall)
			snprintf(cpu, sizeof(cpu), " %6.1f%%",
				 rows[i].total ? 100.0 * (double)rows[i].on_cpu / (double)rows[i].total : 0.0);
		top_functions(p, key, &rows[i], fns, sizeof(fns));
		fprintf(out, "%-40s %9s %6.1f%%%s %s\n", value, count,
			total ? 100.0 * (double)rows[i].total / (double)total : 0.0, cpu,
			text_escape(fns, shown, sizeof(shown)));
	}
	if (n > limit)
		fprintf(out, "(%zu more values; --top N shows more)\n", n - limit);
	free(rows);
	return stream_finish(out);
}
