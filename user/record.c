// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `pyebpf record`: open → configure → load → attach → poll → stop → write.
 * Every sample is symbolized as it arrives (the process may be gone at the
 * end); the output file is written once, after the ring buffer is drained.
 */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgroups.h"
#include "cpus.h"
#include "formats.h"
#include "kallsyms.h"
#include "native/stack.h"
#include "outfile.h"
#include "procs.h"
#include "profile.h"
#include "pyebpf.h"
#include "python/symbolize.h"
#include "python/threadname.h"
#include "record_args.h"
#include "rotation.h"
#include "sample.skel.h"
#include "threads.h"
#include "util.h"
#include "write/pprof.h"

#define MAX_CPUS 4096
#define RINGBUF_BYTES (16u << 20)
#define STATUS_INTERVAL_NS (500 * 1000000ULL)
#define POLL_MS 50 /* the longest a sample waits to be named */

static const char *const counter_names[PYEBPF_CNT__COUNT] = {
	[PYEBPF_CNT_SAMPLES] = "samples sent",
	[PYEBPF_CNT_RB_FULL] = "samples lost: ring buffer full",
	[PYEBPF_CNT_KSTACK_ERR] = "kernel stacks unreadable",
	[PYEBPF_CNT_USTACK_ERR] = "user stacks unreadable",
	[PYEBPF_CNT_SCRATCH_ERR] = "samples lost: no scratch buffer",
	[PYEBPF_CNT_TARGETS_FULL] = "child processes not followed: target map full",
	[PYEBPF_CNT_PROC_RB_FULL] = "exec/exit events lost: ring buffer full",
	[PYEBPF_CNT_PY_NO_TSTATE] = "samples of Python processes in threads without a Python thread state",
	[PYEBPF_CNT_PY_READ_INTERP] = "Python interpreter state unreadable",
	[PYEBPF_CNT_PY_READ_FRAME] = "Python stacks cut short: a frame was unreadable",
	[PYEBPF_CNT_PY_TRUNCATED] = "Python stacks deeper than 1024 frames (marked [truncated])",
	[PYEBPF_CNT_PY_NO_OFFSETS] = "Python samples without offsets",
	[PYEBPF_CNT_USTACK_COPY_ERR] = "user stacks not copied (--native)",
};

struct recorder {
	struct record_opts opts;
	struct sample_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **perf_links;
	int nperf;
	struct bpf_link *fork_link, *exec_link, *exit_link;
	int stats_fd;
	struct kallsyms *ksyms;
	struct profile *prof;
	struct procs *procs;
	struct pyprocs *py;
	struct threads *threads;
	struct native_stacks *native; /* --native */
	uint64_t filtered; /* samples left out by --gil / --exclude-thread */
	struct pyebpf_py_offsets offsets[PYEBPF_MAX_OFFSETS]; /* registered in py_offsets */
	uint32_t noffsets;
	struct outfile out;
	pid_t child;
	int child_status;
	uint64_t received, bad_events;
	uint64_t start_ns;
	int64_t start_epoch_ns; /* wall clock at start, for pprof's time_nanos */
	uint64_t elapsed_ns;
	double setup_cpu; /* seconds of our CPU before sampling began */
	int ncpus;
	uint64_t *cgroup_ids; /* --cgroup / --container, resolved */
	size_t ncgroup_ids;
	/* --continuous: the interval being recorded */
	uint64_t interval_start_ns;   /* monotonic; sample times are relative to it */
	int64_t interval_epoch_ns;
	double interval_cpu;          /* own CPU seconds when it began */
	uint64_t seq, files_written, write_failures;
};

static volatile sig_atomic_t exiting;
static volatile sig_atomic_t flush_now; /* SIGHUP in continuous mode */
/* The temporary output file, for the second-Ctrl-C handler. */
static char abort_path[PATH_MAX];
static struct outfile *cleanup_out;

static void on_signal(int sig)
{
	(void)sig;
	if (exiting) { /* second Ctrl-C: leave at once, and leave nothing behind */
		if (abort_path[0])
			unlink(abort_path);
		_exit(130);
	}
	exiting = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	flush_now = 1;
}

static void die_cleanup(void)
{
	if (cleanup_out)
		outfile__abort(cleanup_out);
}

static bool verbose;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Root, or CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) in the effective set. */
static bool has_privileges(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };
	uint64_t eff;

	if (syscall(SYS_capget, &hdr, data))
		return geteuid() == 0;
	eff = data[0].effective | ((uint64_t)data[1].effective << 32);
#define HAS(cap) (eff & (1ULL << (cap)))
	return HAS(CAP_SYS_ADMIN) || (HAS(CAP_BPF) && HAS(CAP_PERFMON));
#undef HAS
}

static long read_sysctl_long(const char *path)
{
	FILE *f = fopen(path, "re");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The process (thread group) of a pid; 0 when there is none. */
static uint32_t tgid_of(uint32_t pid)
{
	char path[64], line[256];
	uint32_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %u", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static int check_targets(const struct record_opts *o)
{
	for (size_t i = 0; i < o->npids; i++) {
		uint32_t tgid = tgid_of(o->pids[i]);

		if (!tgid) {
			err_msg("no process with pid %u", o->pids[i]);
			return -1;
		}
		if (tgid != o->pids[i]) {
			err_msg("pid %u is a thread of process %u: use -p %u", o->pids[i], tgid, tgid);
			return -1;
		}
	}
	return 0;
}

/* --continuous DIR: made if missing, and proven writable before sampling starts. */
static int check_continuous_dir(const char *dir)
{
	char *probe;
	int fd;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		err_msg("cannot create the directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (asprintf(&probe, "%s/.pyebpf-probe-XXXXXX", dir) < 0)
		die("out of memory");
	fd = mkstemp(probe);
	if (fd < 0) {
		err_msg("cannot write into '%s': %s", dir, strerror(errno));
		free(probe);
		return -1;
	}
	close(fd);
	unlink(probe);
	free(probe);
	return 0;
}

/* --cgroup and --container to cgroup v2 ids, before anything is loaded. */
static int resolve_cgroups(struct recorder *r)
{
	const struct record_opts *o = &r->opts;
	size_t n = o->ncgroups + o->ncontainers;
	char mount[1024], dir[4096], why[512];

	if (!n)
		return 0;
	if (cgroup2_mount("/proc/mounts", mount, sizeof(mount))) {
		err_msg("no cgroup v2 hierarchy is mounted (needed by --cgroup and --container)");
		return -1;
	}
	r->cgroup_ids = xcalloc(n, sizeof(*r->cgroup_ids));
	for (size_t i = 0; i < o->ncgroups; i++)
		if (cgroup_resolve(mount, o->cgroups[i], dir, sizeof(dir), &r->cgroup_ids[r->ncgroup_ids++], why,
				   sizeof(why))) {
			err_msg("--cgroup: %s", why);
			return -1;
		}
	for (size_t i = 0; i < o->ncontainers; i++)
		if (cgroup_find_container(mount, o->container_ids[i], dir, sizeof(dir),
					  &r->cgroup_ids[r->ncgroup_ids++], why, sizeof(why))) {
			err_msg("--container: %s", why);
			return -1;
		}
	return 0;
}

/* ---- samples ---------------------------------------------------------- */

static uint32_t kernel_frame(struct recorder *r, uint64_t addr, bool leaf)
{
	struct frame f = { .kind = FRAME_KERNEL };
	const char *name = r->ksyms ? kallsyms__lookup(r->ksyms, leaf ? addr : addr - 1, NULL) : NULL;

	f.name = profile__str(r->prof, name ? name : "[unknown]");
	return profile__frame(r->prof, &f);
}

static uint32_t mark_frame(struct recorder *r, const char *text)
{
	struct frame f = { .kind = FRAME_MARK };

	f.name = profile__str(r->prof, text);
	return profile__frame(r->prof, &f);
}

/* The py_offsets entry of a layout, registering it the first time. */
static int offsets_id(struct recorder *r, const struct pyebpf_py_offsets *o, uint32_t *id)
{
	for (uint32_t i = 0; i < r->noffsets; i++)
		if (!memcmp(&r->offsets[i], o, sizeof(*o))) {
			*id = i;
			return 0;
		}
	if (r->noffsets == PYEBPF_MAX_OFFSETS ||
	    bpf_map__update_elem(r->skel->maps.py_offsets, &r->noffsets, sizeof(uint32_t), o, sizeof(*o), BPF_ANY))
		return -1;
	r->offsets[r->noffsets] = *o;
	*id = r->noffsets++;
	return 0;
}

/* Tell the BPF walker where this process's interpreter is (or forget it). */
static void py_register(struct recorder *r, uint32_t pid, const struct py_proc *py)
{
	const struct py_interp *in;
	struct pyebpf_py_proc v = { 0 };

	if (!py) {
		bpf_map__delete_elem(r->skel->maps.py_procs, &pid, sizeof(pid), 0);
		return;
	}
	in = py_proc__interp(py);
	if (offsets_id(r, &in->layout.bpf, &v.offsets_id)) {
		err_msg("pid %u: too many distinct CPython layouts, native frames only", pid);
		return;
	}
	v.interp_head_addr = in->interp_head_addr;
	v.gil_addr = in->gil_addr;
	v.version_hex = in->version_hex;
	if (bpf_map__update_elem(r->skel->maps.py_procs, &pid, sizeof(pid), &v, sizeof(v), BPF_ANY))
		err_msg("pid %u: cannot register the Python process: %s", pid, strerror(errno));
}

static void forget_proc(uint32_t pid, void *ctx)
{
	struct recorder *r = ctx;

	pyprocs__forget(r->py, pid);
	threads__forget_pid(r->threads, pid);
	if (r->native)
		native_stacks__forget(r->native, pid);
	bpf_map__delete_elem(r->skel->maps.py_procs, &pid, sizeof(pid), 0);
}

/* Kernel, then user: Python frames and (--native) up to 1024 native frames. */
#define MAX_FRAMES (2 * PYEBPF_MAX_STACK + PYEBPF_MAX_PY_FRAMES + 1024 + 8)
/* How long after first sight or exec a process may still turn out to be Python. */
#define YOUNG_NS (2 * 1000000000ULL)

/* The Python state of a sampled process, asked at first sight and whenever its
 * maps change; changes are registered with the BPF walker. */
static struct py_proc *python_of(struct recorder *r, uint32_t pid, struct proc *p, uint64_t now)
{
	struct py_proc *py = NULL;
	bool changed;

	for (int pass = 0; pass < 2; pass++) {
		py = pyprocs__lookup(r->py, pid, procs__maps_gen(p), &changed);
		if (changed)
			py_register(r, pid, py);
		if (py)
			break;
		procs__refresh_young(r->procs, p, now, YOUNG_NS); /* libpython may not be mapped yet */
	}
	return py;
}

/* The thread's name: from threading.Thread when it has one, else the OS name. */
static uint32_t thread_label(struct recorder *r, const struct pyebpf_sample *s, struct py_proc *py, uint64_t now)
{
	bool ask;
	uint32_t name_id = threads__name(r->threads, s->h.pid, s->h.tid, now, &ask);
	char *name;

	if (!py || !s->tstate || !ask)
		return name_id;
	name = py_thread_name((pid_t)s->h.pid, py_proc__interp(py), s->tstate);
	if (!name && s->h.tid == s->h.pid)
		name = xstrdup("MainThread");
	threads__set_python_name(r->threads, s->h.pid, s->h.tid, name, now);
	if (name)
		name_id = profile__str(r->prof, name);
	free(name);
	return name_id;
}

/* "3.12.1", or "3.11" when only the file name told the version. */
static uint32_t python_label(struct recorder *r, const struct py_interp *in)
{
	char v[32];

	if (in->version_hex)
		snprintf(v, sizeof(v), "%d.%d.%d", in->major, in->minor, in->micro);
	else
		snprintf(v, sizeof(v), "%d.%d", in->major, in->minor);
	return profile__str(r->prof, v);
}

static void handle_sample(struct recorder *r, const struct pyebpf_sample *s, size_t size)
{
	static uint32_t frames[MAX_FRAMES];
	uint32_t n = 0, kn = s->kstack_len, un = s->ustack_len, pn = s->py_len;
	char comm[PYEBPF_COMM_LEN + 1];
	uint64_t now = now_ns(), t;
	struct sample_labels l = { 0 };
	struct py_proc *py;
	struct proc *p;
	bool python;

	if (size < PYEBPF_SAMPLE_SIZE(0) || kn > PYEBPF_MAX_STACK || un > PYEBPF_MAX_STACK ||
	    size < PYEBPF_SAMPLE_SIZE(kn + un)) {
		r->bad_events++;
		return;
	}
	python = s->flags & PYEBPF_SAMPLE_PY;
	if (python && (pn > PYEBPF_MAX_PY_FRAMES || size < PYEBPF_PY_SAMPLE_SIZE(pn))) {
		r->bad_events++;
		return;
	}
	if ((s->flags & PYEBPF_SAMPLE_UREGS) && (!r->native || !native_tail(s, size))) {
		r->bad_events++;
		return;
	}
	memcpy(comm, s->comm, PYEBPF_COMM_LEN);
	comm[PYEBPF_COMM_LEN] = '\0';
	l.pid = s->h.pid;
	l.tid = s->h.tid;
	l.comm = profile__str(r->prof, comm[0] ? comm : "[unknown]");
	l.flags = (s->flags & PYEBPF_SAMPLE_GIL_KNOWN ? LABEL_GIL_KNOWN : 0) |
		  (s->flags & PYEBPF_SAMPLE_GIL_HELD ? LABEL_GIL_HELD : 0);
	l.cgroup = s->cgroup_id;

	p = procs__get(r->procs, s->h.pid, now);
	procs__container_labels(r->procs, p, &l);
	/* Before any filter: a process must be known to be Python to be sampled as Python. */
	py = python_of(r, s->h.pid, p, now);
	l.thread = thread_label(r, s, python ? py : NULL, now);
	l.python = py ? python_label(r, py_proc__interp(py)) : 0;
	t = s->h.ts_ns > r->interval_start_ns ? s->h.ts_ns - r->interval_start_ns : 0;
	if (!filter__keep(&r->opts.filter, r->prof, &l, t)) {
		r->filtered++;
		return;
	}
	if (s->flags & PYEBPF_SAMPLE_UREGS) {
		n += native_stacks__frames(r->native, s, p, python ? py : NULL, now, frames + n, MAX_FRAMES - PYEBPF_MAX_STACK - n);
	} else if (python && py && pn) {
		/* The Python stack stands for the interpreter's native frames. */
		if (s->flags & PYEBPF_SAMPLE_PY_TRUNCATED)
			frames[n++] = mark_frame(r, "[truncated]");
		for (uint32_t i = pn; i-- > 0;)
			frames[n++] = py_proc__frame(r->py, py, s->py[i].code, s->py[i].globals, s->py[i].lasti, now);
	} else if (un) {
		const __u64 *u = &s->stack[kn];

		/* The kernel stops at 127 frames: say so rather than pretend it is the root. */
		if (un == PYEBPF_MAX_STACK)
			frames[n++] = mark_frame(r, "[truncated]");
		for (uint32_t i = un; i-- > 0;)
			frames[n++] = procs__user_frame(r->procs, p, u[i], i == 0, now);
	}
	for (uint32_t i = kn; i-- > 0;)
		frames[n++] = kernel_frame(r, s->stack[i], i == 0);
	n = filter__frames(&r->opts.filter, r->prof, frames, n);
	if (!n && r->opts.filter.python_only) {
		r->filtered++;
		return;
	}
	profile__add_at(r->prof, &l, frames, n, 1, t);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct recorder *r = ctx;
	const struct pyebpf_event_header *h = data;

	if (size < sizeof(*h)) {
		r->bad_events++;
		return 0;
	}
	switch (h->type) {
	case PYEBPF_EVENT_SAMPLE:
		r->received++;
		handle_sample(r, data, size);
		break;
	case PYEBPF_EVENT_EXEC:
		procs__exec(r->procs, h->pid);
		forget_proc(h->pid, r);
		break;
	case PYEBPF_EVENT_EXIT:
		procs__exit(r->procs, h->pid, now_ns());
		break;
	default:
		r->bad_events++;
	}
	return 0;
}

/* ---- BPF set-up ------------------------------------------------------- */

static void read_counters(struct recorder *r, uint64_t *totals)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals = xcalloc(ncpu > 0 ? ncpu : 1, sizeof(*vals));

	for (uint32_t i = 0; i < PYEBPF_CNT__COUNT; i++) {
		totals[i] = 0;
		if (ncpu <= 0 || bpf_map__lookup_elem(r->skel->maps.counters, &i, sizeof(i), vals,
						       sizeof(*vals) * ncpu, 0))
			continue;
		for (int c = 0; c < ncpu; c++)
			totals[i] += vals[c];
	}
	free(vals);
}

static int open_perf_events(struct recorder *r)
{
	static bool online[MAX_CPUS];
	int err = cpus__online(online, MAX_CPUS);

	if (err) {
		err_msg("cannot read the online CPUs: %s", strerror(-err));
		return -1;
	}
	free(r->perf_links); /* opened again after --rate-limit lowered the frequency */
	r->perf_links = xcalloc(MAX_CPUS, sizeof(*r->perf_links));
	for (int cpu = 0; cpu < MAX_CPUS; cpu++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.size = sizeof(attr),
			.freq = 1,
			.sample_freq = r->opts.freq,
		};
		int fd;

		if (!online[cpu])
			continue;
		fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV) /* went offline meanwhile */
				continue;
			err_msg("cannot open a cpu-clock perf event on CPU %d: %s", cpu, strerror(errno));
			return -1;
		}
		r->perf_links[r->nperf] = bpf_program__attach_perf_event(r->skel->progs.on_sample, fd);
		if (!r->perf_links[r->nperf]) {
			err_msg("cannot attach the sampler to CPU %d: %s", cpu, strerror(errno));
			close(fd);
			return -1;
		}
		r->nperf++;
	}
	r->ncpus = r->nperf;
	return 0;
}

static void stop_sampling(struct recorder *r)
{
	for (int i = 0; i < r->nperf; i++)
		bpf_link__destroy(r->perf_links[i]); /* also closes the perf event */
	r->nperf = 0;
}

/* Kernel stacks are taken unless no filter would keep them. */
static bool record_kernel(const struct record_opts *o)
{
	return !o->filter.no_kernel && !o->filter.python_only;
}

static int load_bpf(struct recorder *r)
{
	const struct record_opts *o = &r->opts;
	int err;

	r->skel = sample_bpf__open();
	if (!r->skel) {
		err_msg("cannot open the BPF sampler: %s", strerror(errno));
		return -1;
	}
	r->skel->rodata->self_pid = (uint32_t)getpid();
	r->skel->rodata->filter_pids = !o->all;
	r->skel->rodata->follow_forks = o->cmd != NULL;
	r->skel->rodata->kernel_stacks = record_kernel(o);
	r->skel->rodata->filter_cgroups = r->ncgroup_ids > 0;
	r->skel->rodata->ustack_copy = o->native ? o->stack_size : 0;
	bpf_map__set_max_entries(r->skel->maps.events, RINGBUF_BYTES);
	/* One sample buffer per CPU. */
	bpf_map__set_max_entries(r->skel->maps.scratch, (uint32_t)libbpf_num_possible_cpus());

	err = sample_bpf__load(r->skel);
	if (err) {
		err_msg("cannot load the BPF sampler: %s%s", strerror(-err),
			o->verbose ? "" : " (run with -v for the verifier log)");
		return -1;
	}
	for (size_t i = 0; i < r->ncgroup_ids; i++) {
		uint8_t one = 1;

		if (bpf_map__update_elem(r->skel->maps.target_cgroups, &r->cgroup_ids[i], sizeof(uint64_t), &one, 1,
					 BPF_ANY)) {
			err_msg("cannot add a cgroup to the targets: %s", strerror(errno));
			return -1;
		}
	}
	for (size_t i = 0; i < o->npids; i++) {
		uint8_t one = 1;

		if (bpf_map__update_elem(r->skel->maps.targets, &o->pids[i], sizeof(uint32_t), &one, 1, BPF_ANY)) {
			err_msg("cannot add pid %u to the targets: %s", o->pids[i], strerror(errno));
			return -1;
		}
	}
	r->fork_link = bpf_program__attach(r->skel->progs.on_fork);
	r->exec_link = bpf_program__attach(r->skel->progs.on_exec);
	r->exit_link = bpf_program__attach(r->skel->progs.on_exit);
	if (!r->fork_link || !r->exec_link || !r->exit_link) {
		err_msg("cannot attach the process tracepoints: %s", strerror(errno));
		return -1;
	}
	r->rb = ring_buffer__new(bpf_map__fd(r->skel->maps.events), on_event, r, NULL);
	if (!r->rb) {
		err_msg("cannot open the ring buffer: %s", strerror(errno));
		return -1;
	}
	/* Run-time statistics of our programs, for the cost line of the summary. */
	r->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	return 0;
}

/* ---- the launched command --------------------------------------------- */

/*
 * Fork the command stopped before exec: it may only start once its pid is
 * a target, or its first samples would be missed. Returns the pid, and
 * the pipe ends that release it and report an exec failure.
 */
static pid_t spawn_stopped(char **cmd, int *go_w, int *err_r)
{
	int go[2], er[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(er, O_CLOEXEC)) {
		err_msg("cannot create a pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		err_msg("cannot fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(er[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* pyebpf gave up before starting us */
		execvp(cmd[0], cmd);
		e = errno;
		if (write(er[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	*go_w = go[1];
	*err_r = er[0];
	return pid;
}

/* Let the command run; -1 after one error line when it could not exec. */
static int release_child(struct recorder *r, int go_w, int err_r)
{
	int e = 0;
	ssize_t n;

	if (write(go_w, "g", 1) != 1) {
		err_msg("cannot start '%s': %s", r->opts.cmd[0], strerror(errno));
		return -1;
	}
	close(go_w);
	n = read(err_r, &e, sizeof(e)); /* 0 bytes: exec succeeded (CLOEXEC) */
	close(err_r);
	if (n == sizeof(e)) {
		waitpid(r->child, NULL, 0);
		r->child = 0;
		err_msg("cannot run '%s': %s", r->opts.cmd[0], strerror(e));
		return -1;
	}
	return 0;
}

/* ---- the loop ----------------------------------------------------------- */

static bool targets_alive(const struct record_opts *o)
{
	for (size_t i = 0; i < o->npids; i++) {
		char path[64], state = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%u/stat", o->pids[i]);
		f = fopen(path, "re");
		if (!f)
			continue;
		/* "pid (comm) S ...": a zombie has exited. comm may hold ')', so find the last. */
		char buf[512];
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		char *paren = strrchr(buf, ')');
		if (paren && paren[1] == ' ')
			state = paren[2];
		if (state && state != 'Z' && state != 'X')
			return true;
	}
	return false;
}

static void print_status(struct recorder *r, uint64_t now, bool final)
{
	uint64_t c[PYEBPF_CNT__COUNT];

	read_counters(r, c);
	fprintf(stderr, "\r\033[Kpyebpf: %s %.1f s, %llu samples, %zu processes, %llu lost%s",
		final ? "recorded" : "recording", (now - r->start_ns) / 1e9, (unsigned long long)r->received,
		procs__seen(r->procs),
		(unsigned long long)(c[PYEBPF_CNT_RB_FULL] + c[PYEBPF_CNT_SCRATCH_ERR]), final ? "\n" : "");
	fflush(stderr);
}

static int64_t epoch_now(void)
{
	struct timespec wall;

	clock_gettime(CLOCK_REALTIME, &wall);
	return (int64_t)wall.tv_sec * 1000000000LL + wall.tv_nsec;
}

static double own_cpu_seconds(void);

/* --rate-limit: halve the frequency when our CPU over the interval was above the limit. */
static void rate_limit(struct recorder *r, uint64_t now)
{
	double wall = (now - r->interval_start_ns) / 1e9, share;
	uint64_t was = r->opts.freq;
	char note[256];

	if (!r->opts.rate_limit || wall <= 0)
		return;
	share = 100.0 * (own_cpu_seconds() - r->interval_cpu) / wall;
	if (share <= r->opts.rate_limit || was <= 1)
		return;
	r->opts.freq = was / 2;
	stop_sampling(r);
	if (open_perf_events(r)) {
		exiting = 1;
		return;
	}
	snprintf(note, sizeof(note),
		 "pyebpf lowered sampling from %llu Hz to %llu Hz: it used %.2f%% of a core, above --rate-limit %g%%",
		 (unsigned long long)was, (unsigned long long)r->opts.freq, share, r->opts.rate_limit);
	fprintf(stderr, "pyebpf: %s\n", note + strlen("pyebpf "));
	profile__add_comment(r->prof, note); /* into the next interval's file */
}

/*
 * Continuous mode: the interval so far into DIR as one pprof file (atomic
 * rename, names sortable by time), then a fresh interval. A failed write is
 * reported and counted, and recording goes on.
 */
static void flush_interval(struct recorder *r, uint64_t now)
{
	struct profile_meta *m = profile__meta(r->prof);
	char name[128], *path;
	struct outfile out = { 0 };

	m->period_ns = 1000000000ULL / r->opts.freq;
	m->start_epoch_ns = r->interval_epoch_ns;
	m->duration_ns = (int64_t)(now - r->interval_start_ns);
	rotation_file_name(r->interval_epoch_ns, r->seq++, name, sizeof(name));
	if (asprintf(&path, "%s/%s", r->opts.continuous, name) < 0)
		die("out of memory");
	if (outfile__open(&out, path) == 0) {
		if (pprof__write(r->prof, out.f)) {
			err_msg("cannot write '%s': %s", path, strerror(errno));
			outfile__abort(&out);
			r->write_failures++;
		} else if (outfile__commit(&out)) {
			r->write_failures++;
		} else {
			r->files_written++;
		}
	} else {
		r->write_failures++;
	}
	free(path);
	profile__clear_samples(r->prof);
	if (r->opts.keep || r->opts.max_disk)
		rotation_prune(r->opts.continuous, r->opts.keep, r->opts.max_disk);
	rate_limit(r, now);
	r->interval_start_ns = now;
	r->interval_epoch_ns = epoch_now();
	r->interval_cpu = own_cpu_seconds();
}

static int poll_loop(struct recorder *r)
{
	const struct record_opts *o = &r->opts;
	bool tty = isatty(STDERR_FILENO);
	uint64_t last_status = 0;

	while (!exiting) {
		/* Samples arrive without wake-ups (see bpf/sample.bpf.c): drain
		 * whatever is there on every tick, woken or not. */
		int err = ring_buffer__poll(r->rb, POLL_MS);
		uint64_t now;

		if (err >= 0 || err == -EINTR)
			err = ring_buffer__consume(r->rb);
		if (err < 0 && err != -EINTR) {
			err_msg("reading the ring buffer failed: %s", strerror(-err));
			return -1;
		}
		now = now_ns();
		if (o->duration > 0 && now - r->start_ns >= (uint64_t)(o->duration * 1e9))
			break;
		if (r->child) {
			int st;

			if (waitpid(r->child, &st, WNOHANG) == r->child) {
				r->child = 0;
				r->child_status = st;
				break;
			}
		}
		if (o->npids && !targets_alive(o))
			break;
		procs__gc(r->procs, now, forget_proc, r);
		if (o->continuous && (flush_now || now - r->interval_start_ns >= (uint64_t)(o->interval * 1e9))) {
			flush_now = 0;
			flush_interval(r, now);
		}
		if (tty && now - last_status >= STATUS_INTERVAL_NS) {
			print_status(r, now, false);
			last_status = now;
		}
	}
	if (tty)
		fputs("\r\033[K", stderr);
	return 0;
}

static double own_cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Where the DWARF unwinder stopped, and how merging went: never silent. */
static void print_native_summary(const struct native_stats *st)
{
	if (!st->samples)
		return;
	fprintf(stderr, "pyebpf: native: %llu stacks, %.1f%% unwound to their root", (unsigned long long)st->samples,
		100.0 * st->whole / st->samples);
	if (st->copy_ends)
		fprintf(stderr, ", %llu cut at the end of the stack copy (--stack-size)",
			(unsigned long long)st->copy_ends);
	if (st->no_cfi)
		fprintf(stderr, ", %llu stopped at code without unwind info", (unsigned long long)st->no_cfi);
	if (st->failed)
		fprintf(stderr, ", %llu stopped otherwise", (unsigned long long)st->failed);
	fputc('\n', stderr);
	if (st->python)
		fprintf(stderr, "pyebpf: native: %llu Python stacks merged, %llu with a native/Python mismatch (marked)\n",
			(unsigned long long)st->python, (unsigned long long)st->mismatched);
}

static void print_summary(struct recorder *r, uint64_t elapsed_ns)
{
	uint64_t c[PYEBPF_CNT__COUNT];
	double cpu = own_cpu_seconds() - r->setup_cpu, bpf_us = -1;
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);

	read_counters(r, c);
	if (r->stats_fd >= 0 && !bpf_obj_get_info_by_fd(bpf_program__fd(r->skel->progs.on_sample), &info, &len) &&
	    info.run_cnt)
		bpf_us = info.run_time_ns / 1e3 / info.run_cnt;

	fprintf(stderr, "pyebpf: %llu samples from %zu processes (%llu Python) in %.1f s (%llu Hz on %d CPUs), %llu lost\n",
		(unsigned long long)r->received, procs__seen(r->procs), (unsigned long long)pyprocs__python_seen(r->py),
		elapsed_ns / 1e9,
		(unsigned long long)r->opts.freq, r->ncpus,
		(unsigned long long)(c[PYEBPF_CNT_RB_FULL] + c[PYEBPF_CNT_SCRATCH_ERR]));
	/* Set-up (kernel symbols, BPF load) is left out: it is paid once. */
	fprintf(stderr, "pyebpf: cost: pyebpf %.3f s CPU while recording (%.1f us per sample)", cpu,
		r->received ? cpu * 1e6 / r->received : 0.0);
	if (bpf_us >= 0)
		fprintf(stderr, ", BPF %.2f us per sample", bpf_us);
	fputc('\n', stderr);
	for (int i = 1; i < PYEBPF_CNT__COUNT; i++)
		if (c[i])
			fprintf(stderr, "pyebpf: %s: %llu\n", counter_names[i], (unsigned long long)c[i]);
	if (r->filtered)
		fprintf(stderr, "pyebpf: samples left out by the filters: %llu\n",
			(unsigned long long)r->filtered);
	if (r->bad_events)
		fprintf(stderr, "pyebpf: malformed events ignored: %llu\n", (unsigned long long)r->bad_events);
	if (r->native)
		print_native_summary(native_stacks__stats(r->native));
}

static int write_output(struct recorder *r)
{
	struct write_opts wo = { .threads = r->opts.threads, .containers = r->opts.containers, .title = "pyebpf record" };
	struct profile_meta *m = profile__meta(r->prof);

	m->period_ns = 1000000000ULL / r->opts.freq;
	m->start_epoch_ns = r->start_epoch_ns;
	m->duration_ns = (int64_t)r->elapsed_ns;
	if (write_profile(r->prof, r->opts.format, &wo, r->out.f)) {
		err_msg("cannot write '%s': %s", r->opts.output, strerror(errno));
		return -1;
	}
	if (outfile__commit(&r->out))
		return -1;
	fprintf(stderr, "pyebpf: wrote %s (%zu stacks)\n", r->opts.output, profile__nstacks(r->prof));
	return 0;
}

static void recorder_free(struct recorder *r)
{
	stop_sampling(r);
	free(r->perf_links);
	bpf_link__destroy(r->fork_link);
	bpf_link__destroy(r->exec_link);
	bpf_link__destroy(r->exit_link);
	ring_buffer__free(r->rb);
	sample_bpf__destroy(r->skel);
	if (r->stats_fd >= 0)
		close(r->stats_fd);
	kallsyms__free(r->ksyms);
	pyprocs__free(r->py);
	threads__free(r->threads);
	native_stacks__free(r->native);
	procs__free(r->procs);
	profile__free(r->prof);
	free(r->cgroup_ids);
	outfile__abort(&r->out);
	record_args__free(&r->opts);
}

int record_main(int argc, char **argv)
{
	struct recorder r = { .stats_fd = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	int go_w = -1, err_r = -1, ret = 1, perr;
	long max_rate;

	perr = record_args__parse(argc, argv, &r.opts);
	if (perr)
		return perr > 0 ? 0 : 2;
	verbose = r.opts.verbose;
	libbpf_set_print(libbpf_print);

	/* Everything that can be checked before sampling, is. */
	if (!has_privileges()) {
		err_msg("needs root, or CAP_BPF and CAP_PERFMON (try: sudo pyebpf record ...)");
		goto out;
	}
	if (check_targets(&r.opts) || resolve_cgroups(&r))
		goto out;
	max_rate = read_sysctl_long("/proc/sys/kernel/perf_event_max_sample_rate");
	if (max_rate > 0 && (long)r.opts.freq > max_rate) {
		err_msg("-F %llu is above the kernel's limit of %ld Hz (kernel.perf_event_max_sample_rate)",
			(unsigned long long)r.opts.freq, max_rate);
		goto out;
	}
	if (r.opts.continuous ? check_continuous_dir(r.opts.continuous) : outfile__open(&r.out, r.opts.output))
		goto out;
	snprintf(abort_path, sizeof(abort_path), "%s", r.out.tmp);
	cleanup_out = &r.out;
	set_die_cleanup(die_cleanup);

	r.prof = profile__new();
	r.procs = procs__new(r.prof);
	if (r.opts.debug_dirs)
		procs__set_debug_dirs(r.procs, (const char *const *)r.opts.debug_dirs);
	r.py = pyprocs__new(r.prof);
	if (r.opts.native)
		r.native = native_stacks__new(r.prof, r.procs, r.py);
	r.threads = threads__new(r.prof);

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (r.opts.continuous) {
		struct sigaction hup = { .sa_handler = on_hup };

		sigaction(SIGHUP, &hup, NULL);
	}

	if (load_bpf(&r))
		goto out;
	if (record_kernel(&r.opts)) {
		r.ksyms = kallsyms__load("/proc/kallsyms");
		if (!r.ksyms)
			err_msg("kernel symbols unavailable (%s): kernel frames will read [unknown]", strerror(errno));
	}
	if (r.opts.cmd) {
		r.child = spawn_stopped(r.opts.cmd, &go_w, &err_r);
		if (r.child < 0) {
			r.child = 0;
			goto out;
		}
		uint8_t one = 1;
		uint32_t pid = (uint32_t)r.child;
		if (bpf_map__update_elem(r.skel->maps.targets, &pid, sizeof(pid), &one, 1, BPF_ANY)) {
			err_msg("cannot add the command to the targets: %s", strerror(errno));
			goto out;
		}
	}
	if (open_perf_events(&r))
		goto out;
	r.start_ns = r.interval_start_ns = now_ns();
	r.start_epoch_ns = r.interval_epoch_ns = epoch_now();
	r.setup_cpu = r.interval_cpu = own_cpu_seconds();
	if (r.opts.cmd) {
		int e = release_child(&r, go_w, err_r);

		go_w = err_r = -1;
		if (e)
			goto out;
	}
	fprintf(stderr, "pyebpf: sampling %d CPUs at %llu Hz%s\n", r.nperf, (unsigned long long)r.opts.freq,
		r.opts.duration > 0 || r.opts.cmd ? "" : "; Ctrl-C to stop");
	if (poll_loop(&r))
		goto out;

	/* Stop: no new samples, then everything still in the ring buffer. */
	r.elapsed_ns = now_ns() - r.start_ns;
	stop_sampling(&r);
	ring_buffer__consume(r.rb);
	print_summary(&r, r.elapsed_ns);
	if (r.opts.continuous) {
		/* The last interval too: nothing recorded is lost on stop. */
		flush_interval(&r, now_ns());
		fprintf(stderr, "pyebpf: wrote %llu interval files to %s", (unsigned long long)r.files_written,
			r.opts.continuous);
		if (r.write_failures)
			fprintf(stderr, " (%llu could not be written)", (unsigned long long)r.write_failures);
		fputc('\n', stderr);
	} else if (write_output(&r)) {
		goto out;
	}
	ret = 0;
out:
	if (go_w >= 0)
		close(go_w); /* an unreleased command exits without running */
	if (err_r >= 0)
		close(err_r);
	if (r.child > 0 && ret) {
		kill(r.child, SIGKILL);
		waitpid(r.child, NULL, 0);
	}
	recorder_free(&r);
	cleanup_out = NULL;
	return ret;
}
