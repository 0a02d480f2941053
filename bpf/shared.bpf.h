/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What every BPF program of pyebpf shares: the settings userspace writes
 * through skel->rodata, the maps (ring buffer, targets, counters, per-CPU
 * sample buffer), and the helpers around them. Each program file includes
 * it; the objects are linked into one (bpftool gen object), where these
 * __weak definitions become one map or variable each.
 */
#ifndef PYEBPF_SHARED_BPF_H
#define PYEBPF_SHARED_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "pyebpf.h"
#include "arch.bpf.h"
#include "kernel_compat.bpf.h"

/* Set through skel->rodata between open and load. */
const volatile __u32 self_pid __weak = 0;         /* never sample pyebpf itself */
const volatile __u8 filter_pids __weak = 0;       /* only sample pids in `targets` */
const volatile __u8 follow_forks __weak = 0;      /* children of targets become targets */
const volatile __u8 filter_comms __weak = 0;      /* --comm: processes of these names become targets */
const volatile __u8 kernel_stacks __weak = 1;     /* --no-kernel clears it */
const volatile __u8 filter_cgroups __weak = 0;    /* only tasks in (or below) a cgroup of `target_cgroups` */
const volatile __u32 ustack_copy __weak = 0;      /* --native: user stack bytes to copy (0: frame-pointer walk) */
const volatile __u32 flush_slot __weak = 0;       /* the scratch slot of the stop flush: after the CPUs' */
const volatile __u32 offcpu_slot_base __weak = 0; /* the off-CPU hooks' slots, one per CPU: after the flush's */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20); /* resized by userspace before load */
} events SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} targets SEC(".maps") __weak;

/* Bumped whenever the target set grows (userspace's adds, the fork and exec
 * hooks'): a task's cached "not a target" (offcpu.bpf.h) is older then. */
__u32 targets_gen __weak = 0;

/* The generation an answer is kept with: read before deciding (a target
 * added after that bumps past it); + 1, so a fresh zero record is none. */
static __always_inline __u32 targets_generation(void)
{
	return *(volatile __u32 *)&targets_gen + 1;
}

/* Nanoseconds between timer ticks (1e9 / -F; userspace sets it at each start). */
__u64 timer_period_ns __weak = 0;

/* --comm NAME: the kernel's 16-byte task name, NUL-padded, as the key. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, char[PYEBPF_COMM_LEN]);
	__type(value, __u8);
} target_comms SEC(".maps") __weak;

/*
 * Processes born (forked or exec'd) less than YOUNG_NS ago, by tgid: their
 * samples wake the reader at once until userspace has told whether they are
 * Python, so a short-lived script is walked as Python from its first
 * milliseconds, not after the reader's next timed drain (50 ms).
 */
#define YOUNG_NS (250 * 1000000ULL)
/* A young process wakes the reader at most this often: a build's compiler
 * processes, all young, must not turn every sample into a wake-up. */
#define YOUNG_WAKE_NS (2 * 1000000ULL)

struct young_proc {
	__u64 born, woke; /* bpf_ktime_get_ns() */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct young_proc);
} young SEC(".maps") __weak;

static __always_inline void note_young(__u32 pid)
{
	struct young_proc y = { .born = bpf_ktime_get_ns() };

	bpf_map_update_elem(&young, &pid, &y, BPF_ANY);
}

/* --cgroup / --container: cgroup v2 ids; their descendants count too. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, __u8);
} target_cgroups SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PYEBPF_CNT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps") __weak;

/*
 * One sample buffer per CPU (up to ~90 KiB with a native stack copy: beyond
 * the 512-byte BPF stack and the 32 KiB limit of a per-CPU map value), so an
 * array indexed by CPU. Userspace sets max_entries to the number of possible
 * CPUs. A perf_event program never nests on its CPU, so a CPU's buffer is
 * its own while the program runs. The sleepable stop flush can be
 * preempted: it has a slot of its own, flush_slot, after the CPUs'. The
 * off-CPU task work, which a timer sample can interrupt, has a slot per CPU
 * after that, taken with a busy flag (offcpu.bpf.c).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pyebpf_sample_buf);
} scratch SEC(".maps") __weak;

/*
 * Whose user memory the stack readers read. The samplers read the thread
 * that is running (bpf_probe_read_user). The stop flush
 * (offcpu_flush.bpf.c) reads threads that are blocked, from a sleepable
 * task iterator: it defines READ_OTHER_TASK and sets walk_tid and
 * walk_tp (the thread pointer) before each walk (scalars, not a task pointer, so that the
 * bpf_loop callbacks reach them).
 */
#ifdef READ_OTHER_TASK
/* __weak: a kernel without them still loads the programs that do not call
 * them (--mode cpu); userspace checks before asking for the ones that do. */
extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

__u32 walk_tid;
__u64 walk_tp;

static __always_inline long user_read(void *dst, __u32 size, const void *src)
{
	struct task_struct *t = bpf_task_from_pid((s32)walk_tid);
	long err;

	if (!t)
		return -1;
	err = bpf_copy_from_user_task(dst, size, src, t, 0);
	bpf_task_release(t);
	return err;
}
#define task_thread_pointer() walk_tp
#else
#define user_read bpf_probe_read_user
#define task_thread_pointer() ARCH_THREAD_POINTER(current_task())
#endif

#ifndef SCRATCH_SLOT
#define SCRATCH_SLOT() bpf_get_smp_processor_id()
#endif

static __always_inline struct pyebpf_sample *sample_buf(void)
{
	__u32 slot = SCRATCH_SLOT();

	return bpf_map_lookup_elem(&scratch, &slot);
}

/*
 * Wake the reader only once a batch is waiting: a wake-up per sample costs the
 * profiled CPUs more than the sample itself. Userspace also drains the ring
 * on a short timer, so nothing waits long.
 */
#define WAKEUP_BYTES (256 * 1024)

static __always_inline __u64 wakeup_flag(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > WAKEUP_BYTES ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/*
 * A Python sample that comes as something ends (a wait, sent when the
 * thread runs again; memory growth) may be its process's last: a script's
 * final sleep is followed by its exit within milliseconds, and once the
 * process is gone its code objects cannot be read, so its frames could not
 * be named (the reader's timed drain is every 50 ms). Such a sample wakes
 * the reader at once, at most once every PROMPT_WAKE_NS on the whole
 * machine: a wake-up drains whatever is in the ring, so a busy host's
 * records are read within that time without a wake-up each.
 */
#define PROMPT_WAKE_NS (2 * 1000000ULL)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64); /* bpf_ktime_get_ns() of the last prompt wake-up */
} prompt_woke SEC(".maps") __weak;

static __always_inline __u64 prompt_wakeup_flag(void)
{
	__u32 zero = 0;
	__u64 *woke = bpf_map_lookup_elem(&prompt_woke, &zero), now = bpf_ktime_get_ns();

	if (!woke || now - *woke < PROMPT_WAKE_NS) /* a racing CPU may wake it twice: harmless */
		return wakeup_flag();
	*woke = now;
	return BPF_RB_FORCE_WAKEUP;
}

/* A sample of a young process not (yet) known as Python wakes the reader:
 * naming it is what registers the process with the Python walker. */
static __always_inline __u64 sample_wakeup_flag(__u32 pid, __u32 flags)
{
	struct young_proc *y;
	__u64 now;

	if (flags & PYEBPF_SAMPLE_PY)
		return flags & (PYEBPF_SAMPLE_OFFCPU | PYEBPF_SAMPLE_MEM) ? prompt_wakeup_flag() : wakeup_flag();
	y = bpf_map_lookup_elem(&young, &pid);
	if (!y)
		return wakeup_flag();
	now = bpf_ktime_get_ns();
	if (now - y->born >= YOUNG_NS) {
		bpf_map_delete_elem(&young, &pid);
		return wakeup_flag();
	}
	if (now - y->woke < YOUNG_WAKE_NS) /* a racing CPU may wake it twice: harmless */
		return wakeup_flag();
	y->woke = now;
	return BPF_RB_FORCE_WAKEUP;
}

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		(*c)++;
}

/* Add n to a counter that sums (nanoseconds), not counts. */
static __always_inline void count_n(__u32 which, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		*c += n;
}

/* Deeper cgroups than this are matched by their ancestors up to this level. */
#define MAX_CGROUP_LEVEL 32

#ifdef PYEBPF_KERNEL_COMPAT
/* Before 6.0 a cgroup keeps its ancestors' ids; the perf_event programs of
 * 5.10 have no bpf_get_current_ancestor_cgroup_id. The current task's
 * cgroup is read once per sample, its ancestors from it. */
struct cgroup___ids {
	int level;
	__u64 ancestor_ids[];
} __attribute__((preserve_access_index));

#define current_cgroup() ((struct cgroup___ids *)BPF_CORE_READ(current_task(), cgroups, dfl_cgrp))

static __always_inline __u64 ancestor_cgroup_id(struct cgroup___ids *cg, int level)
{
	if (level > BPF_CORE_READ(cg, level))
		return 0;
	return BPF_CORE_READ(cg, ancestor_ids[level]);
}
#else
#define current_cgroup() NULL
#define ancestor_cgroup_id(cg, level) ((void)(cg), bpf_get_current_ancestor_cgroup_id(level))
#endif

/* Is the current task in a target cgroup or below one? Its ancestors, root first. */
static __always_inline int in_target_cgroup(void)
{
	void *cg = current_cgroup();

	for (int level = 0; level <= MAX_CGROUP_LEVEL; level++) {
		__u64 id = ancestor_cgroup_id(cg, level);

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

#endif /* PYEBPF_SHARED_BPF_H */
