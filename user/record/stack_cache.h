/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * From a sample's raw stack (the bytes that decide its frames: process,
 * Python frame triples, addresses) to the profile's stack id, so a stack
 * seen before costs one hash lookup, whatever its depth. An entry older than
 * the re-check period is named again (a code object's address may have been
 * reused); each time the naming gives the same stack, the period doubles, up
 * to 8 (a stack of a process whose code keeps changing is named every
 * period, one that never changes every 8). An entry made under another
 * generation of the profile's stack ids is not used. Memory is bounded:
 * past the limit the cache starts over.
 */
#ifndef PYEBPF_STACK_CACHE_H
#define PYEBPF_STACK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stack_cache;

/* max_bytes: keys and entries together; max_age_ns: when to name again. */
struct stack_cache *stack_cache__new(size_t max_bytes, uint64_t max_age_ns);
void stack_cache__free(struct stack_cache *c); /* accepts NULL */

/* The stack id of key, named less than max_age_ns before now under generation gen. */
bool stack_cache__get(struct stack_cache *c, const void *key, size_t len, uint64_t now, uint64_t gen, uint32_t *id);
/* Keep (or replace) the stack id of key, named at now under generation gen. */
void stack_cache__put(struct stack_cache *c, const void *key, size_t len, uint64_t now, uint64_t gen, uint32_t id);

/* Forget every entry (the stack ids they name are gone). */
void stack_cache__clear(struct stack_cache *c);

struct stack_cache_stats {
	uint64_t hits, misses, resets; /* resets: times the cache started over at its limit */
	size_t entries, bytes;
};
const struct stack_cache_stats *stack_cache__stats(struct stack_cache *c);

#endif
