// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/mem_copies.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/util.h"

struct copy {
	uint64_t addr;
	size_t len;
	uint8_t *data;
};

/* One process's copies, in arrival order: a handful per code object, read
 * only once the process is gone, so a scan is cheap enough. */
struct proc_copies {
	struct copy *v;
	size_t n, cap;
};

static struct hashmap *procs; /* pid -> struct proc_copies * */
static size_t bytes_held;
static uint64_t dropped;

void mem_copies__add(uint32_t pid, uint64_t addr, const void *data, size_t len)
{
	struct proc_copies *p;
	bool created;
	void **slot;

	if (!len)
		return;
	if (!procs)
		procs = hashmap__new();
	slot = hashmap__put_ptr(procs, &pid, sizeof(pid), &created);
	if (created)
		*slot = xcalloc(1, sizeof(struct proc_copies));
	p = *slot;
	if (p->n >= MEM_COPIES_PER_PROC || bytes_held + len > MEM_COPIES_BYTES) {
		dropped++;
		return;
	}
	xgrow(&p->v, &p->cap, p->n + 1, sizeof(*p->v));
	p->v[p->n].addr = addr;
	p->v[p->n].len = len;
	p->v[p->n].data = xmalloc(len);
	memcpy(p->v[p->n].data, data, len);
	p->n++;
	bytes_held += len;
}

bool mem_copies__read(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	const struct proc_copies *p = procs ? hashmap__get_ptr(procs, &pid, sizeof(pid)) : NULL;

	/* Newest first: a later copy of the same address is the truer one. */
	for (size_t i = p ? p->n : 0; i-- > 0;) {
		const struct copy *c = &p->v[i];

		if (addr >= c->addr && len <= c->len && addr - c->addr <= c->len - len) {
			memcpy(buf, c->data + (addr - c->addr), len);
			return true;
		}
	}
	return false;
}

static void proc_copies_free(void *v)
{
	struct proc_copies *p = v;

	for (size_t i = 0; i < p->n; i++) {
		bytes_held -= p->v[i].len;
		free(p->v[i].data);
	}
	free(p->v);
	free(p);
}

void mem_copies__forget(uint32_t pid)
{
	struct proc_copies *p = procs ? hashmap__get_ptr(procs, &pid, sizeof(pid)) : NULL;

	if (!p)
		return;
	hashmap__remove(procs, &pid, sizeof(pid));
	proc_copies_free(p);
}

void mem_copies__clear(void)
{
	hashmap__free_values(procs, proc_copies_free);
	procs = NULL;
	bytes_held = 0;
}

uint64_t mem_copies__dropped(void)
{
	return dropped;
}
