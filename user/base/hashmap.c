// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Linear probing with tombstones; keys are copied (one allocation each) so
 * callers may pass stack buffers. Sized for profiler tables: up to millions
 * of entries, rehashing at 70% load. Out of memory ends the process, as the
 * x* allocators do (util.h): no caller has anything better to do.
 */
#include "base/hashmap.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

struct slot {
	void *key; /* NULL: empty; TOMBSTONE: removed */
	size_t len;
	uint64_t hash;
	union {
		uint64_t u; /* hashmap__put/get */
		void *p;    /* hashmap__put_ptr/get_ptr: one kind per map */
	} value;
};

static char tombstone_mark;
#define TOMBSTONE ((void *)&tombstone_mark)

struct hashmap {
	struct slot *slots;
	size_t cap;  /* power of two */
	size_t size; /* live entries */
	size_t used; /* live + tombstones */
};

static inline uint64_t rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline uint64_t word_at(const unsigned char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

/* One multiply per 8 bytes, four independent lanes: keys are stacks of
 * hundreds of frames hashed once per sample, where a byte-at-a-time hash
 * (FNV) cost more than everything else the sample needed. */
static inline uint64_t lane(uint64_t h, uint64_t w)
{
	return rotl64(h ^ (w * 0x87c37b91114253d5ULL), 31) * 0x4cf5ad432745937fULL;
}

/* splitmix64's finalizer: every input bit reaches every output bit. */
static inline uint64_t avalanche(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

/* The four lanes after every byte of data went through them. */
static void hash_lanes(const void *data, size_t len, uint64_t seed, uint64_t v[4])
{
	const unsigned char *p = data;
	uint64_t tail = 0;
	size_t n = len, k = 0;

	v[0] = 0x9e3779b97f4a7c15ULL ^ len ^ seed;
	v[1] = 0xc2b2ae3d27d4eb4fULL ^ rotl64(seed, 16);
	v[2] = 0x165667b19e3779f9ULL ^ rotl64(seed, 32);
	v[3] = 0x27d4eb2f165667c5ULL ^ rotl64(seed, 48);
	for (; n >= 32; n -= 32, p += 32) {
		v[0] = lane(v[0], word_at(p));
		v[1] = lane(v[1], word_at(p + 8));
		v[2] = lane(v[2], word_at(p + 16));
		v[3] = lane(v[3], word_at(p + 24));
	}
	for (; n >= 8; n -= 8, p += 8, k++)
		v[k] = lane(v[k], word_at(p));
	for (size_t i = 0; i < n; i++)
		tail |= (uint64_t)p[i] << (8 * i);
	v[k] = lane(v[k], tail);
}

static inline uint64_t first_word(const uint64_t v[4])
{
	return avalanche(v[0] ^ rotl64(v[1], 17) ^ rotl64(v[2], 29) ^ rotl64(v[3], 43));
}

void hash128_bytes(const void *data, size_t len, uint64_t seed, uint64_t out[2])
{
	uint64_t v[4];

	hash_lanes(data, len, seed, v);
	out[0] = first_word(v);
	out[1] = avalanche(v[1] ^ rotl64(v[2], 13) ^ rotl64(v[3], 37) ^ rotl64(v[0], 51) ^ 0x5851f42d4c957f2dULL);
}

/* Every table lookup: only the first word (the second is the stack cache's). */
uint64_t hash_bytes(const void *data, size_t len)
{
	uint64_t v[4];

	hash_lanes(data, len, 0, v);
	return first_word(v);
}

struct hashmap *hashmap__new(void)
{
	struct hashmap *h = xcalloc(1, sizeof(*h));

	h->cap = 64;
	h->slots = xcalloc(h->cap, sizeof(*h->slots));
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
			free_value(h->slots[i].value.p);
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

static void grow(struct hashmap *h)
{
	size_t ncap = h->size * 2 >= h->cap ? h->cap * 2 : h->cap; /* else just purge tombstones */
	struct slot *ns = xcalloc(ncap, sizeof(*ns));

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
}

uint64_t *hashmap__get(const struct hashmap *h, const void *key, size_t len)
{
	struct slot *s = find(h, key, len, hash_bytes(key, len));

	return s ? &s->value.u : NULL;
}

void *hashmap__get_ptr(const struct hashmap *h, const void *key, size_t len)
{
	struct slot *s = find(h, key, len, hash_bytes(key, len));

	return s ? s->value.p : NULL;
}

static struct slot *put(struct hashmap *h, const void *key, size_t len, bool *created)
{
	uint64_t hash = hash_bytes(key, len);
	struct slot *s = find(h, key, len, hash);
	size_t mask;

	if (created)
		*created = false;
	if (s)
		return s;
	if ((h->used + 1) * 10 > h->cap * 7)
		grow(h);
	mask = h->cap - 1;
	size_t i = hash & mask;
	while (h->slots[i].key && h->slots[i].key != TOMBSTONE)
		i = (i + 1) & mask;
	s = &h->slots[i];
	void *copy = xmalloc(len ? len : 1);
	memcpy(copy, key, len);
	if (!s->key)
		h->used++;
	s->key = copy;
	s->len = len;
	s->hash = hash;
	memset(&s->value, 0, sizeof(s->value));
	h->size++;
	if (created)
		*created = true;
	return s;
}

uint64_t *hashmap__put(struct hashmap *h, const void *key, size_t len, bool *created)
{
	return &put(h, key, len, created)->value.u;
}

void **hashmap__put_ptr(struct hashmap *h, const void *key, size_t len, bool *created)
{
	return &put(h, key, len, created)->value.p;
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

static const struct slot *next(const struct hashmap *h, size_t *pos, const void **key, size_t *len)
{
	for (; *pos < h->cap; (*pos)++) {
		const struct slot *s = &h->slots[*pos];

		if (s->key && s->key != TOMBSTONE) {
			*key = s->key;
			*len = s->len;
			(*pos)++;
			return s;
		}
	}
	return NULL;
}

bool hashmap__next(const struct hashmap *h, size_t *pos, const void **key, size_t *len, uint64_t *value)
{
	const struct slot *s = next(h, pos, key, len);

	if (s)
		*value = s->value.u;
	return s != NULL;
}

bool hashmap__next_ptr(const struct hashmap *h, size_t *pos, const void **key, size_t *len, void **value)
{
	const struct slot *s = next(h, pos, key, len);

	if (s)
		*value = s->value.p;
	return s != NULL;
}
