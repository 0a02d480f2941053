// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/stack_cache.h"

#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/hashmap.h"
#include "base/util.h"

struct cached_stack {
	uint64_t named_ns, gen;
	uint64_t age_ns; /* named again after this long: doubles while naming gives the same stack */
	uint32_t id;
};

/* The longest an entry lives, in re-check periods. */
#define MAX_AGE_PERIODS 8

/* A raw stack is known by its digest: comparing keys of up to 26 KB
 * (a 1024-frame Python stack) would cost more than naming them once did. */
struct digest {
	uint64_t h[2];
	uint64_t len;
};

struct stack_cache {
	struct hashmap *map; /* struct digest → struct cached_stack * */
	uint64_t seed;       /* secret: no profiled process can aim at a collision */
	size_t max_bytes;
	uint64_t max_age_ns;
	struct stack_cache_stats stats;
};

/* What an entry costs: itself, its digest, the map's slot, malloc's headers. */
#define ENTRY_BYTES (sizeof(struct cached_stack) + sizeof(struct digest) + 96)

static struct digest digest_of(const struct stack_cache *c, const void *key, size_t len)
{
	struct digest d = { .len = len };

	hash128_bytes(key, len, c->seed, d.h);
	return d;
}

struct stack_cache *stack_cache__new(size_t max_bytes, uint64_t max_age_ns)
{
	struct stack_cache *c = xcalloc(1, sizeof(*c));

	c->map = hashmap__new();
	if (getrandom(&c->seed, sizeof(c->seed), 0) != sizeof(c->seed))
		c->seed = now_ns() ^ ((uint64_t)getpid() << 32);
	c->max_bytes = max_bytes;
	c->max_age_ns = max_age_ns;
	return c;
}

void stack_cache__free(struct stack_cache *c)
{
	if (!c)
		return;
	hashmap__free_values(c->map, free);
	free(c);
}

bool stack_cache__get(struct stack_cache *c, const void *key, size_t len, uint64_t now, uint64_t gen, uint32_t *id)
{
	struct digest d = digest_of(c, key, len);
	const struct cached_stack *e = hashmap__get_ptr(c->map, &d, sizeof(d));

	if (!e || e->gen != gen || now - e->named_ns > e->age_ns) {
		c->stats.misses++;
		return false;
	}
	c->stats.hits++;
	*id = e->id;
	return true;
}

void stack_cache__put(struct stack_cache *c, const void *key, size_t len, uint64_t now, uint64_t gen, uint32_t id)
{
	struct digest d = digest_of(c, key, len);
	bool created;
	void **slot;
	struct cached_stack *e;

	if ((hashmap__size(c->map) + 1) * ENTRY_BYTES > c->max_bytes) { /* stacks that never repeat: start over */
		stack_cache__clear(c);
		c->stats.resets++;
	}
	slot = hashmap__put_ptr(c->map, &d, sizeof(d), &created);
	if (created)
		*slot = xmalloc(sizeof(struct cached_stack));
	e = *slot;
	/* A stack named the same again is stable (no code object in it was
	 * replaced): look again less often, up to MAX_AGE_PERIODS periods. */
	if (created || e->id != id || e->gen != gen)
		e->age_ns = c->max_age_ns;
	else if (e->age_ns < MAX_AGE_PERIODS * c->max_age_ns)
		e->age_ns *= 2;
	e->named_ns = now;
	e->gen = gen;
	e->id = id;
}

void stack_cache__clear(struct stack_cache *c)
{
	hashmap__free_values(c->map, free);
	c->map = hashmap__new();
}

const struct stack_cache_stats *stack_cache__stats(struct stack_cache *c)
{
	/* Entries cost ENTRY_BYTES each: the sizes follow from the map. */
	c->stats.entries = hashmap__size(c->map);
	c->stats.bytes = c->stats.entries * ENTRY_BYTES;
	return &c->stats;
}
