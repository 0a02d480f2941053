// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "profile/mem_view.h"

#include <string.h>

#include "profile/filter.h"
#include "base/util.h"

static const char *const names[] = {
	[MEM_INUSE_SPACE] = "inuse_space",     [MEM_ALLOC_SPACE] = "alloc_space", [MEM_INUSE_OBJECTS] = "inuse_objects",
	[MEM_ALLOC_OBJECTS] = "alloc_objects", [MEM_PEAK_SPACE] = "peak_space",   [MEM_PEAK_OBJECTS] = "peak_objects",
};

int mem_value_parse(const char *name, enum mem_value *v)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i])) {
			*v = (enum mem_value)i;
			return 0;
		}
	return -1;
}

int mem_value_option(const char *arg, int *v)
{
	enum mem_value m;

	if (mem_value_parse(arg, &m)) {
		err_msg("invalid type '%s' for --sample-type (%s)", arg, MEM_VALUE_NAMES);
		return -1;
	}
	*v = (int)m;
	return 0;
}

const char *mem_value_name(enum mem_value v)
{
	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

uint64_t mem_view_points(const struct profile *p, bool held)
{
	struct profile_entry e;
	size_t pos = 0;
	uint64_t n = 0;

	while (profile__next(p, &pos, &e))
		if (!(e.labels.flags & LABEL_MEM_MOMENT) == !held)
			n += e.count;
	return n;
}

struct profile *mem_view(const struct profile *p, enum mem_value v)
{
	const struct profile_meta *in = profile__meta_of(p);
	struct profile *out = profile__new();
	struct profile_meta *m = profile__meta(out);
	bool space = v == MEM_INUSE_SPACE || v == MEM_ALLOC_SPACE || v == MEM_PEAK_SPACE;
	struct filter f;

	*m = *in;
	m->value_unit = space ? PROFILE_UNIT_BYTES : PROFILE_UNIT_OBJECTS;
	filter__init(&f);
	f.mem_kind = v == MEM_INUSE_SPACE || v == MEM_INUSE_OBJECTS ? FILTER_MEM_HELD
		     : v == MEM_PEAK_SPACE || v == MEM_PEAK_OBJECTS ? FILTER_MEM_PEAK
								    : FILTER_MEM_GROWN;
	filter__copy(&f, p, out, 0, space && in->mem_sample_bytes ? in->mem_sample_bytes : 1, 0);
	filter__free(&f);
	return out;
}
