// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "unit.h"

#include <string.h>

#include "base/hashmap.h"
#include "profile/profile.h"
#include "record/stack_cache.h"

#define S 1000000000ULL

Test(stack_cache, a_repeated_stack_is_one_lookup_until_it_ages)
{
	struct stack_cache *c = stack_cache__new(1 << 20, S);
	uint8_t key[4096];
	uint32_t id = 0;

	memset(key, 0xab, sizeof(key));
	cr_assert_not(stack_cache__get(c, key, sizeof(key), 0, 0, &id));
	stack_cache__put(c, key, sizeof(key), 0, 0, 7);
	cr_assert(stack_cache__get(c, key, sizeof(key), S, 0, &id));
	cr_assert_eq(id, 7);
	key[4095] ^= 1; /* one byte apart at the end: another stack */
	cr_assert_not(stack_cache__get(c, key, sizeof(key), S, 0, &id));
	cr_assert_not(stack_cache__get(c, key, sizeof(key) - 1, S, 0, &id));
	key[4095] ^= 1;
	cr_assert_not(stack_cache__get(c, key, sizeof(key), S + 1, 0, &id), "older than a period: named again");
	cr_assert_not(stack_cache__get(c, key, sizeof(key), S, 1, &id), "another generation of stack ids");
	cr_assert_eq(stack_cache__stats(c)->hits, 1);
	stack_cache__free(c);
}

Test(stack_cache, a_stable_stack_is_named_less_often_a_changed_one_every_period)
{
	struct stack_cache *c = stack_cache__new(1 << 20, S);
	uint64_t key[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, t = 0;
	uint32_t id;

	stack_cache__put(c, key, sizeof(key), t, 0, 3);
	for (uint64_t age = 2 * S; age <= 8 * S; age *= 2) { /* the same stack again: the period doubles */
		t += age / 2 + 1;
		cr_assert_not(stack_cache__get(c, key, sizeof(key), t, 0, &id));
		stack_cache__put(c, key, sizeof(key), t, 0, 3);
		cr_assert(stack_cache__get(c, key, sizeof(key), t + age, 0, &id));
	}
	t += 8 * S + 1;
	cr_assert_not(stack_cache__get(c, key, sizeof(key), t, 0, &id), "at most 8 periods");
	stack_cache__put(c, key, sizeof(key), t, 0, 4); /* named differently: back to one period */
	cr_assert_not(stack_cache__get(c, key, sizeof(key), t + S + 1, 0, &id));
	cr_assert(stack_cache__get(c, key, sizeof(key), t + S, 0, &id));
	cr_assert_eq(id, 4);
	stack_cache__free(c);
}

Test(stack_cache, starts_over_at_its_memory_bound)
{
	struct stack_cache *c = stack_cache__new(64 * 1024, S);
	uint64_t key;
	uint32_t id;

	for (key = 0; key < 10000; key++)
		stack_cache__put(c, &key, sizeof(key), 0, 0, (uint32_t)key);
	cr_assert_gt(stack_cache__stats(c)->resets, 0);
	cr_assert_leq(stack_cache__stats(c)->bytes, 64 * 1024);
	key = 9999; /* the latest stays */
	cr_assert(stack_cache__get(c, &key, sizeof(key), 0, 0, &id));
	cr_assert_eq(id, 9999);
	stack_cache__free(c);
}

Test(stack_cache, digests_depend_on_every_byte_and_the_seed)
{
	uint8_t a[100] = { 0 };
	uint64_t h0[2], h1[2], h2[2];

	hash128_bytes(a, sizeof(a), 0, h0);
	for (size_t i = 0; i < sizeof(a); i++) {
		a[i] = 1;
		hash128_bytes(a, sizeof(a), 0, h1);
		cr_assert(h0[0] != h1[0] && h0[1] != h1[1], "byte %zu", i);
		a[i] = 0;
	}
	hash128_bytes(a, sizeof(a), 1, h2);
	cr_assert(h0[0] != h2[0] && h0[1] != h2[1]);
	hash128_bytes(a, sizeof(a) - 1, 0, h1); /* length counts: zeros are not padding */
	cr_assert(h0[0] != h1[0]);
}

Test(profile, stacks_are_shared_by_entries_and_dropped_with_the_samples)
{
	struct profile *p = profile__new();
	uint32_t f[3] = { 1, 2, 3 };
	struct sample_labels a = { .pid = 1, .tid = 1 }, b = { .pid = 1, .tid = 2 };
	uint32_t s = profile__stack(p, f, 3);
	struct profile_entry e;

	cr_assert_eq(profile__stack(p, f, 3), s);
	cr_assert_neq(profile__stack(p, f, 2), s);
	profile__add_stack_at(p, &a, s, 1, 10);
	profile__add_stack_at(p, &b, s, 2, 20);
	profile__add_at(p, &a, f, 3, 1, 30);
	cr_assert_eq(profile__nstacks(p), 2); /* entries: (a, s), (b, s) */
	profile__entry(p, 0, &e);
	cr_assert_eq(e.count, 2);
	cr_assert_eq(e.nframes, 3);
	cr_assert_eq(e.frames[2], 3);
	profile__clear_samples(p);
	cr_assert_eq(profile__total(p), 0);
	cr_assert_eq(profile__stacks_gen(p), 1, "stack ids held elsewhere are stale");
	cr_assert_eq(profile__stack(p, f, 2), 0);
	profile__free(p);
}
