// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "base/strtab.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void strtab__init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	t->ids = hashmap__new();
	strtab__id(t, "");
}

void strtab__free(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	hashmap__free(t->ids);
	memset(t, 0, sizeof(*t));
}

uint32_t strtab__id(struct strtab *t, const char *s)
{
	bool created;
	uint64_t *v = hashmap__put(t->ids, s, strlen(s), &created);

	if (created) {
		xgrow(&t->v, &t->cap, t->n + 1, sizeof(*t->v));
		t->v[t->n] = xstrdup(s);
		*v = t->n++;
	}
	return (uint32_t)*v;
}

bool strtab__find(const struct strtab *t, const char *s, uint32_t *id)
{
	const uint64_t *v = hashmap__get(t->ids, s, strlen(s));

	if (v)
		*id = (uint32_t)*v;
	return v != NULL;
}

const char *strtab__at(const struct strtab *t, uint32_t id)
{
	return id < t->n ? t->v[id] : "";
}
