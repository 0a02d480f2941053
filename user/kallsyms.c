// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "kallsyms.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct ksym {
	uint64_t addr;
	char *name;
};

struct kallsyms {
	struct ksym *syms;
	size_t n;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct kallsyms *kallsyms__load(const char *path)
{
	FILE *f = fopen(path, "re");
	struct kallsyms *k;
	size_t cap = 0, lcap = 0;
	char *line = NULL;
	bool any_nonzero = false;

	if (!f)
		return NULL;
	k = xcalloc(1, sizeof(*k));
	while (getline(&line, &lcap, f) > 0) {
		unsigned long long addr;
		char type, name[512];

		/* "ffffffff81000000 T _stext\t[module]": module names are dropped. */
		if (sscanf(line, "%llx %c %511s", &addr, &type, name) != 3)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		any_nonzero |= addr != 0;
		xgrow(&k->syms, &cap, k->n + 1, sizeof(*k->syms));
		k->syms[k->n].addr = addr;
		k->syms[k->n++].name = xstrdup(name);
	}
	free(line);
	fclose(f);
	if (!any_nonzero) {
		kallsyms__free(k);
		errno = EPERM;
		return NULL;
	}
	qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	return k;
}

void kallsyms__free(struct kallsyms *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		free(k->syms[i].name);
	free(k->syms);
	free(k);
}

const char *kallsyms__lookup(const struct kallsyms *k, uint64_t addr, uint64_t *off)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (off)
		*off = addr - k->syms[lo - 1].addr;
	return k->syms[lo - 1].name;
}
