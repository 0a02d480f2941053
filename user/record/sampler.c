// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * open → configure (rodata, map sizes) → load → attach, in the shape of
 * libbpf-bootstrap; handles start NULL or -1 and sampler__free releases
 * whatever was made.
 */
#include "record/sampler.h"

#include <errno.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "record/cpus.h"
#include "record/jitter.h"
#include "record/kernel_plan.h"
#include "record/preflight.h"
#include "system/tracefs_ids.h"
#include "python/procmem.h"
#include "python/thread_states.h"
#include "sample.skel.h"
#include "sample_compat.skel.h"
#include "sample_tw2.skel.h"
#include "base/util.h"

#define MAX_CPUS 4096
#define MEM_HOOK_LRU "mm_lru_insertion" /* memory_hook()'s tracepoint */
/*
 * The ring buffer holds what the CPUs send while the reader is busy (a
 * pprof written at an interval's end, a large binary's symbols read, a
 * loaded machine): a quarter second of the worst case, every CPU sampled at
 * the highest rate, each record the largest one (1,024 Python frames, 27 KB,
 * and with --native the stack copy), where most records are a tenth of
 * that or less. In wall mode the threads' waits come on top, planned as
 * OFFCPU_RECORDS_PER_TICK records a CPU and tick. A power of two (the
 * kernel wants one), from RINGBUF_MIN (well above the batch that wakes the
 * reader, bpf/shared.bpf.h) up to RINGBUF_MAX. The process maps it twice
 * (the kernel's wrap-around view), so its size counts double in RSS: a
 * fixed 16 MiB was 32 MB of a 2-CPU recorder's 50 MB; sized so, it is 2 MiB
 * there at 99 Hz. A sample the ring has no room for is counted lost.
 */
#define RING_SECONDS_DIVISOR 4 /* a quarter second */
#define OFFCPU_RECORDS_PER_TICK 4
#define RINGBUF_MIN (1u << 20)
/* --mode memory has no timer: its samples come as fast as memory grows (at
 * the default rate a program mapping 1 GB/s sends 2,000 a second), planned
 * as that many records a CPU and "tick" of the assumed rate. */
#define MEM_RECORDS_PER_TICK 2
/* The fixed per-CPU sizes' at 128 CPUs (256 KiB and 1 MiB a CPU), which held
 * 0.8 s of 50-frame Python stacks there at 99 Hz (bench/replay.sh soak): no
 * host up to 128 CPUs gets a larger ring than those gave. */
#define RINGBUF_MAX (32u << 20)
#define RINGBUF_MAX_NATIVE (128u << 20)
#define RINGBUF_RECORD_HEADER 8 /* the kernel's, before each record */
#define RINGBUF_ASSUMED_HZ 1000 /* callers that do not say their rate */

/* The largest record BPF sends with these settings, its header included. */
static uint64_t ringbuf_record_max(const struct sampler_config *c)
{
	uint64_t bytes = PYEBPF_PY_SAMPLE_SIZE(PYEBPF_MAX_PY_FRAMES);

	if (c->ustack_copy)
		bytes += sizeof(struct pyebpf_uregs) + c->ustack_copy;
	return RINGBUF_RECORD_HEADER + ((bytes + 7) & ~7ULL);
}

static uint32_t ringbuf_bytes(const struct sampler_config *c, int ncpus)
{
	uint64_t hz = c->freq ? c->freq : RINGBUF_ASSUMED_HZ;
	uint64_t per_tick = (c->on_cpu ? 1 : 0) + (c->off_cpu ? OFFCPU_RECORDS_PER_TICK : 0) +
			    (c->mem_sample_bytes ? MEM_RECORDS_PER_TICK : 0);
	uint64_t want = (uint64_t)ncpus * hz * per_tick * ringbuf_record_max(c) / RING_SECONDS_DIVISOR;
	uint32_t max = c->ustack_copy ? RINGBUF_MAX_NATIVE : RINGBUF_MAX, size = RINGBUF_MIN;

	while (size < want && size < max)
		size <<= 1;
	return size;
}

/*
 * The stop flush and the dump iterator send records as they are read, a
 * byte of the read each: a read of flush_chunk bytes returns after that
 * many records, which are consumed before the next read. As many as half
 * the ring holds at the largest record, at most FLUSH_CHUNK_MAX: thousands
 * of blocked threads never fill it, and a second Ctrl-C is seen between
 * reads.
 */
#define FLUSH_CHUNK_MAX 64

static unsigned flush_chunk(const struct sampler_config *c, uint32_t ring_bytes)
{
	uint64_t fit = ring_bytes / 2 / ringbuf_record_max(c);

	return fit < 1 ? 1 : fit > FLUSH_CHUNK_MAX ? FLUSH_CHUNK_MAX : (unsigned)fit;
}

/* --mode memory: the syscalls that give memory back or move it, as they
 * begin and end: their own tracepoints (8 programs) where tracefs is
 * mounted, else the raw ones of every syscall (2). */
#define MEM_SYSCALL_PROGS 8

struct sampler {
	struct sample_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **perf_links;
	int *perf_fds; /* the links' events, closed with them */
	int nperf;
	struct jitter *jitter; /* changes the events' periods (record/jitter.h) */
	int ncpus;             /* CPUs sampled by the last start: still known after the stop */
	struct bpf_link *fork_link, *exec_link, *exit_link;
	struct bpf_link *switch_link;      /* --mode wall/off-cpu */
	struct bpf_link *switch_done_link; /* where there is no task work: its finish_task_switch kprobe, or sys_exit */
	/* --mode memory: the growth hook, then the syscalls that give back, at
	 * the raw syscall tracepoints (no tracefs to be had) or at their own,
	 * by the ids a private tracefs mount read (none mounted) or by libbpf. */
	struct bpf_link *mem_links[1 + MEM_SYSCALL_PROGS];
	bool mem_raw_syscalls, mem_tp_by_id;
	uint64_t mem_tp_ids[MEM_SYSCALL_PROGS];
	const char *mem_hook;         /* the kernel function memory growth is seen in; NULL: none */
	struct bpf_program *mem_grow; /* ... its program (set at load) */
	struct kernel_plan plan;
	char switch_done[200]; /* finish_task_switch's name in kallsyms */
	bool on_cpu, off_cpu;
	int stats_fd;
	int ncpus_possible;
	sampler_event_fn fn; /* the consumer's callback, behind bounded_event */
	void *ctx;
	uint64_t deadline_ns;                                 /* the current poll hands over records until then */
	unsigned batch;                                       /* records since the clock was last read */
	struct pyebpf_py_offsets offsets[PYEBPF_MAX_OFFSETS]; /* registered in py_offsets */
	uint32_t noffsets;
	unsigned flush_chunk;            /* records an iterator's read hands over (flush_chunk()) */
	struct py_tstate_entry *tstates; /* sampler__index_threads' buffer (PY_TSTATES_MAX) */
	struct {
		uint32_t pid;
		uint64_t at_ns;
	} indexed[64]; /* when each process was last indexed on request (a ring) */
	unsigned nindexed;
	uint32_t *in_index; /* the processes with entries in py_tstate_index */
	size_t nin_index, in_index_cap;
};

static bool verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* A kernel function's BTF FUNC_PROTO, or NULL. */
static const struct btf_type *kfunc_proto(const struct btf *btf, const char *name)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);

	return id < 0 ? NULL : btf__type_by_id(btf, btf__type_by_id(btf, (__u32)id)->type);
}

/* Which of the task-work kfuncs this kernel has, by its prototype: 6.18's
 * _impl with five arguments, 7.x's without the suffix with four. */
static enum task_work_kfunc probe_task_work(const struct btf *btf)
{
	const struct btf_type *p = kfunc_proto(btf, "bpf_task_work_schedule_resume");

	if (p && btf_vlen(p) == 4)
		return TASK_WORK_V2;
	p = kfunc_proto(btf, "bpf_task_work_schedule_resume_impl");
	return p && btf_vlen(p) == 5 ? TASK_WORK_IMPL : TASK_WORK_NONE;
}

/* The name kallsyms gives finish_task_switch (compilers rename it:
 * finish_task_switch.isra.0), if kprobes can be made here. */
static bool probe_switch_done(char *name, size_t len)
{
	FILE *f;
	char line[256];
	bool found = false;

	if (access("/sys/bus/event_source/devices/kprobe/type", R_OK))
		return false;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char type, sym[200];

		if (sscanf(line, "%*s %c %199s", &type, sym) == 2 && (type == 't' || type == 'T') &&
		    !strncmp(sym, "finish_task_switch", 18) && (sym[18] == '\0' || sym[18] == '.')) {
			snprintf(name, len, "%s", sym);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/*
 * What the kernel offers the BPF programs, probed before loading them so
 * that a kernel gets one line naming what it lacks rather than a verifier
 * log; kernel_plan() decides what that costs. When the probes cannot run
 * (no permission), everything is assumed and the load says why.
 */
static void probe_kernel(struct kernel_features *k, bool off_cpu, char *switch_done, size_t len)
{
	struct btf *btf;

	*k = (struct kernel_features){ .btf = !access("/sys/kernel/btf/vmlinux", R_OK),
				       .ringbuf = true,
				       .bpf_loop = true,
				       .task_btf = true,
				       .task_pt_regs = true,
				       .task_storage = true };
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_ARRAY, NULL) == 1 &&
	    libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_PERF_EVENT, NULL) == 1) {
		k->ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) != 0;
		k->bpf_loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL) != 0;
		k->task_btf = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_get_current_task_btf, NULL) !=
			      0;
		k->task_pt_regs = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_task_pt_regs, NULL) != 0;
		k->task_storage = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) != 0;
	}
	btf = k->btf ? btf__load_vmlinux_btf() : NULL;
	if (btf) {
		k->task_work = probe_task_work(btf);
		k->task_from_pid = kfunc_proto(btf, "bpf_task_from_pid") != NULL;
		btf__free(btf);
	}
	/* kallsyms is 100,000 lines: read only when the kprobe may be wanted. */
	k->switch_done = off_cpu && (k->task_work == TASK_WORK_NONE || !k->bpf_loop || !k->task_btf) &&
			 probe_switch_done(switch_done, len);
}

/* Does this kernel let a program run at fentry of fn? Some refuse fentry
 * altogether (no ftrace direct calls, or a policy), with EPERM at load. */
static bool fentry_allowed(const char *fn)
{
	/* r0 = 0; exit */
	const struct bpf_insn insns[] = { { .code = 0xb7 }, { .code = 0x95 } };
	int id = libbpf_find_vmlinux_btf_id(fn, BPF_TRACE_FENTRY), fd, link;
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_TRACE_FENTRY);

	if (id < 0)
		return false;
	o.attach_btf_id = (uint32_t)id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "pyebpf_probe", "GPL", insns, 2, &o);
	if (fd < 0)
		return false;
	link = bpf_link_create(fd, 0, BPF_TRACE_FENTRY, NULL);
	if (link >= 0)
		close(link);
	close(fd);
	return link >= 0;
}

/*
 * Where --mode memory sees growth: at fentry of the function that maps a
 * new anonymous page in (Linux 6.3 on, and before), else (fentry refused)
 * at the tracepoint where it joins the LRU lists. NULL: none of them.
 */
static const char *memory_hook(void)
{
	static const char *const fentries[] = { "folio_add_new_anon_rmap", "page_add_new_anon_rmap" };

	for (size_t i = 0; i < sizeof(fentries) / sizeof(fentries[0]); i++)
		if (fentry_allowed(fentries[i]))
			return fentries[i];
	return libbpf_find_vmlinux_btf_id("mm_lru_insertion", BPF_TRACE_RAW_TP) >= 0 ? MEM_HOOK_LRU : NULL;
}

static int add_cgroups(struct sampler *s, const struct sampler_config *c)
{
	uint8_t one = 1;

	for (size_t i = 0; i < c->ncgroup_ids; i++)
		if (bpf_map__update_elem(s->skel->maps.target_cgroups, &c->cgroup_ids[i], sizeof(uint64_t), &one, 1,
					 BPF_ANY)) {
			err_msg("cannot add a cgroup to the targets: %s", strerror(errno));
			return -1;
		}
	return 0;
}

/* --comm NAME: keys are the kernel's task name, 16 bytes NUL-padded; a longer
 * name is what the kernel keeps of it, its first 15 bytes. */
static int add_comms(struct sampler *s, const struct sampler_config *c)
{
	uint8_t one = 1;

	for (size_t i = 0; i < c->ncomms; i++) {
		char key[PYEBPF_COMM_LEN] = { 0 };

		strncpy(key, c->comms[i], sizeof(key) - 1);
		if (bpf_map__update_elem(s->skel->maps.target_comms, key, sizeof(key), &one, 1, BPF_ANY)) {
			err_msg("cannot add the name '%s' to the targets: %s", c->comms[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

static bool getenv_flag(const char *name)
{
	const char *v = getenv(name);

	return v && !strcmp(v, "1");
}

/*
 * The skeleton of the default build, opened on the bytes of the build this
 * kernel takes: the builds have the same maps, programs and settings (the
 * Makefile checks), so one skeleton drives any of them.
 */
static struct sample_bpf *open_build(enum bpf_build b)
{
	struct sample_bpf *obj = calloc(1, sizeof(*obj));

	if (!obj)
		return NULL;
	if (sample_bpf__create_skeleton(obj))
		goto fail;
	if (b == BPF_BUILD_COMPAT)
		obj->skeleton->data = (void *)sample_bpf_compat__elf_bytes(&obj->skeleton->data_sz);
	else if (b == BPF_BUILD_TW2)
		obj->skeleton->data = (void *)sample_bpf_tw2__elf_bytes(&obj->skeleton->data_sz);
	if (bpf_object__open_skeleton(obj->skeleton, NULL))
		goto fail;
	return obj;
fail:
	sample_bpf__destroy(obj);
	return NULL;
}

/* The program memory_hook()'s hook runs; NULL without one. */
static struct bpf_program *mem_grow_prog(const struct sampler *s)
{
	if (!s->mem_hook)
		return NULL;
	return !strcmp(s->mem_hook, MEM_HOOK_LRU)                ? s->skel->progs.on_lru_add
	       : !strcmp(s->mem_hook, "folio_add_new_anon_rmap") ? s->skel->progs.on_anon_folio
								 : s->skel->progs.on_anon_page;
}

/*
 * Are the syscall tracepoints reachable? libbpf attaches them through the
 * tracing filesystem, at debugfs's tracing/ when it is there, else at
 * /sys/kernel/tracing; nothing is mounted at either on a fresh host.
 */
static bool syscall_tracepoints_mounted(void)
{
	const char *root = access("/sys/kernel/debug/tracing", F_OK) ? "/sys/kernel/tracing"
								     : "/sys/kernel/debug/tracing";
	char path[128];

	snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_munmap/id", root);
	return access(path, R_OK) == 0;
}

/* How many syscall hooks memory mode attaches. */
static size_t mem_syscall_progs(const struct sampler *s)
{
	return s->mem_raw_syscalls ? 2 : MEM_SYSCALL_PROGS;
}

/* The per-syscall tracepoints' program i of MEM_SYSCALL_PROGS: each call's entry and exit. */
static struct bpf_program *mem_tracepoint_prog(const struct sample_bpf *skel, size_t i)
{
	struct bpf_program *v[MEM_SYSCALL_PROGS] = {
		skel->progs.on_munmap, skel->progs.on_munmap_done, skel->progs.on_madvise, skel->progs.on_madvise_done,
		skel->progs.on_brk,    skel->progs.on_brk_done,    skel->progs.on_mremap,  skel->progs.on_mremap_done,
	};

	return v[i];
}

/* The syscall hook i of mem_syscall_progs(). */
static struct bpf_program *mem_syscall_prog(const struct sampler *s, size_t i)
{
	if (s->mem_raw_syscalls)
		return i ? s->skel->progs.on_mem_call_done : s->skel->progs.on_mem_call;
	return mem_tracepoint_prog(s->skel, i);
}

/*
 * No tracing filesystem mounted: the syscalls' own tracepoints by id, the
 * ids read through a tracefs mounted in a private mount namespace
 * (system/tracefs_ids.h), which costs the host's other syscalls nothing;
 * where that cannot be done (no right to mount), the raw tracepoints of
 * every syscall, which need no filesystem and cost each syscall a little.
 */
static void choose_unmounted_syscall_hooks(struct sampler *s)
{
	const char *events[MEM_SYSCALL_PROGS];

	for (size_t i = 0; i < MEM_SYSCALL_PROGS; i++)
		events[i] = bpf_program__section_name(mem_tracepoint_prog(s->skel, i)) + strlen("tracepoint/");
	if (!tracefs_event_ids(events, MEM_SYSCALL_PROGS, s->mem_tp_ids)) {
		s->mem_tp_by_id = true;
		return;
	}
	fprintf(stderr,
		"pyebpf: no tracefs is mounted and none could be mounted privately (%s): memory given back is "
		"seen at the raw syscall tracepoints, which cost every syscall on the machine a little\n",
		strerror(errno));
	s->mem_raw_syscalls = true;
}

/* A tracepoint's program attached by the tracepoint's id (what libbpf does once it has read it). */
static struct bpf_link *attach_tracepoint_id(struct bpf_program *p, uint64_t id)
{
	struct perf_event_attr attr = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(attr), .config = id };
	int fd = (int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	struct bpf_link *link;

	if (fd < 0)
		return NULL;
	link = bpf_program__attach_perf_event(p, fd); /* the link closes fd */
	if (!link) {
		int err = errno;

		close(fd);
		errno = err;
	}
	return link;
}

/* Loads the programs for s->plan; a refusal is said unless quiet (a try
 * with a way back: the caller says what it then does). */
static int load(struct sampler *s, const struct sampler_config *c, bool quiet)
{
	uint32_t slots, ring = ringbuf_bytes(c, s->ncpus_possible);
	int err;

	s->skel = open_build(s->plan.build);
	if (!s->skel) {
		err_msg("cannot open the BPF sampler: %s", strerror(errno));
		return -1;
	}
	s->skel->rodata->self_pid = (uint32_t)getpid();
	s->skel->rodata->filter_pids = !c->all;
	s->skel->rodata->follow_forks = c->follow_forks;
	s->skel->rodata->filter_comms = c->ncomms > 0;
	s->skel->rodata->kernel_stacks = c->kernel_stacks;
	s->skel->rodata->filter_cgroups = c->ncgroup_ids > 0;
	s->skel->rodata->ustack_copy = c->ustack_copy;
	s->skel->rodata->flush_slot = (uint32_t)s->ncpus_possible;
	s->skel->rodata->offcpu_slot_base = (uint32_t)s->ncpus_possible + 1;
	s->skel->rodata->offcpu_empty_hook = getenv_flag("PYEBPF_BENCH_EMPTY_HOOK");
	bpf_map__set_max_entries(s->skel->maps.events, ring);
	s->flush_chunk = flush_chunk(c, ring);
	/* Sample buffers: one per CPU, the stop flush's, and with the off-CPU
	 * hooks one more per CPU (see bpf/shared.bpf.h). */
	slots = (uint32_t)s->ncpus_possible * (c->off_cpu ? 2 : 1) + 1;
	bpf_map__set_max_entries(s->skel->maps.scratch, slots);
	bpf_map__set_max_entries(s->skel->maps.py_scratch, slots);
	s->skel->rodata->offcpu_task_work = s->plan.wall == WALL_TASK_WORK;
	s->skel->rodata->offcpu_at_sys_exit = s->plan.wall == WALL_SYS_EXIT;
	/* Programs of a mode not asked for are not even verified, and maps only
	 * they use not made (task storage does not exist before 5.11). */
	bpf_program__set_autoload(s->skel->progs.on_sample, c->on_cpu);
	bpf_program__set_autoload(s->skel->progs.on_switch, c->off_cpu);
	bpf_program__set_autoload(s->skel->progs.on_switch_done, s->plan.wall == WALL_KPROBE);
	bpf_program__set_autoload(s->skel->progs.on_sys_exit, c->off_cpu && s->plan.wall == WALL_SYS_EXIT);
	bpf_program__set_autoload(s->skel->progs.flush_offcpu, c->off_cpu && s->plan.flush);
	bpf_program__set_autoload(s->skel->progs.dump_threads, c->dump);
	s->skel->rodata->mem_sample_bytes = c->mem_sample_bytes;
	s->mem_grow = mem_grow_prog(s); /* NULL outside memory mode */
	bpf_program__set_autoload(s->skel->progs.on_anon_folio, s->skel->progs.on_anon_folio == s->mem_grow);
	bpf_program__set_autoload(s->skel->progs.on_anon_page, s->skel->progs.on_anon_page == s->mem_grow);
	bpf_program__set_autoload(s->skel->progs.on_lru_add, s->skel->progs.on_lru_add == s->mem_grow);
	if (c->mem_sample_bytes && !s->mem_tp_by_id && !s->mem_raw_syscalls && !syscall_tracepoints_mounted())
		choose_unmounted_syscall_hooks(s);
	bpf_program__set_autoload(s->skel->progs.on_mem_call, s->mem_raw_syscalls);
	bpf_program__set_autoload(s->skel->progs.on_mem_call_done, s->mem_raw_syscalls);
	for (size_t i = 0; i < MEM_SYSCALL_PROGS; i++)
		bpf_program__set_autoload(mem_tracepoint_prog(s->skel, i), c->mem_sample_bytes && !s->mem_raw_syscalls);
	bpf_map__set_autocreate(s->skel->maps.mem_calls, c->mem_sample_bytes);
	bpf_map__set_autocreate(s->skel->maps.mem_left, c->mem_sample_bytes);
	bpf_map__set_autocreate(s->skel->maps.off_tasks, c->off_cpu && s->plan.build != BPF_BUILD_COMPAT);
	bpf_map__set_autocreate(s->skel->maps.task_targets, c->off_cpu && s->plan.build != BPF_BUILD_COMPAT);
	bpf_map__set_autocreate(s->skel->maps.off_since_by_tid, c->off_cpu && s->plan.build == BPF_BUILD_COMPAT);
	bpf_map__set_autocreate(s->skel->maps.send_works, c->off_cpu && s->plan.wall == WALL_TASK_WORK);
	bpf_map__set_autocreate(s->skel->maps.slot_busy, c->off_cpu);
	bpf_map__set_autocreate(s->skel->maps.handoff, c->off_cpu && s->plan.wall == WALL_KPROBE);

	err = sample_bpf__load(s->skel);
	if (err) {
		if (!quiet)
			err_msg("cannot load the BPF sampler: %s%s", strerror(-err),
				c->verbose ? "" : " (run with -v for the verifier log)");
		return -1;
	}
	return add_cgroups(s, c) || add_comms(s, c) ? -1 : 0;
}

/* A drain that never ends while the producer outruns the consumer would
 * never let the loop see the clock or a stop signal: every poll hands over
 * records for at most POLL_BUDGET_NS, then returns; the rest waits for the
 * next poll (or is counted as lost by BPF when the ring fills). */
#define POLL_BUDGET_NS (20 * 1000000ULL)
#define CLOCK_EVERY 64 /* records between looks at the clock */
#define OVER_BUDGET (-EAGAIN)

static int bounded_event(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;

	s->fn(s->ctx, data, size);
	if (++s->batch < CLOCK_EVERY)
		return 0;
	s->batch = 0;
	/* The record is consumed either way: stopping here loses nothing. */
	return now_ns() >= s->deadline_ns ? OVER_BUDGET : 0;
}

static int attach_switch(struct sampler *s)
{
	s->switch_link = bpf_program__attach(s->skel->progs.on_switch);
	if (!s->switch_link) {
		err_msg("cannot attach the off-CPU tracepoint (sched_switch): %s", strerror(errno));
		return -1;
	}
	if (s->plan.wall == WALL_SYS_EXIT) {
		s->switch_done_link = bpf_program__attach(s->skel->progs.on_sys_exit);
		if (!s->switch_done_link) {
			err_msg("cannot attach the off-CPU tracepoint (sys_exit): %s", strerror(errno));
			return -1;
		}
		return 0;
	}
	if (s->plan.wall != WALL_KPROBE)
		return 0;
	s->switch_done_link = bpf_program__attach_kprobe(s->skel->progs.on_switch_done, false, s->switch_done);
	if (!s->switch_done_link) {
		err_msg("cannot attach the off-CPU kprobe (%s): %s", s->switch_done, strerror(errno));
		return -1;
	}
	return 0;
}

/* The program of mem_links[i]: the growth hook, then the syscalls'. */
static struct bpf_program *mem_link_prog(const struct sampler *s, size_t i)
{
	return i ? mem_syscall_prog(s, i - 1) : s->mem_grow;
}

/* The growth hook, then the syscalls. */
static int attach_memory(struct sampler *s)
{
	s->mem_links[0] = bpf_program__attach(s->mem_grow);
	if (!s->mem_links[0]) {
		err_msg("--mode memory: cannot attach to %s: %s", s->mem_hook, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < mem_syscall_progs(s); i++) {
		struct bpf_program *p = mem_syscall_prog(s, i);

		s->mem_links[i + 1] = s->mem_tp_by_id ? attach_tracepoint_id(p, s->mem_tp_ids[i])
						      : bpf_program__attach(p);
		if (!s->mem_links[i + 1]) {
			err_msg("--mode memory: cannot attach %s: %s (the kernel's %s)", bpf_program__section_name(p),
				strerror(errno),
				s->mem_raw_syscalls ? "raw syscall tracepoints, CONFIG_HAVE_SYSCALL_TRACEPOINTS"
						    : "syscall tracepoints, CONFIG_FTRACE_SYSCALLS");
			return -1;
		}
	}
	return 0;
}

static int attach(struct sampler *s, bool dump)
{
	if (dump)
		goto ring;
	s->fork_link = bpf_program__attach(s->skel->progs.on_fork);
	s->exec_link = bpf_program__attach(s->skel->progs.on_exec);
	s->exit_link = bpf_program__attach(s->skel->progs.on_exit);
	if (!s->fork_link || !s->exec_link || !s->exit_link) {
		err_msg("cannot attach the process tracepoints: %s", strerror(errno));
		return -1;
	}
	if (s->off_cpu && attach_switch(s))
		return -1;
	if (s->mem_hook && attach_memory(s))
		return -1;
ring:
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), bounded_event, s, NULL);
	if (!s->rb) {
		err_msg("cannot open the ring buffer: %s", strerror(errno));
		return -1;
	}
	/*
	 * Run-time statistics of our programs, for the cost line of the summary.
	 * They time every run of every BPF program on the machine (two clock
	 * reads): nothing per timer sample, but ~70 ns on each context switch
	 * for the off-CPU hook, so there only on request (PYEBPF_BPF_STATS=1).
	 */
	s->stats_fd = (s->off_cpu || s->mem_hook) && !getenv_flag("PYEBPF_BPF_STATS")
			      ? -1
			      : bpf_enable_stats(BPF_STATS_RUN_TIME);
	return 0;
}

struct sampler *sampler__new(const struct sampler_config *c, sampler_event_fn fn, void *ctx)
{
	struct sampler *s = xcalloc(1, sizeof(*s));

	s->stats_fd = -1;
	verbose = c->verbose;
	libbpf_set_print(libbpf_print);
	s->ncpus_possible = libbpf_num_possible_cpus();
	if (s->ncpus_possible <= 0) {
		err_msg("cannot read the possible CPUs: %s", strerror(-s->ncpus_possible));
		goto fail;
	}
	s->fn = fn;
	s->ctx = ctx;
	s->on_cpu = c->on_cpu;
	s->off_cpu = c->off_cpu;
	struct kernel_features k;
	char why[256];

	probe_kernel(&k, c->off_cpu, s->switch_done, sizeof(s->switch_done));
	/* Tests run the compat build on a kernel that has everything. */
	if (getenv_flag("PYEBPF_TEST_COMPAT_BUILD"))
		k.bpf_loop = false;
	if (kernel_plan(&k, c->off_cpu, c->ustack_copy > 0, &s->plan, why, sizeof(why))) {
		err_msg("%s", why);
		goto fail;
	}
	if (c->mem_sample_bytes && !(s->mem_hook = memory_hook())) {
		err_msg("--mode memory needs fentry on folio_add_new_anon_rmap (Linux 6.3 on) or "
			"page_add_new_anon_rmap, or the tracepoint mm_lru_insertion, in the kernel's BTF: this kernel "
			"has none of them");
		goto fail;
	}
	if (c->dump && (!k.task_from_pid || s->plan.build == BPF_BUILD_COMPAT)) {
		err_msg("dump needs a sleepable task iterator and bpf_task_from_pid (Linux 6.2 or later)");
		goto fail;
	}
	/* A kernel whose verifier refuses the task work (6.18.44 does, where
	 * its first releases did not; the probe of the kfunc's prototype cannot
	 * tell) sends its off-CPU samples from the kprobe, as before 6.18. */
	if (load(s, c, s->plan.wall == WALL_TASK_WORK)) {
		if (s->plan.wall != WALL_TASK_WORK)
			goto fail;
		sample_bpf__destroy(s->skel);
		s->skel = NULL;
		k.task_work_refused = true;
		k.switch_done = probe_switch_done(s->switch_done, sizeof(s->switch_done));
		if (kernel_plan(&k, c->off_cpu, c->ustack_copy > 0, &s->plan, why, sizeof(why))) {
			err_msg("this kernel's verifier refuses the task work of bpf_task_work_schedule_resume, and %s",
				why);
			goto fail;
		}
		if (load(s, c, false))
			goto fail;
	}
	if (attach(s, c->dump))
		goto fail;
	return s;
fail:
	sampler__free(s);
	return NULL;
}

static void *link_destroy(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

/*
 * Each tracepoint link's detach waits for the kernel's RCU grace period
 * (70-100 ms here): memory mode's nine, one after the other, held the end
 * of every recording back by 0.7 s. Detached together, they wait once.
 */
static void links_destroy_together(struct bpf_link **links, size_t n)
{
	pthread_t t[16];
	bool started[16] = { false };

	for (size_t i = 0; i < n && i < 16; i++)
		if (links[i])
			started[i] = !pthread_create(&t[i], NULL, link_destroy, links[i]);
	for (size_t i = 0; i < n; i++) {
		if (i < 16 && started[i])
			pthread_join(t[i], NULL);
		else
			bpf_link__destroy(links[i]); /* a thread not had: here (NULL is nothing) */
		links[i] = NULL;
	}
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	sampler__stop(s);
	free(s->perf_links);
	free(s->perf_fds);
	free(s->tstates);
	free(s->in_index);
	bpf_link__destroy(s->fork_link);
	bpf_link__destroy(s->exec_link);
	bpf_link__destroy(s->exit_link);
	bpf_link__destroy(s->switch_link);
	bpf_link__destroy(s->switch_done_link);
	links_destroy_together(s->mem_links, sizeof(s->mem_links) / sizeof(s->mem_links[0]));
	ring_buffer__free(s->rb);
	sample_bpf__destroy(s->skel);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	free(s);
}

int sampler__add_target(struct sampler *s, uint32_t pid)
{
	uint8_t one = 1;

	if (bpf_map__update_elem(s->skel->maps.targets, &pid, sizeof(pid), &one, 1, BPF_ANY)) {
		err_msg("cannot add pid %u to the targets: %s", pid, strerror(errno));
		return -1;
	}
	/* After the insert: tasks' cached "not a target" answers are older now
	 * (bpf/offcpu.bpf.h). A bump lost to the BPF side's own is still a bump. */
	s->skel->bss->targets_gen++;
	return 0;
}

int sampler__swap_cgroup(struct sampler *s, uint64_t old_id, uint64_t new_id)
{
	uint8_t one = 1;

	/* Out first: the map has room for a fixed number. A gone cgroup's id that
	 * is not there (ENOENT) is what was wanted anyway. */
	if (old_id && bpf_map__delete_elem(s->skel->maps.target_cgroups, &old_id, sizeof(old_id), 0) &&
	    errno != ENOENT) {
		err_msg("cannot take a cgroup out of the targets: %s", strerror(errno));
		return -1;
	}
	if (!new_id)
		return 0;
	if (bpf_map__update_elem(s->skel->maps.target_cgroups, &new_id, sizeof(new_id), &one, 1, BPF_ANY)) {
		err_msg("cannot add a cgroup to the targets: %s", strerror(errno));
		return -1;
	}
	/* Tasks of the new cgroup asked before it was a target kept "no" with it (bpf/offcpu.bpf.h). */
	s->skel->bss->targets_gen++;
	return 0;
}

bool sampler__targets_alive(struct sampler *s)
{
	uint32_t key, next, *prev = NULL;

	/* BPF drops a target at its exit; one found here may still have died
	 * before it was added, so each is asked of /proc. */
	while (!bpf_map__get_next_key(s->skel->maps.targets, prev, &next, sizeof(next))) {
		if (targets_alive(&next, 1))
			return true;
		key = next;
		prev = &key;
	}
	return false;
}

static void close_perf(struct sampler *s)
{
	jitter__stop(s->jitter); /* it holds the events' fds */
	s->jitter = NULL;
	for (int i = 0; i < s->nperf; i++)
		bpf_link__destroy(s->perf_links[i]); /* also closes the perf event */
	s->nperf = 0;
}

static int cpus_counted(const bool *online)
{
	int n = 0;

	for (int cpu = 0; cpu < MAX_CPUS; cpu++)
		n += online[cpu];
	return n;
}

/* A cpu-clock event on one CPU with the sampler attached; 1: the CPU went
 * offline. Its period is in ns (what the kernel makes of a cpu-clock's
 * frequency), so that record/jitter.c can set it. */
static int open_cpu(struct sampler *s, int cpu, uint64_t freq)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = 1000000000ULL / freq,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0) {
		if (errno == ENODEV) /* went offline meanwhile */
			return 1;
		err_msg("cannot open a cpu-clock perf event on CPU %d: %s", cpu, strerror(errno));
		return -1;
	}
	s->perf_links[s->nperf] = bpf_program__attach_perf_event(s->skel->progs.on_sample, fd);
	if (!s->perf_links[s->nperf]) {
		err_msg("cannot attach the sampler to CPU %d: %s", cpu, strerror(errno));
		close(fd);
		return -1;
	}
	s->perf_fds[s->nperf++] = fd;
	return 0;
}

int sampler__start(struct sampler *s, uint64_t freq)
{
	static bool online[MAX_CPUS];
	int err = cpus__online(online, MAX_CPUS);

	if (err) {
		err_msg("cannot read the online CPUs: %s", strerror(-err));
		return -1;
	}
	close_perf(s); /* started again after --rate-limit lowered the frequency */
	/* A sample whose BPF outlasts this makes the timer skip ticks (counted). */
	s->skel->bss->timer_period_ns = 1000000000ULL / freq;
	free(s->perf_links);
	free(s->perf_fds);
	s->perf_links = xcalloc(MAX_CPUS, sizeof(*s->perf_links));
	s->perf_fds = xcalloc(MAX_CPUS, sizeof(*s->perf_fds));

	for (int cpu = 0; cpu < MAX_CPUS && s->on_cpu; cpu++)
		if (online[cpu] && open_cpu(s, cpu, freq) < 0)
			return -1;
	s->ncpus = s->on_cpu ? s->nperf : cpus_counted(online);
	s->jitter = jitter__start(s->perf_fds, s->nperf, freq);
	if (s->off_cpu) {
		s->skel->bss->offcpu_freq = (uint32_t)freq;
		/* bpf_ktime_get_ns is CLOCK_MONOTONIC, as now_ns() is. */
		if (!s->skel->bss->offcpu_start_ns)
			__atomic_store_n(&s->skel->bss->offcpu_start_ns, now_ns(), __ATOMIC_RELEASE);
	}
	return 0;
}

/* The program runs as the iterator is read, and writes a byte into it for
 * each record it sends (flush_chunk()). */
static int run_iter(struct sampler *s, struct bpf_program *p)
{
	struct bpf_link *link = bpf_program__attach_iter(p, NULL);
	int fd = link ? bpf_iter_create(bpf_link__fd(link)) : -1;
	char buf[FLUSH_CHUNK_MAX];

	if (fd >= 0) {
		while (read(fd, buf, s->flush_chunk) > 0)
			sampler__drain(s);
		close(fd);
	}
	bpf_link__destroy(link);
	return fd < 0 ? -1 : 0;
}

int sampler__dump(struct sampler *s, uint32_t pid)
{
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo;
	struct bpf_link *link;
	char buf[FLUSH_CHUNK_MAX];
	int fd;

	s->skel->bss->dump_pid = pid;
	/* Only pid's threads (6.1+); an older kernel walks every task and the
	 * program keeps pid's. */
	memset(&linfo, 0, sizeof(linfo));
	linfo.task.pid = pid;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(s->skel->progs.dump_threads, &opts);
	if (!link)
		link = bpf_program__attach_iter(s->skel->progs.dump_threads, NULL);
	fd = link ? bpf_iter_create(bpf_link__fd(link)) : -1;
	if (fd < 0) {
		err_msg("cannot run the dump iterator: %s", strerror(errno));
		bpf_link__destroy(link);
		return -1;
	}
	while (read(fd, buf, s->flush_chunk) > 0)
		sampler__drain(s);
	close(fd);
	bpf_link__destroy(link);
	return sampler__drain(s) < 0 ? -1 : 0;
}

static int read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return procmem_read(*(const pid_t *)ctx, addr, buf, len);
}

/*
 * A process with fewer thread states than this is walked, never indexed: a
 * walk of a short list costs less than keeping its entries, and most
 * processes (every one registered, on a whole machine) never touch the map.
 */
#define INDEX_MIN_THREADS 256

/* pid's entries of the thread index: threads that exited leave none behind. */
static void forget_indexed(struct sampler *s, uint32_t pid)
{
	struct pyebpf_tstate_key key, next, *gone = NULL;
	size_t n = 0, cap = 0, at;
	void *prev = NULL;

	for (at = 0; at < s->nin_index && s->in_index[at] != pid; at++)
		;
	if (at == s->nin_index) /* nothing of pid's in the map: no scan */
		return;
	s->in_index[at] = s->in_index[--s->nin_index];
	while (!bpf_map__get_next_key(s->skel->maps.py_tstate_index, prev, &next, sizeof(next))) {
		if (next.pid == pid) {
			xgrow(&gone, &cap, n + 1, sizeof(*gone));
			gone[n++] = next;
		}
		key = next;
		prev = &key;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map__delete_elem(s->skel->maps.py_tstate_index, &gone[i], sizeof(gone[i]), 0);
	free(gone);
}

int sampler__index_threads(struct sampler *s, uint32_t pid)
{
	struct pyebpf_py_proc pp;
	pid_t target = (pid_t)pid;
	long n;

	if (bpf_map__lookup_elem(s->skel->maps.py_procs, &pid, sizeof(pid), &pp, sizeof(pp), 0) ||
	    pp.offsets_id >= s->noffsets)
		return -1;
	if (!s->tstates && !(s->tstates = calloc(PY_TSTATES_MAX, sizeof(*s->tstates))))
		return -1;
	n = py_thread_states(read_target, &target, pp.interp_head_addr, &s->offsets[pp.offsets_id], s->tstates,
			     PY_TSTATES_MAX);
	forget_indexed(s, pid);
	if (n < INDEX_MIN_THREADS)
		return n < 0 ? -1 : 0;
	xgrow(&s->in_index, &s->in_index_cap, s->nin_index + 1, sizeof(*s->in_index));
	s->in_index[s->nin_index++] = pid;
	for (long i = 0; i < n; i++) {
		struct pyebpf_tstate_key key = { .pid = pid, .thread_id = s->tstates[i].thread_id };

		bpf_map__update_elem(s->skel->maps.py_tstate_index, &key, sizeof(key), &s->tstates[i].tstate,
				     sizeof(uint64_t), BPF_ANY);
	}
	return n < 0 ? -1 : 0;
}

void sampler__thread_beyond_walk(struct sampler *s, uint32_t pid)
{
	uint64_t now = now_ns();
	unsigned i;

	/* At most once a second per process: its threads that start later
	 * are found by the next request. */
	for (i = 0; i < sizeof(s->indexed) / sizeof(s->indexed[0]); i++)
		if (s->indexed[i].pid == pid && now - s->indexed[i].at_ns < 1000000000ULL)
			return;
	i = s->nindexed++ % (sizeof(s->indexed) / sizeof(s->indexed[0]));
	s->indexed[i].pid = pid;
	s->indexed[i].at_ns = now;
	sampler__index_threads(s, pid);
}

/* Every registered Python process's threads, indexed (before the flush). */
static void index_all_threads(struct sampler *s)
{
	uint32_t key, next;
	void *prev = NULL;

	while (!bpf_map__get_next_key(s->skel->maps.py_procs, prev, &next, sizeof(next))) {
		sampler__index_threads(s, next);
		key = next;
		prev = &key;
	}
}

/*
 * Off-CPU time still running at the stop: the flush iterator counts it.
 * First it names the processes of blocked threads never sampled; the
 * ring buffer is drained so that ingest registers the Python ones (through
 * sampler__python), whose Python stacks the second pass can then read.
 */
static void flush_offcpu(struct sampler *s)
{
	if (!s->off_cpu || !s->skel || !s->skel->bss || !s->skel->bss->offcpu_start_ns || s->skel->bss->offcpu_stop_ns)
		return;
	__atomic_store_n(&s->skel->bss->offcpu_stop_ns, now_ns(), __ATOMIC_RELEASE);
	if (!s->plan.flush) /* no bpf_task_from_pid: sampler__kernel_notes() said so */
		return;
	s->skel->bss->flush_announce = 1;
	if (run_iter(s, s->skel->progs.flush_offcpu) == 0) {
		sampler__drain(s);
		/* Each blocked thread finds its thread state in one lookup, not
		 * by walking its process's thread list again. */
		index_all_threads(s);
		s->skel->bss->flush_announce = 0;
		if (run_iter(s, s->skel->progs.flush_offcpu) == 0)
			return;
	}
	err_msg("cannot count the off-CPU time still running at the stop: %s", strerror(errno));
}

void sampler__stop(struct sampler *s)
{
	close_perf(s);
	flush_offcpu(s);
}

const char *sampler__mem_hook(const struct sampler *s)
{
	return s->mem_hook;
}

int sampler__ncpus(const struct sampler *s)
{
	return s->ncpus;
}

const struct kernel_plan *sampler__plan(const struct sampler *s)
{
	return &s->plan;
}

/* The py_offsets entry of a layout, registering it the first time. */
static int offsets_id(struct sampler *s, const struct pyebpf_py_offsets *o, uint32_t *id)
{
	for (uint32_t i = 0; i < s->noffsets; i++)
		if (!memcmp(&s->offsets[i], o, sizeof(*o))) {
			*id = i;
			return 0;
		}
	if (s->noffsets == PYEBPF_MAX_OFFSETS ||
	    bpf_map__update_elem(s->skel->maps.py_offsets, &s->noffsets, sizeof(uint32_t), o, sizeof(*o), BPF_ANY))
		return -1;
	s->offsets[s->noffsets] = *o;
	*id = s->noffsets++;
	return 0;
}

void sampler__python(struct sampler *s, uint32_t pid, const struct py_interp *in)
{
	struct pyebpf_py_proc v = { 0 };
	struct pyebpf_py_offsets o;

	if (!in) {
		sampler__forget(s, pid);
		return;
	}
	/* 3.11–3.13 keep no running task in the thread state: BPF reads the
	 * coroutine a task's step runs instead, where asyncio's layout is known. */
	o = in->layout.bpf;
	if (!o.tstate_running_task && in->layout.asyncio.task_coro)
		o.gen_iframe = in->layout.asyncio.gi_iframe;
	if (offsets_id(s, &o, &v.offsets_id)) {
		err_msg("pid %u: too many distinct CPython layouts, native frames only", pid);
		return;
	}
	v.interp_head_addr = in->interp_head_addr;
	v.gil_addr = in->gil_addr;
	v.version_hex = in->version_hex;
	v.tp_to_self = in->tp_to_self;
	if (bpf_map__update_elem(s->skel->maps.py_procs, &pid, sizeof(pid), &v, sizeof(v), BPF_ANY)) {
		err_msg("pid %u: cannot register the Python process: %s", pid, strerror(errno));
		return;
	}
	/* A process found with thousands of threads already: the ones a walk
	 * does not reach have their Python stacks from the first sample. */
	sampler__index_threads(s, pid);
}

void sampler__forget(struct sampler *s, uint32_t pid)
{
	bpf_map__delete_elem(s->skel->maps.py_procs, &pid, sizeof(pid), 0);
	bpf_map__delete_elem(s->skel->maps.py_ctx, &pid, sizeof(pid), 0);
}

void sampler__span_known(struct sampler *s, uint32_t pid, uint64_t span, uint32_t gen)
{
	struct pyebpf_span_key k = { .pid = pid, .span = span };

	/* A full table evicts its oldest (LRU): nothing to say when it fails,
	 * BPF reads the span whole, as before. */
	bpf_map__update_elem(s->skel->maps.py_spans_known, &k, sizeof(k), &gen, sizeof(gen), BPF_ANY);
}

void sampler__requests(struct sampler *s, uint32_t pid, const struct pyebpf_py_ctx *c)
{
	if (bpf_map__update_elem(s->skel->maps.py_ctx, &pid, sizeof(pid), c, sizeof(*c), BPF_ANY))
		err_msg("pid %u: cannot tell BPF where its requests are: %s", pid, strerror(errno));
}

int sampler__poll(struct sampler *s, int timeout_ms)
{
	int err;

	s->deadline_ns = now_ns() + POLL_BUDGET_NS;
	s->batch = 0;
	/* Samples arrive without wake-ups (see bpf/shared.bpf.h): drain whatever
	 * is there on every tick, woken or not. */
	err = ring_buffer__poll(s->rb, timeout_ms);
	if (err >= 0 || err == -EINTR)
		err = ring_buffer__consume(s->rb);
	if (err < 0 && err != -EINTR && err != OVER_BUDGET) {
		err_msg("reading the ring buffer failed: %s", strerror(-err));
		return -1;
	}
	return 0;
}

int sampler__drain(struct sampler *s)
{
	int err;

	/* Sampling has stopped: what is left is finite (at most the ring). */
	do {
		s->deadline_ns = now_ns() + POLL_BUDGET_NS;
		err = ring_buffer__consume(s->rb);
	} while (err == OVER_BUDGET);
	return err < 0 ? err : 0;
}

void sampler__counters(const struct sampler *s, uint64_t *totals)
{
	uint64_t *vals = xcalloc((size_t)s->ncpus_possible, sizeof(*vals));

	for (uint32_t i = 0; i < PYEBPF_CNT__COUNT; i++) {
		totals[i] = 0;
		if (bpf_map__lookup_elem(s->skel->maps.counters, &i, sizeof(i), vals,
					 sizeof(*vals) * (size_t)s->ncpus_possible, 0))
			continue;
		for (int c = 0; c < s->ncpus_possible; c++)
			totals[i] += vals[c];
	}
	free(vals);
}

static int prog_stats(const struct sampler *s, struct bpf_program *p, struct bpf_prog_info *info)
{
	uint32_t len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	if (s->stats_fd < 0 || bpf_program__fd(p) < 0 || bpf_obj_get_info_by_fd(bpf_program__fd(p), info, &len))
		return -1;
	return 0;
}

int sampler__mem_runs(const struct sampler *s, uint64_t *runs, uint64_t *run_ns)
{
	struct bpf_prog_info info;

	*runs = *run_ns = 0;
	for (size_t i = 0; i < sizeof(s->mem_links) / sizeof(s->mem_links[0]) && s->mem_links[i]; i++) {
		if (prog_stats(s, mem_link_prog(s, i), &info))
			return -1;
		*runs += i ? 0 : info.run_cnt; /* the growth hook's runs; every program's time */
		*run_ns += info.run_time_ns;
	}
	return s->mem_links[0] ? 0 : -1;
}

int sampler__sample_runs(const struct sampler *s, uint64_t *runs, uint64_t *run_ns)
{
	struct bpf_prog_info info;

	if (prog_stats(s, s->skel->progs.on_sample, &info))
		return -1;
	*runs = info.run_cnt;
	*run_ns = info.run_time_ns;
	return 0;
}

int sampler__switch_stats(const struct sampler *s, uint64_t *runs, uint64_t *run_ns)
{
	struct bpf_prog_info sw, done;

	if (!s->off_cpu || prog_stats(s, s->skel->progs.on_switch, &sw))
		return -1;
	*runs = sw.run_cnt;
	*run_ns = sw.run_time_ns;
	/* The kprobe path runs a second program at every switch: its time is
	 * the hook's too. */
	if (s->plan.wall == WALL_KPROBE && !prog_stats(s, s->skel->progs.on_switch_done, &done))
		*run_ns += done.run_time_ns;
	return 0;
}
