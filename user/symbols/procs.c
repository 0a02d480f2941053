// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "symbols/procs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "system/cgroups.h"
#include "system/container_find.h"
#include "system/container_names.h"
#include "symbols/elf_lookup.h"
#include "symbols/elf_syms.h"
#include "base/hashmap.h"
#include "symbols/maps.h"
#include "base/util.h"

/* At most one re-read of maps per process in this time (dlopen, JIT). */
#define RESCAN_NS (200 * 1000000ULL)
#define YOUNG_FIRST_NS (2 * 1000000ULL)
/* Unwinding met code outside every known mapping: re-read at most this
 * often. Just-loaded extensions are found within milliseconds; JIT code,
 * never in a mapping, costs at most 100 reads a second. */
#define UNKNOWN_RESCAN_NS (10 * 1000000ULL)
/* While naming is behind sampling: re-read a live process's maps at most
 * this often (reading the maps of a Python with numpy loaded, 184 lines,
 * took 0.18 ms here). */
#define BEHIND_RESCAN_NS (500 * 1000000ULL)
/* A file no live process maps any more keeps its symbols this long: a
 * binary started again and again (a compiler during a build) is read once,
 * and a machine profiled for weeks does not keep every binary it ever ran. */
#define FILE_IDLE_NS (60 * 1000000000ULL)
#define FILE_SWEEP_NS (1000000000ULL)

/* The symbols of one file, shared by every mapping of it. */
struct file_syms {
	struct elf_syms *syms; /* NULL: not an ELF file, or unreadable */
	uint32_t refs;         /* mappings of known processes that use it */
	uint64_t idle_ns;      /* when refs dropped to 0 */
};

struct proc {
	uint32_t pid;
	struct mapping *maps;
	size_t nmaps;
	struct file_syms **files; /* per mapping; NULL until first looked up, and for anonymous memory */
	uint32_t *module;         /* per mapping: string id of the path */
	uint64_t scanned_ns;      /* 0: maps must be (re)read */
	uint64_t maps_gen;        /* changes of the maps seen so far, and young re-reads */
	uint64_t maps_id;         /* changes of the maps only: what named addresses depend on */
	uint64_t born_ns;         /* first seen, or exec'd */
	uint32_t young_scans;     /* re-reads since then, for the backoff */
	uint64_t exited_ns;       /* 0: alive; else its maps are not read again */
	bool ns_read;             /* cgroup_path, container and ns_pid were read */
	bool python;              /* found to be Python (kept across exec: counted once) */
	bool exe_noted;           /* its executable was noted in the profile's modules */
	uint32_t name;            /* string id: the name it gives itself (multiprocessing's); 0: none */
	uint8_t name_asks;        /* looks for it so far: a few at most */
	uint32_t cgroup_path, container, ns_pid, k8s_pod, container_name;
};

struct procs {
	struct profile *prof;
	struct hashmap *files;           /* file_key → struct file_syms * */
	struct hashmap *k8s_pods;        /* pod UID → string id of "NAMESPACE/POD" (0: not found) */
	struct hashmap *container_names; /* container id → string id of its name (0: none) */
	struct container_names names;    /* where they come from */
	size_t seen;
	uint64_t now, swept_ns;        /* the latest time seen; the last sweep of idle files */
	uint64_t gens;                 /* maps generations handed out: one is never seen twice */
	const char *const *debug_dirs; /* NULL-terminated */
	char self_exe[4096];           /* pyebpf's own: a child before its exec is not the command */
};

/* The path /proc/PID/exe names, or "" (false). */
static bool exe_path(pid_t pid, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	return n > 0;
}

static const char *const default_debug_dirs[] = { PROCS_DEFAULT_DEBUG_DIR, NULL };

struct procs *procs__new(struct profile *p)
{
	struct procs *t = xcalloc(1, sizeof(*t));

	t->prof = p;
	t->debug_dirs = default_debug_dirs;
	t->files = hashmap__new();
	t->k8s_pods = hashmap__new();
	t->container_names = hashmap__new();
	if (!t->files || !t->k8s_pods || !t->container_names)
		die("out of memory");
	t->names = (struct container_names){ .src = &container_sources_host, .k8s_dir = K8S_CONTAINERS_DIR };
	exe_path(getpid(), t->self_exe, sizeof(t->self_exe));
	return t;
}

static void proc_drop_maps(struct procs *t, struct proc *p)
{
	for (size_t i = 0; p->files && i < p->nmaps; i++)
		if (p->files[i] && !--p->files[i]->refs)
			p->files[i]->idle_ns = t->now;
	maps__free(p->maps, p->nmaps);
	free(p->files);
	free(p->module);
	p->maps = NULL;
	p->files = NULL;
	p->module = NULL;
	p->nmaps = 0;
}

void procs__drop(struct procs *t, struct proc *p)
{
	if (!p)
		return;
	proc_drop_maps(t, p);
	free(p);
}

static void file_free_value(void *f)
{
	elf_syms__free(((struct file_syms *)f)->syms);
	free(f);
}

void procs__set_debug_dirs(struct procs *t, const char *const *dirs)
{
	t->debug_dirs = dirs;
}

/* A process in a container has its debug files in its own root:
 * elf_syms looks there first, then on the host. */
static struct elf_syms *load_syms(struct procs *t, const struct proc *p, int fd)
{
	return elf_syms__load_fd(fd, t->debug_dirs, p->pid);
}

void procs__free(struct procs *t)
{
	if (!t)
		return;
	hashmap__free_values(t->files, file_free_value);
	hashmap__free(t->k8s_pods);
	hashmap__free(t->container_names);
	container_names__free(&t->names);
	free(t);
}

static bool same_maps(const struct mapping *a, size_t na, const struct mapping *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].start != b[i].start || a[i].end != b[i].end || a[i].pgoff != b[i].pgoff ||
		    a[i].inode != b[i].inode || strcmp(a[i].path, b[i].path) != 0)
			return false;
	return true;
}

/* Read the maps again; the generation changes when they did, or always with
 * `bump` (a young process: its interpreter may be ready for a second look). */
static void proc_scan_gen(struct procs *t, struct proc *p, uint64_t now, bool bump)
{
	struct mapping *maps;
	size_t nmaps;

	p->scanned_ns = now ? now : 1;
	int err = maps__read((int)p->pid, true, &maps, &nmaps);
	/* Gone (a zombie's maps are empty): the last maps read stay, for the
	 * samples it left still to be named (naming can fall seconds behind
	 * sampling), and are not read again. */
	if ((err == -ENOENT || err == -ESRCH || (!err && !nmaps)) && p->nmaps) {
		maps__free(maps, nmaps);
		p->exited_ns = p->scanned_ns;
		return;
	}
	if (err) {
		if (p->nmaps) /* unreadable: its addresses are unknown from now */
			p->maps_gen = p->maps_id = ++t->gens;
		proc_drop_maps(t, p);
		return;
	}
	if (p->maps && same_maps(p->maps, p->nmaps, maps, nmaps)) {
		maps__free(maps, nmaps);
		if (bump)
			p->maps_gen = ++t->gens;
		return;
	}
	proc_drop_maps(t, p);
	p->maps_gen = p->maps_id = ++t->gens;
	p->maps = maps;
	p->nmaps = nmaps;
	p->files = xcalloc(p->nmaps, sizeof(*p->files));
	p->module = xcalloc(p->nmaps, sizeof(*p->module));
	for (size_t i = 0; i < p->nmaps; i++)
		p->module[i] = profile__str(t->prof, p->maps[i].path);
}

static void proc_scan(struct procs *t, struct proc *p, uint64_t now)
{
	proc_scan_gen(t, p, now, false);
}

struct proc *procs__get(struct procs *t, struct proc **slot, uint32_t pid, uint64_t now)
{
	struct proc *p = *slot;

	if (now > t->now)
		t->now = now;
	if (p) {
		if (!p->born_ns)
			p->born_ns = now;
		if (!p->scanned_ns)
			proc_scan(t, p, now);
		return p;
	}
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->born_ns = now;
	p->maps_gen = p->maps_id = ++t->gens; /* a reused pid is a new process */
	*slot = p;
	t->seen++;
	proc_scan(t, p, now);
	return p;
}

void procs__exec(struct procs *t, struct proc *p)
{
	if (p) {
		proc_drop_maps(t, p);
		p->maps_gen = p->maps_id = ++t->gens; /* a new image: nothing named before applies */
		p->scanned_ns = 0;
		p->exited_ns = 0;
		p->born_ns = 0; /* set again at the next sample */
		p->ns_read = false;
		p->exe_noted = false;
		p->name = 0;
		p->name_asks = 0;
		p->young_scans = 0;
	}
}

void procs__exit(struct proc *p, uint64_t now)
{
	if (p)
		p->exited_ns = now ? now : 1;
}

void procs__refresh_young(struct procs *t, struct proc *p, uint64_t now, uint64_t young_ns)
{
	/* 2 ms, 4, 8 ... up to RESCAN_NS: libpython is usually mapped within
	 * milliseconds of exec; a process that never maps it costs ~9 reads. */
	uint64_t wait = YOUNG_FIRST_NS << (p->young_scans < 8 ? p->young_scans : 8);

	if (wait > RESCAN_NS)
		wait = RESCAN_NS;
	if (!p->exited_ns && now - p->born_ns < young_ns && now - p->scanned_ns > wait) {
		p->young_scans++;
		proc_scan_gen(t, p, now, true);
	}
}

uint64_t procs__maps_gen(const struct proc *p)
{
	return p->maps_gen;
}

uint64_t procs__maps_id(const struct proc *p)
{
	return p->maps_id;
}

/* Free the symbols of files no process has mapped for FILE_IDLE_NS. */
static void sweep_idle_files(struct procs *t, uint64_t now)
{
	struct file_key idle[256];
	size_t pos = 0, len, n = 0;
	const void *key;
	void *v;

	/* Collect first: removing while iterating would skip entries; the
	 * rest waits for the next sweep. */
	while (n < ARRAY_SIZE(idle) && hashmap__next_ptr(t->files, &pos, &key, &len, &v)) {
		const struct file_syms *f = v;

		if (!f->refs && now - f->idle_ns > FILE_IDLE_NS && len == sizeof(idle[0]))
			memcpy(&idle[n++], key, len);
	}
	for (size_t i = 0; i < n; i++) {
		file_free_value(hashmap__get_ptr(t->files, &idle[i], sizeof(idle[i])));
		hashmap__remove(t->files, &idle[i], sizeof(idle[i]));
	}
}

size_t procs__files(const struct procs *t)
{
	return hashmap__size(t->files);
}

void procs__sweep(struct procs *t, uint64_t now)
{
	if (now > t->now)
		t->now = now;
	if (now - t->swept_ns >= FILE_SWEEP_NS) {
		t->swept_ns = now;
		sweep_idle_files(t, now);
	}
}

bool procs__rescan_unknown(struct procs *t, struct proc *p, uint64_t now)
{
	uint64_t gen = p->maps_gen;

	if (p->exited_ns || now - p->scanned_ns <= UNKNOWN_RESCAN_NS)
		return false;
	proc_scan(t, p, now);
	return p->maps_gen != gen;
}

/* A stack can show a multiprocessing bootstrap before its `self` is fully
 * set up: a few looks, then never again. */
#define NAME_ASKS 3

uint32_t procs__process_name(const struct proc *p)
{
	return p->name;
}

bool procs__want_process_name(const struct proc *p)
{
	return !p->name && p->name_asks < NAME_ASKS;
}

void procs__set_process_name(struct proc *p, uint32_t name)
{
	p->name_asks++;
	p->name = name;
}

bool procs__mark_python(struct proc *p)
{
	bool first = !p->python;

	p->python = true;
	return first;
}

size_t procs__seen(const struct procs *t)
{
	return t->seen;
}

/* What pprof's mappings tell of a file, p->maps[i]: its build id and
 * extent, read once per path (no symbol table: an executable noted for
 * pprof is not one whose frames need naming); fd: the file, or -1. */
static void note_module(struct procs *t, struct proc *p, size_t i, int fd, bool exe)
{
	struct profile_module pm = { .module = p->module[i], .exe = exe };
	struct elf_identity id;
	bool own = false;

	if (!profile__module(t->prof, pm.module)) {
		if (fd < 0)
			own = (fd = maps__open(p->pid, &p->maps[i])) >= 0;
		if (fd >= 0 && elf_identity(fd, &id) == 0) {
			pm.build_id = id.build_id[0] ? profile__str(t->prof, id.build_id) : 0;
			pm.start = id.start;
			pm.limit = id.limit;
			pm.file_offset = id.file_offset;
		}
		if (own)
			close(fd);
	}
	profile__note_module(t->prof, &pm);
}

/* The symbols of mapping m, p->maps[i]. */
static struct elf_syms *mapping_syms(struct procs *t, struct proc *p, const struct mapping *m, size_t i)
{
	struct file_key key = mapping__file_key(m);
	bool created;
	void **v;

	if (p->files[i])
		return p->files[i]->syms;
	if (m->path[0] != '/' || !m->inode)
		return NULL; /* anonymous memory, [vdso] */
	v = hashmap__put_ptr(t->files, &key, sizeof(key), &created);
	if (created) {
		struct file_syms *f = xcalloc(1, sizeof(*f));
		int fd = maps__open(p->pid, m);

		if (fd >= 0) {
			f->syms = load_syms(t, p, fd);
			note_module(t, p, i, fd, false);
			close(fd);
		}
		*v = f;
	}
	p->files[i] = *v;
	p->files[i]->refs++;
	return p->files[i]->syms;
}

void procs__refresh_behind(struct procs *t, struct proc *p, uint64_t now)
{
	uint64_t id = p->maps_id;

	if (p->exited_ns || now - p->scanned_ns <= BEHIND_RESCAN_NS)
		return;
	proc_scan(t, p, now);
	if (p->maps_id == id || !p->files)
		return;
	for (size_t i = 0; i < p->nmaps; i++) /* files read before are shared: a lookup each */
		mapping_syms(t, p, &p->maps[i], i);
}

uint32_t procs__user_frame(struct procs *t, struct proc *p, uint64_t addr, int leaf, uint64_t now)
{
	/* A return address points after the call: look up the call itself. */
	uint64_t look = leaf || !addr ? addr : addr - 1;
	const struct mapping *m = maps__find(p->maps, p->nmaps, look);
	struct frame f = { .kind = FRAME_NATIVE };

	/* A library loaded since we last looked? A leaf is the sampled PC itself
	 * (an extension just dlopen'd: its first samples); a return address may
	 * be a broken chain's garbage, looked up again less often. */
	if (!m && !p->exited_ns && now - p->scanned_ns > (leaf ? UNKNOWN_RESCAN_NS : RESCAN_NS)) {
		proc_scan(t, p, now);
		m = maps__find(p->maps, p->nmaps, look);
	}
	if (!m || !p->files)
		return profile__frame(t->prof, &f);

	size_t i = (size_t)(m - p->maps);
	struct elf_syms *s = mapping_syms(t, p, m, i);
	uint64_t off = look - m->start + m->pgoff, vaddr = off;

	f.module = p->module[i];
	if (s && elf_syms__offset_to_vaddr(s, off, &vaddr) == 0) {
		const char *name = elf_syms__lookup(s, vaddr, NULL);

		if (name) {
			f.name = profile__str(t->prof, name);
			return profile__frame(t->prof, &f);
		}
	}
	/* No symbol: the function's start by its FDE, so that its samples meet. */
	if (!s || elf_syms__function_start(s, vaddr, &f.offset) != 0)
		f.offset = vaddr;
	return profile__frame(t->prof, &f);
}

void procs__note_exe(struct procs *t, struct proc *p)
{
	char exe[4096];

	if (p->exe_noted || !p->nmaps)
		return;
	p->exe_noted = true;
	/* The link's text, as the maps spell paths: the file itself is never
	 * touched (it may sit on a mount that hangs). */
	if (!exe_path(p->pid, exe, sizeof(exe)) || !strcmp(exe, t->self_exe))
		return;
	for (size_t i = 0; i < p->nmaps; i++)
		if (!strcmp(p->maps[i].path, exe)) {
			note_module(t, p, i, -1, true);
			return;
		}
}

/*
 * A Kubernetes pod's "NAMESPACE/POD" from the node's side: kubelet's log
 * directory of the pod (cgroups.h: k8s_pod_of_uid), which the pod cannot
 * write, unlike its own hostname. Looked up once per pod.
 */
static uint32_t k8s_pod_name(struct procs *t, const char *uid)
{
	bool created;
	uint64_t *v = hashmap__put(t->k8s_pods, uid, strlen(uid), &created);
	char both[300];

	if (created)
		*v = *k8s_pod_of_uid(K8S_PODS_DIR, uid, both, sizeof(both)) ? profile__str(t->prof, both) : 0;
	return (uint32_t)*v;
}

/* Marks a container_names entry as a miss; the rest of it is when. */
#define NAME_MISS (1ULL << 63)

/*
 * A container's name, looked up once per container once known. One not
 * known is asked again, at most once a second, by its processes' samples:
 * kubelet makes a container's log link (its name) only after the container
 * started, and a runtime's state read just before may not have it yet.
 */
static uint32_t container_name(struct procs *t, const char *id, uint64_t now)
{
	uint64_t *v = hashmap__get(t->container_names, id, strlen(id));
	char name[CONTAINER_NAME_MAX];
	bool created;

	if (v && !(*v & NAME_MISS))
		return (uint32_t)*v;
	if (v && now - (*v & ~NAME_MISS) < CONTAINER_NAMES_REREAD_NS)
		return 0;
	container_names__of(&t->names, id, now, name, sizeof(name));
	uint32_t s = *name ? profile__str(t->prof, name) : 0;

	v = hashmap__put(t->container_names, id, strlen(id), &created);
	*v = s ? s : NAME_MISS | (now & ~NAME_MISS);
	return s;
}

void procs__container_labels(struct procs *t, struct proc *p, struct sample_labels *l)
{
	if (!p->ns_read) {
		char path[4096], id[128];

		p->ns_read = true;
		if (proc_cgroup_path((pid_t)p->pid, path, sizeof(path)) == 0) {
			p->cgroup_path = profile__str(t->prof, path);
			p->container = profile__str(t->prof, container_id_of(path, id, sizeof(id)));
			if (*id)
				p->container_name = container_name(t, id, now_ns());
			if (*k8s_pod_uid_of(path, id, sizeof(id)))
				p->k8s_pod = k8s_pod_name(t, id);
		}
		p->ns_pid = proc_ns_pid((pid_t)p->pid);
	} else if (p->container && !p->container_name) { /* not named yet: maybe by now */
		p->container_name = container_name(t, profile__str_at(t->prof, p->container), now_ns());
	}
	l->k8s_pod = p->k8s_pod;
	l->cgroup_path = p->cgroup_path;
	l->container = p->container;
	l->container_name = p->container_name;
	l->ns_pid = p->ns_pid;
}
