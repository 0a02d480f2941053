/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Interned strings: each distinct string once, numbered in order of first use, "" is 0. */
#ifndef PYEBPF_STRTAB_H
#define PYEBPF_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"

struct strtab {
	struct hashmap *ids; /* string bytes → index */
	char **v;            /* index → string */
	size_t n, cap;
};

void strtab__init(struct strtab *t); /* with "" as 0 */
void strtab__free(struct strtab *t);
uint32_t strtab__id(struct strtab *t, const char *s);
/* The index of s if it is in the table already. */
bool strtab__find(const struct strtab *t, const char *s, uint32_t *id);
/* The string of an index; "" when out of range. */
const char *strtab__at(const struct strtab *t, uint32_t id);

#endif
