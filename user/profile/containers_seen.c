// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "profile/containers_seen.h"

#include <stdio.h>
#include <string.h>

#include "base/escape.h"
#include "base/hashmap.h"

/* Appends to out at *used, never past size (a line cut short stays a string). */
static void put(char *out, size_t size, size_t *used, const char *s)
{
	int n = snprintf(out + *used, size - *used, "%s", s);

	if (n > 0)
		*used += (size_t)n < size - *used ? (size_t)n : size - *used - 1;
}

size_t containers_seen(const struct profile *p, size_t max, char *out, size_t size)
{
	struct hashmap *seen = hashmap__new();
	struct profile_entry e;
	size_t pos = 0, n = 0, used = 0;

	if (!size)
		return 0;
	out[0] = '\0';
	while (profile__next(p, &pos, &e)) {
		const struct sample_labels *l = &e.labels;
		char id[13], name[4 * 64 + 1], one[sizeof(name) + 32];
		bool created;

		if (!l->container)
			continue;
		hashmap__put(seen, &l->container, sizeof(l->container), &created);
		if (!created || n++ >= max)
			continue;
		text_escape(profile__str_at(p, l->container), id, sizeof(id)); /* docker ps's 12 */
		if (l->container_name)
			snprintf(one, sizeof(one), "%s%s (%s)", n > 1 ? ", " : "",
				 text_escape(profile__str_at(p, l->container_name), name, sizeof(name)), id);
		else
			snprintf(one, sizeof(one), "%s%s", n > 1 ? ", " : "", id);
		put(out, size, &used, one);
	}
	if (n > max) {
		char more[48];

		snprintf(more, sizeof(more), " and %zu more", n - max);
		put(out, size, &used, more);
	}
	hashmap__free(seen);
	return n;
}
