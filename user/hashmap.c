// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Linear probing with tombstones; keys are copied (one allocation each) so
 * callers may pass stack buffers. Sized for profiler tables: up to millions
 * of entries, rehashing at 70% load.
 */
#include "hashmap.h"

#include <stdlib.h>
#include <string.h>

struct slot {
	void *key; /* NULL: empty; TOMBSTONE: removed */
	size_t len;
	uint64_t hash;
	uint64_t value;
};

static char tombstone_mark;
#define TOMBSTONE ((void *)&tombstone_mark)

struct hashmap {
	struct slot *slots;
	size_t cap;  /* power of two */
	size_t size; /* live entries */
	size_t used; /* live + tombstones */
};

/* FNV-1a with a final avalanche (splitmix64): fast, no dependency. */
uint64_t hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

struct hashmap *hashmap__new(void)
{
	struct hashmap *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->cap = 64;
	h->slots = calloc(h->cap, sizeof(*h->slots));
	if (!h->slots) {
		free(h);
		return NULL;
	}
	return h;
}

void hashmap__free(struct hashmap *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->cap; i++)
		if (h->slots[i].key && h->slots[i].key != TOMBSTONE)
			free(h->slots[i].key);
	free(h->slots);
	free(h);
}

void hashmap__free_values(struct hashmap *h, void (*free_value)(void *))
{
	if (!h)
		return;
	for (size_t i = 0; i < h->cap; i++)
		if (h->slots[i].key && h->slots[i].key != TOMBSTONE)
			free_value((void *)(uintptr_t)h->slots[i].value);
	hashmap__free(h);
}

static struct slot *find(const struct hashmap *h, const void *key, size_t len, uint64_t hash)
{
	size_t mask = h->cap - 1;

	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		struct slot *s = &h->slots[i];

		if (!s->key)
			return NULL;
		if (s->key != TOMBSTONE && s->hash == hash && s->len == len && memcmp(s->key, key, len) == 0)
			return s;
	}
}

static int grow(struct hashmap *h)
{
	size_t ncap = h->size * 2 >= h->cap ? h->cap * 2 : h->cap; /* else just purge tombstones */
	struct slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -1;
	for (size_t i = 0; i < h->cap; i++) {
		struct slot *s = &h->slots[i];

		if (!s->key || s->key == TOMBSTONE)
			continue;
		size_t j = s->hash & (ncap - 1);
		while (ns[j].key)
			j = (j + 1) & (ncap - 1);
		ns[j] = *s;
	}
	free(h->slots);
	h->slots = ns;
	h->cap = ncap;
	h->used = h->size;
	return 0;
}

uint64_t *hashmap__get(const struct hashmap *h, const void *key, size_t len)
{
	struct slot *s = find(h, key, len, hash_bytes(key, len));

	return s ? &s->value : NULL;
}

uint64_t *hashmap__put(struct hashmap *h, const void *key, size_t len, bool *created)
{
	uint64_t hash = hash_bytes(key, len);
	struct slot *s = find(h, key, len, hash);
	size_t mask;

	if (created)
		*created = false;
	if (s)
		return &s->value;
	if ((h->used + 1) * 10 > h->cap * 7 && grow(h))
		return NULL;
	mask = h->cap - 1;
	size_t i = hash & mask;
	while (h->slots[i].key && h->slots[i].key != TOMBSTONE)
		i = (i + 1) & mask;
	s = &h->slots[i];
	void *copy = malloc(len ? len : 1);
	if (!copy)
		return NULL;
	memcpy(copy, key, len);
	if (!s->key)
		h->used++;
	s->key = copy;
	s->len = len;
	s->hash = hash;
	s->value = 0;
	h->size++;
	if (created)
		*created = true;
	return &s->value;
}

bool hashmap__remove(struct hashmap *h, const void *key, size_t len)
{
	struct slot *s = find(h, key, len, hash_bytes(key, len));

	if (!s)
		return false;
	free(s->key);
	s->key = TOMBSTONE;
	h->size--;
	return true;
}

size_t hashmap__size(const struct hashmap *h)
{
	return h->size;
}

bool hashmap__next(const struct hashmap *h, size_t *pos, const void **key, size_t *len, uint64_t *value)
{
	for (; *pos < h->cap; (*pos)++) {
		struct slot *s = &h->slots[*pos];

		if (s->key && s->key != TOMBSTONE) {
			*key = s->key;
			*len = s->len;
			*value = s->value;
			(*pos)++;
			return true;
		}
	}
	return false;
}
