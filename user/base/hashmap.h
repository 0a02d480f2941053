/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * An open-addressing hash table from byte-string keys to 64-bit values, or
 * to pointers (the *_ptr functions; one kind per map). Out of memory is
 * fatal (die()), as for the x* allocators: no function returns NULL for it.
 */
#ifndef PYEBPF_HASHMAP_H
#define PYEBPF_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashmap;

struct hashmap *hashmap__new(void);
void hashmap__free(struct hashmap *h); /* accepts NULL */
/* For maps whose values are pointers: free_value(each value), then the map. Accepts NULL. */
void hashmap__free_values(struct hashmap *h, void (*free_value)(void *));
/* The value slot of key, or NULL when absent. */
uint64_t *hashmap__get(const struct hashmap *h, const void *key, size_t len);
/* The value slot of key, inserted (value 0, *created = true) when absent. */
uint64_t *hashmap__put(struct hashmap *h, const void *key, size_t len, bool *created);
/* Pointer-valued maps: the pointer of key (NULL when absent), and its slot,
 * inserted as NULL when absent. */
void *hashmap__get_ptr(const struct hashmap *h, const void *key, size_t len);
void **hashmap__put_ptr(struct hashmap *h, const void *key, size_t len, bool *created);
bool hashmap__remove(struct hashmap *h, const void *key, size_t len);
size_t hashmap__size(const struct hashmap *h);
/* Iteration: start with *pos = 0; returns false at the end. */
bool hashmap__next(const struct hashmap *h, size_t *pos, const void **key, size_t *len, uint64_t *value);
bool hashmap__next_ptr(const struct hashmap *h, size_t *pos, const void **key, size_t *len, void **value);

uint64_t hash_bytes(const void *data, size_t len);
/* 128 bits of a key, under a seed: a digest that stands for a long key
 * (stack_cache.c) where comparing the key itself would cost more than the
 * rest of the work; with a secret seed no input picks a collision. */
void hash128_bytes(const void *data, size_t len, uint64_t seed, uint64_t out[2]);

#endif
