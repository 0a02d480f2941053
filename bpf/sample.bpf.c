// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The sampler: a perf_event program run by a cpu-clock timer on every CPU.
 * It filters (target pids, pyebpf itself), reads the kernel and user stacks
 * and sends one event per sample through a ring buffer. It never names
 * anything: symbolization is userspace's job.
 *
 * Tracepoints on fork/exec/exit keep the target set right when a launched
 * command forks, and tell userspace when a process's address space changes.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "pyebpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set through skel->rodata between open and load. */
const volatile __u32 self_pid = 0;       /* never sample pyebpf itself */
const volatile __u8 filter_pids = 0;     /* only sample pids in `targets` */
const volatile __u8 follow_forks = 0;    /* children of targets become targets */
const volatile __u8 kernel_stacks = 1;   /* --no-kernel clears it */
const volatile __u8 filter_cgroups = 0;  /* only tasks in (or below) a cgroup of `target_cgroups` */
const volatile __u32 ustack_copy = 0;    /* --native: user stack bytes to copy (0: frame-pointer walk) */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* resized by userspace before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);  /* tgid */
	__type(value, __u8);
} targets SEC(".maps");

/* --cgroup / --container: cgroup v2 ids; their descendants count too. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, __u8);
} target_cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PYEBPF_CNT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/*
 * One sample buffer per CPU (up to ~90 KiB with a native stack copy: beyond
 * the 512-byte BPF stack and the 32 KiB limit of a per-CPU map value), so an
 * array indexed by CPU. Userspace sets max_entries to the number of possible
 * CPUs. A perf_event program never nests on its CPU, so a CPU's buffer is
 * its own while the program runs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pyebpf_sample_buf);
} scratch SEC(".maps");

static __always_inline struct pyebpf_sample *sample_buf(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&scratch, &cpu);
}

/*
 * Wake the reader only once a batch is waiting: a wake-up per sample costs the
 * profiled CPUs more than the sample itself. Userspace also drains the ring
 * on a short timer, so nothing waits long.
 */
#define WAKEUP_BYTES (256 * 1024)

static __always_inline __u64 wakeup_flag(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > WAKEUP_BYTES ? BPF_RB_FORCE_WAKEUP
									    : BPF_RB_NO_WAKEUP;
}

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		(*c)++;
}

#include "python.bpf.h"
#include "ustack.bpf.h"

/* Deeper cgroups than this are matched by their ancestors up to this level. */
#define MAX_CGROUP_LEVEL 32

/* Is the current task in a target cgroup or below one? Its ancestors, root first. */
static __always_inline int in_target_cgroup(void)
{
	for (int level = 0; level <= MAX_CGROUP_LEVEL; level++) {
		__u64 id = bpf_get_current_ancestor_cgroup_id(level);

		if (!id) /* deeper than the task's own cgroup */
			return 0;
		if (bpf_map_lookup_elem(&target_cgroups, &id))
			return 1;
	}
	return 0;
}

static __always_inline int wanted(__u32 pid)
{
	if (pid == 0 || pid == self_pid) /* idle task, ourselves */
		return 0;
	if (filter_pids && !bpf_map_lookup_elem(&targets, &pid))
		return 0;
	/* Samples of other containers never leave the kernel. */
	if (filter_cgroups && !in_target_cgroup())
		return 0;
	return 1;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	struct pyebpf_sample *s;
	long kbytes = 0, ubytes;
	__u32 kn, un, n, size;

	if (!wanted(pid))
		return 0;

	s = sample_buf();
	if (!s) {
		count(PYEBPF_CNT_SCRATCH_ERR);
		return 0;
	}
	s->h.type = PYEBPF_EVENT_SAMPLE;
	s->h.pid = pid;
	s->h.tid = (__u32)id;
	s->h.cpu = bpf_get_smp_processor_id();
	s->h.ts_ns = bpf_ktime_get_ns();
	s->cgroup_id = bpf_get_current_cgroup_id();
	s->flags = 0;
	s->reserved = 0;
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	if (kernel_stacks) {
		kbytes = bpf_get_stack(ctx, s->stack, PYEBPF_MAX_STACK * 8, 0);
		if (kbytes < 0) {
			s->flags |= PYEBPF_SAMPLE_KSTACK_ERR;
			count(PYEBPF_CNT_KSTACK_ERR);
			kbytes = 0;
		}
	}
	kn = (__u32)kbytes / 8;
	if (kn > PYEBPF_MAX_STACK) /* bounds the offset below for the verifier */
		kn = PYEBPF_MAX_STACK;

	/* --native unwinds the copied stack with DWARF CFI instead. */
	ubytes = ustack_copy ? 0 : bpf_get_stack(ctx, &s->stack[kn], PYEBPF_MAX_STACK * 8, BPF_F_USER_STACK);
	if (ubytes < 0) {
		/* Kernel threads have no user stack: not a failure. */
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		if (BPF_CORE_READ(task, mm)) {
			s->flags |= PYEBPF_SAMPLE_USTACK_ERR;
			count(PYEBPF_CNT_USTACK_ERR);
		}
		ubytes = 0;
	}
	un = (__u32)ubytes / 8;
	if (un > PYEBPF_MAX_STACK)
		un = PYEBPF_MAX_STACK;
	s->kstack_len = kn;
	s->ustack_len = un;

	python_stack(s, pid, (__u32)id);
	if (ustack_copy) {
		n = s->py_len;
		if (n > PYEBPF_MAX_PY_FRAMES)
			n = PYEBPF_MAX_PY_FRAMES;
		s->py_len = n;
		size = PYEBPF_PY_SAMPLE_SIZE(n);
		size += copy_user_stack(s, size);
	} else if (s->flags & PYEBPF_SAMPLE_PY) {
		/* Python frames follow the whole native stack array. */
		n = s->py_len;
		if (n > PYEBPF_MAX_PY_FRAMES)
			n = PYEBPF_MAX_PY_FRAMES;
		size = PYEBPF_PY_SAMPLE_SIZE(n);
	} else {
		n = kn + un;
		if (n > 2 * PYEBPF_MAX_STACK)
			n = 2 * PYEBPF_MAX_STACK;
		size = PYEBPF_SAMPLE_SIZE(n);
	}
	if (bpf_ringbuf_output(&events, s, size, wakeup_flag())) {
		count(PYEBPF_CNT_RB_FULL);
		return 0;
	}
	count(PYEBPF_CNT_SAMPLES);
	return 0;
}

/* Exits wake the reader at once: the samples before them are named while
 * /proc and the process's memory are still there for the latest ones. */
static __always_inline void send_proc_event(__u32 type, struct task_struct *task)
{
	struct pyebpf_proc_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		count(PYEBPF_CNT_PROC_RB_FULL);
		return;
	}
	e->h.type = type;
	e->h.pid = BPF_CORE_READ(task, tgid);
	e->h.tid = BPF_CORE_READ(task, pid);
	e->h.cpu = bpf_get_smp_processor_id();
	e->h.ts_ns = bpf_ktime_get_ns();
	BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	bpf_ringbuf_submit(e, type == PYEBPF_EVENT_EXIT ? BPF_RB_FORCE_WAKEUP : wakeup_flag());
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid = parent->tgid, cpid = child->tgid;
	__u8 one = 1;

	if (!follow_forks || cpid == ppid) /* a new thread, not a new process */
		return 0;
	if (!bpf_map_lookup_elem(&targets, &ppid))
		return 0;
	if (bpf_map_update_elem(&targets, &cpid, &one, BPF_ANY))
		count(PYEBPF_CNT_TARGETS_FULL);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 pid = p->tgid;

	if (wanted(pid))
		send_proc_event(PYEBPF_EVENT_EXEC, p);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 pid = p->tgid;

	/* Only when the whole thread group is gone. */
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	if (!wanted(pid))
		return 0;
	send_proc_event(PYEBPF_EVENT_EXIT, p);
	if (filter_pids) /* the pid may be reused by an unrelated process */
		bpf_map_delete_elem(&targets, &pid);
	return 0;
}
