/*
 * A frame's code object check (include/pyebpf.h): what BPF records of the
 * code object it saw and userspace compares with the code object it reads
 * later, when a module's code may be gone and its address another's.
 */
#include "unit.h"

#include "pyebpf.h"
#include "python/offsets.h"
#include "python/symbolize.h"

#define NAME 0x7f0000101230ULL
#define FILE_ 0x7f0000204560ULL

Test(code_check, never_0_and_fits_the_flags)
{
	/* 0 means "not read": no code object may have it. */
	for (uint64_t i = 0; i < 100000; i++) {
		uint32_t c = pyebpf_code_check(NAME + 16 * i, FILE_ + 8 * (i % 7), (int32_t)(i % 3000));

		cr_assert_neq(c, 0);
		cr_assert_leq(c, 0xffffffu);
		cr_assert_eq(PYEBPF_PYFRAME_CHECK(c << PYEBPF_PYFRAME_CHECK_SHIFT | PYEBPF_PYFRAME_ENTRY |
						  PYEBPF_PYFRAME_MODULE),
			     c);
	}
	cr_assert_neq(pyebpf_code_check(0, 0, 0), 0);
}

Test(code_check, each_part_tells_code_objects_apart)
{
	uint32_t c = pyebpf_code_check(NAME, FILE_, 1);

	cr_assert_eq(pyebpf_code_check(NAME, FILE_, 1), c);
	/* Every module's code is `<module>` (one interned name) at line 1:
	 * the file tells them apart. */
	cr_assert_neq(pyebpf_code_check(NAME, FILE_ + 0x40, 1), c);
	cr_assert_neq(pyebpf_code_check(NAME + 0x40, FILE_, 1), c);
	cr_assert_neq(pyebpf_code_check(NAME, FILE_, 2), c);
	/* One string's address and another's next to it. */
	cr_assert_neq(pyebpf_code_check(NAME + 8, FILE_, 1), c);
}

Test(code_check, few_collisions_among_neighbours)
{
	/* Code objects of one module: one file, names 48 bytes apart, lines
	 * growing. What matters is one pair (the code sampled, the code at its
	 * address later), alike once in 16 million; among all 20,000 pairs of
	 * pairs a random 24-bit value has 12 alike (20000^2 / 2^25). */
	static uint8_t seen[1 << 21];
	int collisions = 0;

	for (uint32_t i = 0; i < 20000; i++) {
		uint32_t c = pyebpf_code_check(NAME + 48 * i, FILE_, (int32_t)(1 + 7 * i));

		collisions += (seen[c >> 3] >> (c & 7)) & 1;
		seen[c >> 3] |= (uint8_t)(1 << (c & 7));
	}
	cr_assert_leq(collisions, 30, "%d collisions among 20000", collisions);
}

Test(code_check, a_code_object_names_a_frame_only_when_it_is_the_one_sampled)
{
	uint32_t c = pyebpf_code_check(NAME, FILE_, 1);

	cr_assert(py_code_matches(true, c, c));
	cr_assert_not(py_code_matches(true, c ^ 1, c), "another code object at the address");
	cr_assert_not(py_code_matches(false, c, c), "unreadable (or freed) memory");
}

Test(code_check, every_layout_reads_its_check_fields_in_one_piece)
{
	size_t n;
	const struct py_layout *layouts = py_layouts_builtin(&n);

	for (size_t i = 0; i < n; i++) {
		struct py_layout l = layouts[i];
		const struct pyebpf_py_offsets *o = &l.bpf;

		py_layout_code_check(&l);
		uint32_t start = o->code_name < o->code_filename ? o->code_name : o->code_filename;
		start = o->code_firstlineno < start ? o->code_firstlineno : start;
		cr_assert_gt(o->code_check_len, 0, "%d.%d%s", l.major, l.minor, l.free_threaded ? "t" : "");
		cr_assert_leq(o->code_check_len, PYEBPF_MAX_CODE_READ);
		cr_assert_leq(o->code_name + 8 - start, o->code_check_len);
		cr_assert_leq(o->code_filename + 8 - start, o->code_check_len);
		cr_assert_leq(o->code_firstlineno + 4 - start, o->code_check_len);
		/* 3.11+: the qualified name, as userspace reads it. */
		cr_assert_eq(o->code_name, l.co_qualname != PYEBPF_NO_OFFSET ? l.co_qualname : l.co_name);
		cr_assert_eq(o->frame_locals, o->frame_globals + (o->frame_kind == PYEBPF_FRAMES_OBJECT ? 8 : 16));
		cr_assert_leq(o->frame_locals + 8, o->frame_read_size);
	}
	/* A layout without a first line (none known) reads no check. */
	struct py_layout l = layouts[0];
	l.co_firstlineno = PYEBPF_NO_OFFSET;
	py_layout_code_check(&l);
	cr_assert_eq(l.bpf.code_check_len, 0);
}
