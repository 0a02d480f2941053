/* Merging native and Python frames: frame ids stand for the frames. */
#include "unit.h"

#include "native/merge.h"

enum {
	E = NATIVE_EVAL,
	I = NATIVE_INTERP,
	L = NATIVE_LIBC,
	O = NATIVE_OTHER
};
#define MARK 900
#define STOP 901

static size_t merge(const uint32_t *nat, const uint8_t *kind, size_t nn, bool whole, const uint32_t *py,
		    const bool *entry, size_t np, uint32_t *out, bool *mismatch)
{
	struct merge_in in = {
		.native = nat,
		.kind = kind,
		.nnative = nn,
		.native_whole = whole,
		.native_mark = whole ? 0 : STOP,
		.py = py,
		.py_entry = entry,
		.npy = np,
		.mismatch_mark = MARK,
	};

	return merge_stacks(&in, out, 64, mismatch);
}

static void expect(const uint32_t *got, size_t n, const uint32_t *want, size_t nwant)
{
	char g[512] = "", w[512] = "";

	for (size_t i = 0; i < n; i++)
		snprintf(g + strlen(g), sizeof(g) - strlen(g), "%u ", got[i]);
	for (size_t i = 0; i < nwant; i++)
		snprintf(w + strlen(w), sizeof(w) - strlen(w), "%u ", want[i]);
	cr_assert_str_eq(g, w);
}

/* Python → C extension → Python → list.sort, 3.11-style: two loops, two frames each. */
static const uint32_t nat[] = { 100, 101, 102, 103, 104, 105, 106, 107, 108 };
static const uint8_t kind[] = { L, I, I, E, I, O, I, E, I };
static const uint32_t py[] = { 200, 201, 202, 203 };
static const bool entry[] = { true, false, true, false };

Test(merge, evaluation_frames_become_python_frames)
{
	uint32_t out[64];
	bool mm;
	size_t n = merge(nat, kind, 9, true, py, entry, 4, out, &mm);
	const uint32_t want[] = { 200, 201, 105, 202, 203, 108 };

	cr_assert_not(mm);
	expect(out, n, want, 6);
}

Test(merge, every_frame_its_own_loop_before_311)
{
	const uint8_t k[] = { I, E, I, E, O };
	const uint32_t nn[] = { 100, 101, 102, 103, 104 };
	const uint32_t p[] = { 200, 201 };
	const bool en[] = { true, true };
	const uint32_t want[] = { 200, 201, 104 };
	uint32_t out[64];
	bool mm;

	expect(out, merge(nn, k, 5, true, p, en, 2, out, &mm), want, 3);
	cr_assert_not(mm);
}

Test(merge, more_python_loops_than_evaluation_frames_at_the_leaf)
{
	const bool en[] = { true, false, true, true };
	const uint32_t want[] = { 200, 201, 105, 202, MARK, 203, 108 };
	uint32_t out[64];
	bool mm;

	expect(out, merge(nat, kind, 9, true, py, en, 4, out, &mm), want, 7);
	cr_assert(mm);
}

Test(merge, more_evaluation_frames_than_python_loops)
{
	const bool en[] = { true, false, false, false };
	const uint32_t want[] = { 200, 201, 202, 203, 105, MARK, 107, 108 };
	uint32_t out[64];
	bool mm;

	expect(out, merge(nat, kind, 9, true, py, en, 4, out, &mm), want, 8);
	cr_assert(mm);
}

Test(merge, cut_native_stack_pairs_from_the_leaf)
{
	/* Unwinding stopped inside the C extension: one loop left. The Python
	 * callers it did not reach go above the mark of where it stopped: a
	 * cut, not a mismatch. */
	const uint32_t nn[] = { 105, 106, 107, 108 };
	const uint8_t k[] = { O, I, E, I };
	const uint32_t want[] = { 200, 201, STOP, 105, 202, 203, 108 };
	uint32_t out[64];
	bool mm;

	expect(out, merge(nn, k, 4, false, py, entry, 4, out, &mm), want, 7);
	cr_assert_not(mm);
	/* Cut inside the extension before any evaluation frame (OpenBLAS's
	 * dgetrf_parallel): all the Python frames, the mark, the leaf. */
	const uint32_t leaf[] = { 105 };
	const uint8_t lk[] = { O };
	const uint32_t want_leaf[] = { 200, 201, 202, 203, STOP, 105 };
	expect(out, merge(leaf, lk, 1, false, py, entry, 4, out, &mm), want_leaf, 6);
	cr_assert_not(mm);
}

Test(merge, cut_python_stack_pairs_from_the_leaf)
{
	/* The whole native stack, but only the leaf loop's Python frames were
	 * readable: they belong to the leaf evaluation frame, not the root one. */
	const uint32_t p[] = { 202, 203 };
	const bool en[] = { true, false };
	struct merge_in in = {
		.native = nat,
		.kind = kind,
		.nnative = 9,
		.native_whole = true,
		.py = p,
		.py_entry = en,
		.npy = 2,
		.py_cut = true,
		.mismatch_mark = MARK,
	};
	const uint32_t want[] = { MARK, 103, 105, 202, 203, 108 };
	uint32_t out[64];
	bool mm;

	expect(out, merge_stacks(&in, out, 64, &mm), want, 6);
	cr_assert(mm);
	/* Read whole, the same frames pair from the root. */
	const uint32_t root[] = { 202, 203, 105, MARK, 107, 108 };
	in.py_cut = false;
	expect(out, merge_stacks(&in, out, 64, &mm), root, 6);
}

Test(merge, not_a_python_thread_keeps_everything)
{
	const uint32_t want[] = { 100, 101, 102, 103, 104, 105, 106, 107, 108 };
	uint32_t out[64];
	bool mm;

	expect(out, merge(nat, kind, 9, true, py, entry, 0, out, &mm), want, 9);
	cr_assert_not(mm);
}

Test(merge, no_evaluation_frame_puts_python_below_native)
{
	const uint8_t k[] = { L, I, I, I, I, O, I, I, I };
	const uint32_t want[] = { 200, 201, 202, 203, MARK, 105 };
	uint32_t out[64];
	bool mm;

	expect(out, merge(nat, k, 9, true, py, entry, 4, out, &mm), want, 6);
	cr_assert(mm);
}

Test(merge, output_is_bounded)
{
	struct merge_in in = {
		.native = nat,
		.kind = kind,
		.nnative = 9,
		.native_whole = true,
		.py = py,
		.py_entry = entry,
		.npy = 4,
		.mismatch_mark = MARK,
	};
	uint32_t out[3];
	bool mm;

	cr_assert_eq(merge_stacks(&in, out, 3, &mm), 3);
}

Test(merge, interpreter_plumbing_before_an_extension_is_dropped)
{
	/* loop → PyObject_Call → ext → PyList_Sort → list_sort */
	const uint32_t nn[] = { 100, 101, 102, 103, 104, 105 };
	const uint8_t k[] = { I, E, I, O, I, I };
	const uint32_t p[] = { 200 };
	const bool en[] = { true };
	const uint32_t want[] = { 200, 103, 104, 105 };
	uint32_t out[64];
	bool mm;

	expect(out, merge(nn, k, 6, true, p, en, 1, out, &mm), want, 4);
	cr_assert_not(mm);
}
