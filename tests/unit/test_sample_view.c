#include "unit.h"

#include "samples.h"
#include "sample_view.h"

static struct sample_rec rec;

Test(sample_view, native_sample_points_into_the_record)
{
	struct pyebpf_sample *s = sample_init(&rec, 7, 8, 100);
	uint64_t k[] = { 0x1, 0x2 }, u[] = { 0x10, 0x20, 0x30 };
	size_t size = sample_native(s, k, 2, u, 3);
	struct sample_view v;

	cr_assert_eq(sample_decode(s, size, &v), SAMPLE_OK);
	cr_assert_eq(v.s, s);
	cr_assert_eq(v.nkstack, 2);
	cr_assert_eq(v.kstack[1], 0x2);
	cr_assert_eq(v.nustack, 3);
	cr_assert_eq(v.ustack[0], 0x10);
	cr_assert_eq(v.ustack[2], 0x30);
	cr_assert_null(v.py);
	cr_assert_eq(v.npy, 0);
	cr_assert_null(v.regs);
	/* One byte short of the last user frame. */
	cr_assert_eq(sample_decode(s, size - 1, &v), SAMPLE_STACK_LEN);
	cr_assert_null(v.s);
}

Test(sample_view, header_and_stack_bounds)
{
	struct pyebpf_sample *s = sample_init(&rec, 7, 8, 100);
	struct sample_view v;

	cr_assert_eq(sample_decode(s, PYEBPF_SAMPLE_SIZE(0) - 1, &v), SAMPLE_SHORT);
	s->h.type = PYEBPF_EVENT_EXIT;
	cr_assert_eq(sample_decode(s, PYEBPF_SAMPLE_SIZE(0), &v), SAMPLE_NOT_A_SAMPLE);
	s->h.type = PYEBPF_EVENT_SAMPLE;
	s->kstack_len = PYEBPF_MAX_STACK + 1;
	cr_assert_eq(sample_decode(s, sizeof(struct pyebpf_sample), &v), SAMPLE_STACK_LEN);
	s->kstack_len = 0;
	s->ustack_len = 0xffffffffu; /* would wrap an unchecked sum */
	cr_assert_eq(sample_decode(s, sizeof(struct pyebpf_sample), &v), SAMPLE_STACK_LEN);
	cr_assert_str_eq(sample_decode_strerror(SAMPLE_STACK_LEN), "stack length out of bounds");
}

Test(sample_view, python_frames_follow_the_whole_stack_array)
{
	struct pyebpf_sample *s = sample_init(&rec, 7, 8, 100);
	struct sample_view v;

	s->flags = PYEBPF_SAMPLE_PY;
	s->kstack_len = 1;
	s->py_len = 2;
	s->py[0].code = 0xc0de;
	s->py[1].code = 0xbeef;
	cr_assert_eq(sample_decode(s, PYEBPF_PY_SAMPLE_SIZE(2), &v), SAMPLE_OK);
	cr_assert_eq(v.npy, 2);
	cr_assert_eq(v.py[1].code, 0xbeef);
	cr_assert_eq(sample_decode(s, PYEBPF_PY_SAMPLE_SIZE(2) - 1, &v), SAMPLE_PY_LEN);
	s->py_len = PYEBPF_MAX_PY_FRAMES + 1;
	cr_assert_eq(sample_decode(s, sizeof(rec), &v), SAMPLE_PY_LEN);
}

Test(sample_view, native_tail_after_python_frames)
{
	struct pyebpf_sample *s = sample_init(&rec, 7, 8, 100);
	struct pyebpf_uregs *r;
	struct sample_view v;
	size_t off;

	s->flags = PYEBPF_SAMPLE_PY | PYEBPF_SAMPLE_UREGS;
	s->py_len = 3;
	off = PYEBPF_PY_SAMPLE_SIZE(3);
	r = (struct pyebpf_uregs *)((char *)s + off);
	r->pc = 0x401000;
	r->sp = 0x7ffd0000;
	r->copied = 64;
	memset(r + 1, 0xab, 64);
	cr_assert_eq(sample_decode(s, off + sizeof(*r) + 64, &v), SAMPLE_OK);
	cr_assert_eq(v.regs, r);
	cr_assert_eq(v.copied, 64);
	cr_assert_eq(v.stack_copy[63], 0xab);
	cr_assert_eq(v.npy, 3);
	/* The copy claims more bytes than the record holds. */
	cr_assert_eq(sample_decode(s, off + sizeof(*r) + 63, &v), SAMPLE_UREGS);
	/* More than any copy may hold. */
	r->copied = PYEBPF_MAX_USTACK_COPY + 1;
	cr_assert_eq(sample_decode(s, sizeof(rec), &v), SAMPLE_UREGS);
	/* No room for the registers at all. */
	cr_assert_eq(sample_decode(s, off + sizeof(*r) - 1, &v), SAMPLE_UREGS);
}
