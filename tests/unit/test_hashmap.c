#include "unit.h"

#include "base/hashmap.h"

Test(hashmap, put_get_remove_and_grow)
{
	struct hashmap *h = hashmap__new();
	bool created;

	for (uint32_t i = 0; i < 100000; i++) {
		uint64_t *v = hashmap__put(h, &i, sizeof(i), &created);
		cr_assert(created);
		*v = i * 2ULL;
	}
	cr_assert_eq(hashmap__size(h), 100000);
	for (uint32_t i = 0; i < 100000; i += 7) {
		uint64_t *v = hashmap__get(h, &i, sizeof(i));
		cr_assert(v);
		cr_assert_eq(*v, i * 2ULL);
	}
	uint32_t k = 5;
	cr_assert(hashmap__put(h, &k, sizeof(k), &created));
	cr_assert_not(created);
	cr_assert(hashmap__remove(h, &k, sizeof(k)));
	cr_assert_null(hashmap__get(h, &k, sizeof(k)));
	cr_assert_not(hashmap__remove(h, &k, sizeof(k)));
	cr_assert_eq(hashmap__size(h), 99999);

	size_t pos = 0, n = 0, len;
	const void *key;
	uint64_t v;
	while (hashmap__next(h, &pos, &key, &len, &v)) {
		cr_assert_eq(len, sizeof(uint32_t));
		cr_assert_eq(v, *(const uint32_t *)key * 2ULL);
		n++;
	}
	cr_assert_eq(n, 99999);
	hashmap__free(h);
}

Test(hashmap, keys_of_different_lengths_differ)
{
	struct hashmap *h = hashmap__new();

	*hashmap__put(h, "ab", 2, NULL) = 1;
	*hashmap__put(h, "abc", 3, NULL) = 2;
	*hashmap__put(h, "", 0, NULL) = 3;
	cr_assert_eq(*hashmap__get(h, "ab", 2), 1);
	cr_assert_eq(*hashmap__get(h, "abc", 3), 2);
	cr_assert_eq(*hashmap__get(h, "", 0), 3);
	cr_assert_null(hashmap__get(h, "a", 1));
	hashmap__free(h);
}

Test(hashmap, remove_and_reinsert_many_times_stays_bounded)
{
	struct hashmap *h = hashmap__new();

	/* Tombstones must be purged, or the table would fill up and loop. */
	for (uint32_t round = 0; round < 50000; round++) {
		uint32_t k = round;
		*hashmap__put(h, &k, sizeof(k), NULL) = round;
		cr_assert(hashmap__remove(h, &k, sizeof(k)));
	}
	cr_assert_eq(hashmap__size(h), 0);
	hashmap__free(h);
}

static int freed;
static void count_free(void *p)
{
	freed++;
	free(p);
}

Test(hashmap, free_values_frees_every_value_once)
{
	struct hashmap *h = hashmap__new();

	freed = 0;
	for (uint32_t i = 0; i < 100; i++)
		*hashmap__put_ptr(h, &i, sizeof(i), NULL) = malloc(8);
	uint32_t k = 7, absent = 1000;
	void *gone = hashmap__get_ptr(h, &k, sizeof(k)), *v;
	const void *key;
	size_t pos = 0, len, seen = 0;

	cr_assert_not_null(gone);
	cr_assert_null(hashmap__get_ptr(h, &absent, sizeof(absent)));
	hashmap__remove(h, &k, sizeof(k));
	while (hashmap__next_ptr(h, &pos, &key, &len, &v)) {
		cr_assert_not_null(v);
		cr_assert_neq(v, gone);
		seen++;
	}
	cr_assert_eq(seen, 99);
	free(gone);
	hashmap__free_values(h, count_free);
	cr_assert_eq(freed, 99);
	hashmap__free_values(NULL, count_free);
}
