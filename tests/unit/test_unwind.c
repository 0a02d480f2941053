/*
 * The DWARF unwinder against this very process: a library built without
 * frame pointers (fixtures/libunwind_fixture.so) captures its registers three
 * calls deep, on a thread whose stack bounds we know; the stack is copied as
 * the BPF program copies it and unwound offline, as for a sample.
 */
#include "unit.h"

#include <dlfcn.h>
#include <pthread.h>

#include "native/unwind.h"

#define STACK_BYTES (1 << 20)

typedef void (*uw_capture_fn)(const uint64_t regs[]);
typedef int (*uw_outer_fn)(uw_capture_fn cb, int depth);

static uint8_t *thread_stack;
static struct {
	struct pyebpf_uregs regs;
	uint8_t stack[PYEBPF_MAX_USTACK_COPY];
} snap;
static uint32_t copy_limit = PYEBPF_MAX_USTACK_COPY;
static pid_t snap_tid;

/* Byte by byte: the other frames' bytes are not ours to read for ASan. */
__attribute__((no_sanitize_address)) static void copy_stack(uint64_t sp)
{
	uint64_t end = (uint64_t)(uintptr_t)thread_stack + STACK_BYTES;
	uint32_t n = end - sp < copy_limit ? (uint32_t)(end - sp) : copy_limit;
	const volatile uint8_t *src = (const volatile uint8_t *)(uintptr_t)sp;

	for (uint32_t i = 0; i < n; i++)
		snap.stack[i] = src[i];
	snap.regs.copied = n;
}

/* pc, sp and the callee-saved registers, as the fixture's leaf saw them. */
static void capture(const uint64_t r[])
{
	int i = 0;

	snap.regs.pc = r[0];
	snap.regs.sp = r[1];
#define TAKE(field, dwarf) snap.regs.more[i] = r[2 + i], i++;
	PYEBPF_UREGS_MORE(TAKE)
#undef TAKE
	snap_tid = gettid();
	copy_stack(r[1]);
}

static void *thread_main(void *arg)
{
	uw_outer_fn outer = (uw_outer_fn)arg;

	outer(capture, 0);
	return NULL;
}

static void take_sample(void)
{
	void *h = dlopen(FIXTURE("libunwind_fixture.so"), RTLD_NOW);
	pthread_attr_t a;
	pthread_t t;

	cr_assert(h, "%s", dlerror());
	thread_stack = aligned_alloc(4096, STACK_BYTES);
	cr_assert(thread_stack);
	pthread_attr_init(&a);
	pthread_attr_setstack(&a, thread_stack, STACK_BYTES);
	cr_assert_eq(pthread_create(&t, &a, thread_main, dlsym(h, "uw_outer")), 0);
	pthread_join(t, NULL);
}

static const char *name_of(uint64_t pc, int leaf)
{
	Dl_info info;

	if (!dladdr((void *)(uintptr_t)(leaf ? pc : pc - 1), &info) || !info.dli_sname)
		return "?";
	return info.dli_sname;
}

Test(unwind, no_frame_pointers_unwinds_by_cfi)
{
	struct unwind_session *u = NULL;
	uint64_t pcs[64];
	enum unwind_end end;
	size_t n;

	take_sample();
	n = unwinder__unwind(&u, (uint32_t)getpid(), (uint32_t)snap_tid, 1, &snap.regs, snap.stack, pcs, 64, &end);
	cr_assert_geq(n, 4, "only %zu frames", n);
	cr_assert_str_eq(name_of(pcs[0], 1), "uw_leaf");
	cr_assert_str_eq(name_of(pcs[1], 0), "uw_middle");
	cr_assert_str_eq(name_of(pcs[2], 0), "uw_outer");
	/* thread_main is static: no dynamic symbol, so by address. */
	cr_assert(pcs[3] > (uint64_t)(uintptr_t)thread_main && pcs[3] < (uint64_t)(uintptr_t)thread_main + 64,
		  "frame 3 is not in thread_main");
	cr_assert_eq(end, UNWIND_END_ROOT, "ended %d after %zu frames", end, n);
	unwind_session__free(u);
}

Test(unwind, short_copy_says_so)
{
	struct unwind_session *u = NULL;
	uint64_t pcs[64];
	enum unwind_end end;
	size_t n;

	copy_limit = 128; /* less than uw_leaf's own frame */
	take_sample();
	n = unwinder__unwind(&u, (uint32_t)getpid(), (uint32_t)snap_tid, 1, &snap.regs, snap.stack, pcs, 64, &end);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(name_of(pcs[0], 1), "uw_leaf");
	cr_assert_eq(end, UNWIND_END_COPY);
	cr_assert_str_eq(unwind_end_mark(end), "[stack copy ends: --stack-size]");
	unwind_session__free(u);
}

Test(unwind, frame_array_limit)
{
	struct unwind_session *u = NULL;
	uint64_t pcs[2];
	enum unwind_end end;

	take_sample();
	cr_assert_eq(unwinder__unwind(&u, (uint32_t)getpid(), (uint32_t)snap_tid, 1, &snap.regs, snap.stack, pcs, 2,
				      &end),
		     2);
	cr_assert_eq(end, UNWIND_END_MAX);
	unwind_session__free(u);
}
