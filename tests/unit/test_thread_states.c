/*
 * The thread-state index userspace gives BPF (user/python/thread_states.c):
 * every thread of every interpreter, whole however long the lists, a thread
 * in several interpreters left to the walk, a list that loops bounded.
 */
#include "unit.h"

#include "python/thread_states.h"

/* A process image: 64-bit words from address BASE. */
#define BASE 0x10000
#define WORDS 32768
static uint64_t mem[WORDS];

static int reader(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < BASE || addr % 8 || len != 8 || (addr - BASE) / 8 >= WORDS)
		return -1;
	memcpy(buf, &mem[(addr - BASE) / 8], 8);
	return 0;
}

static void put(uint64_t addr, uint64_t v)
{
	mem[(addr - BASE) / 8] = v;
}

/* Interpreters: head, threads at +8, next at +0; thread states: next at +0, thread id at +16. */
static const struct pyebpf_py_offsets layout = {
	.interp_next = 0, .interp_threads_head = 8, .tstate_next = 0, .tstate_thread_id = 16
};
#define HEAD BASE
#define INTERP(i) (BASE + 0x100 + (uint64_t)(i)*0x100)
#define TSTATE(i) (BASE + 0x1000 + (uint64_t)(i)*32)

/* Interpreter `in` lists thread states first .. first+n-1, thread ids from id0. */
static void list(int in, int first, int n, uint64_t id0)
{
	put(INTERP(in) + 8, n ? TSTATE(first) : 0);
	for (int i = 0; i < n; i++) {
		put(TSTATE(first + i), i + 1 < n ? TSTATE(first + i + 1) : 0);
		put(TSTATE(first + i) + 16, id0 + (uint64_t)i);
	}
}

Test(thread_states, every_thread_of_a_list_longer_than_a_bpf_walk)
{
	static struct py_tstate_entry out[PY_TSTATES_MAX];

	memset(mem, 0, sizeof(mem));
	put(HEAD, INTERP(0));
	list(0, 0, 5000, 0x7f0000000000); /* beyond the BPF walk's 4096 */
	cr_assert_eq(py_thread_states(reader, NULL, HEAD, &layout, out, PY_TSTATES_MAX), 5000);
	for (int i = 0; i < 5000; i++) {
		cr_assert_eq(out[i].thread_id, 0x7f0000000000 + (uint64_t)i);
		cr_assert_eq(out[i].tstate, TSTATE(i));
	}
}

Test(thread_states, a_thread_in_two_interpreters_is_left_to_the_walk)
{
	struct py_tstate_entry out[16];

	memset(mem, 0, sizeof(mem));
	put(HEAD, INTERP(0));
	put(INTERP(0), INTERP(1));
	list(0, 0, 3, 100);  /* threads 100, 101, 102 */
	list(1, 10, 2, 102); /* 102 again (it entered a subinterpreter), 103 */
	cr_assert_eq(py_thread_states(reader, NULL, HEAD, &layout, out, 16), 3);
	cr_assert_eq(out[0].thread_id, 100);
	cr_assert_eq(out[1].thread_id, 101);
	cr_assert_eq(out[2].thread_id, 103);
	cr_assert_eq(out[2].tstate, TSTATE(11));
}

Test(thread_states, hostile_lists_are_bounded)
{
	struct py_tstate_entry out[64];

	memset(mem, 0, sizeof(mem));
	put(HEAD, INTERP(0));
	list(0, 0, 3, 7);
	put(TSTATE(2), TSTATE(0)); /* the list loops: each thread met again and again */
	cr_assert_eq(py_thread_states(reader, NULL, HEAD, &layout, out, 64), 0, "a looping list indexes nothing");
	list(0, 0, 3, 7);
	put(TSTATE(1), 0xdead0000); /* the second points at nothing: the list ends there */
	cr_assert_eq(py_thread_states(reader, NULL, HEAD, &layout, out, 64), 2);
	cr_assert_eq(out[1].thread_id, 8);
	put(HEAD, 0xdead0000); /* no interpreter list */
	cr_assert_eq(py_thread_states(reader, NULL, HEAD, &layout, out, 64), -1);
}
