// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * --mode memory: where a process's resident memory grows. The kernel maps a
 * new anonymous page (or huge page) into a process in one function, called
 * in the faulting thread with the address (folio_add_new_anon_rmap since
 * Linux 6.3, page_add_new_anon_rmap before): an fentry there sees every
 * byte of growth, in the thread whose Python stack asked for it. The growth
 * is sampled by bytes, as Go's heap profiler samples allocations: a sample
 * point every mem_sample_bytes on average, at random distances (a fixed
 * stride would fall in step with a program that maps the same sizes in
 * turn), so each byte is sampled with the same chance and a sample stands
 * for mem_sample_bytes. Only a page that holds a point costs a stack walk.
 *
 * Memory given back (munmap, brk down, madvise's DONTNEED and kin) or moved
 * (mremap) is told to userspace, which takes it off the samples of that
 * range: what is still held at the end reads apart from what came and went.
 */
#define PYEBPF_CU memory
#include "capture.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Bytes of growth per sample point, on average; 0: memory mode is off. */
const volatile __u64 mem_sample_bytes __weak = 0;

/* Bytes left until the next sample point on this CPU (0: not drawn yet). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} mem_left SEC(".maps");

/* Sample points a page holds past the first, at most (a 1 GiB page at a
 * small rate: the rest is counted at the mean, below). */
#define MEM_MAX_POINTS 64

/* The distance to the next point: uniform in [1, 2 x mem_sample_bytes], a mean of the rate. */
static __always_inline __u64 next_gap(void)
{
	return 1 + ((__u64)bpf_get_prandom_u32() * 2 * mem_sample_bytes >> 32);
}

/* Sample points in `bytes` of growth on this CPU; 0 for none. */
static __always_inline __u32 points_in(__u64 bytes)
{
	__u32 zero = 0, points = 1;
	__u64 *left = bpf_map_lookup_elem(&mem_left, &zero), rem, gap;

	if (!left)
		return 0;
	if (!*left)
		*left = next_gap();
	if (bytes < *left) {
		*left -= bytes;
		return 0;
	}
	rem = bytes - *left;
	gap = next_gap();
	for (int i = 0; i < MEM_MAX_POINTS && rem >= gap; i++) {
		points++;
		rem -= gap;
		gap = next_gap();
	}
	if (rem >= gap) { /* beyond the loop's bound: the rest at the mean */
		points += rem / mem_sample_bytes;
		rem %= mem_sample_bytes;
		if (rem >= gap)
			rem = gap - 1;
	}
	*left = gap - rem;
	return points;
}

/* The size of the page or folio whose first word (flags) is at `page`. */
static __always_inline __u64 folio_bytes(const void *page)
{
	unsigned long flags = 0, flags_1 = 0;
	__u64 head = 1ULL << bpf_core_enum_value(enum pageflags, PG_head);

	bpf_probe_read_kernel(&flags, sizeof(flags), page);
	if (!(flags & head))
		return 4096;
	/* A large folio's order is in the low byte of its second page's flags
	 * (Linux 6.6 on); before, anonymous huge pages were PMD-sized only. */
	if (bpf_core_field_exists(struct folio, _flags_1) &&
	    !bpf_probe_read_kernel(&flags_1, sizeof(flags_1), &((const struct folio *)page)->_flags_1) &&
	    (flags_1 & 0xff) && (flags_1 & 0xff) < 20)
		return 4096ULL << (flags_1 & 0xff);
	return 2ULL << 20;
}

/* Is the current process one memory mode samples? First, and cheap: the
 * hooks run for every page any process maps in. */
static __always_inline int mem_target(void)
{
	return mem_sample_bytes && wanted(bpf_get_current_pid_tgid() >> 32);
}

/* `bytes` mapped in at addr by the current thread (a target's): a sample if a point falls in them. */
static __always_inline int grown(void *ctx, __u64 addr, __u64 bytes)
{
	__u64 id = bpf_get_current_pid_tgid(), t0;
	__u32 pid = id >> 32, points;
	struct pyebpf_sample *s;

	count_n(PYEBPF_CNT_MEM_BYTES, bytes);
	points = points_in(bytes);
	if (!points)
		return 0;
	t0 = bpf_ktime_get_ns();
	s = sample_buf();
	if (!s) {
		count(PYEBPF_CNT_SCRATCH_ERR);
		return 0;
	}
	sample_header(s, pid, (__u32)id, bpf_get_current_cgroup_id());
	s->flags = PYEBPF_SAMPLE_MEM;
	s->mem.addr = addr & ~(bytes - 1);
	s->mem.bytes = bytes;
	s->mem.points = points;
	send_sample(s, capture_current(ctx, s));
	count(PYEBPF_CNT_MEM_TAKEN);
	count_n(PYEBPF_CNT_MEM_TAKEN_NS, bpf_ktime_get_ns() - t0);
	return 0;
}

/* Another process's memory (khugepaged's collapse, ptrace, a kernel
 * thread borrowing an mm) is not this thread's asking. */
static __always_inline int own_memory(struct vm_area_struct *vma)
{
	return BPF_CORE_READ(vma, vm_mm) == BPF_CORE_READ(current_task(), mm);
}

/* Linux 6.3 on (a flags argument since 6.10, not read here). */
SEC("fentry/folio_add_new_anon_rmap")
int BPF_PROG(on_anon_folio, struct folio *folio, struct vm_area_struct *vma, unsigned long address)
{
	return mem_target() && own_memory(vma) ? grown(ctx, address, folio_bytes(folio)) : 0;
}

/* Before 6.3: a page, a compound (head) page for a huge one. */
SEC("fentry/page_add_new_anon_rmap")
int BPF_PROG(on_anon_page, struct page *page, struct vm_area_struct *vma, unsigned long address)
{
	return mem_target() && own_memory(vma) ? grown(ctx, address, folio_bytes(page)) : 0;
}

/*
 * Where fentry is refused (a kernel without ftrace's direct calls, or one
 * that forbids them), the same growth seen where each new folio joins the
 * LRU lists: anonymous (its mapping's low bit), its size, and its address
 * (an anonymous folio's index is its address in pages, until an mremap
 * moves it). The kernel adds small folios in per-CPU batches (15 or 31
 * of them), so a page may be seen a few pages late, in the thread that
 * fills the batch (the last pages of one function's growth charged to the
 * next that grows); a folio put back after reclaim or migration joins again
 * and is counted again.
 */
SEC("tp_btf/mm_lru_insertion")
int BPF_PROG(on_lru_add, struct folio *folio)
{
	unsigned long mapping;
	__u64 bytes;

	if (!mem_target() || (BPF_CORE_READ(current_task(), flags) & 0x00200000 /* PF_KTHREAD */))
		return 0;
	mapping = (unsigned long)BPF_CORE_READ(folio, mapping);
	if (!(mapping & 1))
		return 0;
	bytes = folio_bytes(folio);
	/* A small folio unmapped while it waited in the batch (its
	 * _mapcount back at -1): given back already, not grown. */
	if (bytes == 4096 && BPF_CORE_READ(folio, _mapcount.counter) < 0)
		return 0;
	return grown(ctx, BPF_CORE_READ(folio, index) << 12, bytes);
}

/* ---- memory given back or moved ------------------------------------------
 * Told when the call returns: the pages it gives back may still sit in the
 * LRU batch above until then, and a call that failed gave nothing back. */

/* A call in progress: its arguments, for its return. */
struct mem_call {
	__u64 start, len, new_len;
	__u32 op;
	__u32 reserved;
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tid */
	__type(value, struct mem_call);
} mem_calls SEC(".maps");

static __always_inline int send_mem(__u32 op, __u64 start, __u64 len, __u64 to, __u64 to_len)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct pyebpf_mem_event *e;

	if (!len)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(PYEBPF_CNT_MEM_EVENT_LOST);
		return 0;
	}
	e->h.type = PYEBPF_EVENT_MEM;
	e->h.pid = id >> 32;
	e->h.tid = (__u32)id;
	e->h.cpu = bpf_get_smp_processor_id();
	e->h.ts_ns = bpf_ktime_get_ns();
	e->start = start;
	e->len = len;
	e->to = to;
	e->to_len = to_len;
	e->op = op;
	e->reserved = 0;
	bpf_ringbuf_submit(e, wakeup_flag());
	return 0;
}

static __always_inline int call_begins(__u32 op, __u64 start, __u64 len, __u64 new_len)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct mem_call c = { .start = start, .len = len, .new_len = new_len, .op = op };

	if (!mem_target())
		return 0;
	bpf_map_update_elem(&mem_calls, &tid, &c, BPF_ANY);
	return 0;
}

/* ret: the call's return; the memory is told given back (or moved) unless it failed. */
static __always_inline int call_ends(long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct mem_call *c = bpf_map_lookup_elem(&mem_calls, &tid);

	if (!c)
		return 0;
	if (c->op == PYEBPF_MEM_BRK) { /* brk returns where the break is now: below where it was, given back */
		/* From the page after the new break: the one it falls in stays mapped. */
		__u64 from = ((__u64)ret + 4095) & ~4095ULL, upto = (c->start + 4095) & ~4095ULL;

		if (from < upto)
			send_mem(PYEBPF_MEM_BRK, from, upto - from, 0, 0);
	} else if (ret >= 0) { /* mremap returns an address, the others 0 */
		send_mem(c->op, c->start, c->len, c->op == PYEBPF_MEM_MOVE ? (__u64)ret : 0, c->new_len);
	}
	bpf_map_delete_elem(&mem_calls, &tid);
	return 0;
}

/*
 * The calls are seen at their own syscall tracepoints where a tracing
 * filesystem is mounted (libbpf attaches those through tracefs): they run
 * for those four calls alone. Where none is (a fresh host, most
 * containers, a DaemonSet that mounts debugfs alone), at the raw
 * tracepoints of every syscall (sys_enter, sys_exit, BTF-typed: no
 * tracefs needed), which cost every syscall on the machine a little more
 * (bench/memory.sh): the number is looked at first, and only the four
 * calls go on to ask whether the process is a target. Userspace picks one
 * set (user/record/sampler.c).
 */
SEC("tracepoint/syscalls/sys_enter_munmap")
int on_munmap(struct trace_event_raw_sys_enter *ctx)
{
	return call_begins(PYEBPF_MEM_UNMAP, ctx->args[0], ctx->args[1], 0);
}

/* The advice that drops pages: DONTNEED, FREE, REMOVE, DONTNEED_LOCKED. */
SEC("tracepoint/syscalls/sys_enter_madvise")
int on_madvise(struct trace_event_raw_sys_enter *ctx)
{
	long advice = (long)ctx->args[2];

	if (advice != 4 && advice != 8 && advice != 9 && advice != 24)
		return 0;
	return call_begins(PYEBPF_MEM_ADVISE, ctx->args[0], ctx->args[1], 0);
}

/* The break before the call: where a shrink gives back from. */
SEC("tracepoint/syscalls/sys_enter_brk")
int on_brk(struct trace_event_raw_sys_enter *ctx)
{
	return ctx->args[0] ? call_begins(PYEBPF_MEM_BRK, BPF_CORE_READ(current_task(), mm, brk), 0, 0) : 0;
}

SEC("tracepoint/syscalls/sys_enter_mremap")
int on_mremap(struct trace_event_raw_sys_enter *ctx)
{
	return call_begins(PYEBPF_MEM_MOVE, ctx->args[0], ctx->args[1], ctx->args[2]);
}

SEC("tracepoint/syscalls/sys_exit_munmap")
int on_munmap_done(struct trace_event_raw_sys_exit *ctx)
{
	return call_ends(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_madvise")
int on_madvise_done(struct trace_event_raw_sys_exit *ctx)
{
	return call_ends(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_brk")
int on_brk_done(struct trace_event_raw_sys_exit *ctx)
{
	return call_ends(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_mremap")
int on_mremap_done(struct trace_event_raw_sys_exit *ctx)
{
	return call_ends(ctx->ret);
}

/* The raw tracepoints' four calls. A 32-bit task's numbers are another
 * table's (ia32's 12 is chdir, not brk): its calls are not these. */
static __always_inline int gives_back(long nr)
{
	return (nr == PYEBPF_NR_munmap || nr == PYEBPF_NR_madvise || nr == PYEBPF_NR_brk || nr == PYEBPF_NR_mremap) &&
	       !ARCH_COMPAT_SYSCALL(current_task());
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_mem_call, struct pt_regs *regs, long nr)
{
	__u64 a0, a1;
	long advice;

	if (!gives_back(nr))
		return 0;
	a0 = ARCH_SYSCALL_ARG0(regs);
	a1 = ARCH_SYSCALL_ARG1(regs);
	switch (nr) {
	case PYEBPF_NR_munmap:
		return call_begins(PYEBPF_MEM_UNMAP, a0, a1, 0);
	case PYEBPF_NR_madvise:
		/* The advice that drops pages: DONTNEED, FREE, REMOVE, DONTNEED_LOCKED. */
		advice = (long)ARCH_SYSCALL_ARG2(regs);
		if (advice != 4 && advice != 8 && advice != 9 && advice != 24)
			return 0;
		return call_begins(PYEBPF_MEM_ADVISE, a0, a1, 0);
	case PYEBPF_NR_brk:
		/* The break before the call: where a shrink gives back from. */
		return a0 ? call_begins(PYEBPF_MEM_BRK, BPF_CORE_READ(current_task(), mm, brk), 0, 0) : 0;
	default: /* mremap */
		return call_begins(PYEBPF_MEM_MOVE, a0, a1, ARCH_SYSCALL_ARG2(regs));
	}
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_mem_call_done, struct pt_regs *regs, long ret)
{
	/* A direct load of the BTF-typed registers, not a probe read: this runs at every syscall's end. */
	return gives_back(ARCH_SYSCALL_NR_BTF(regs)) ? call_ends(ret) : 0;
}
