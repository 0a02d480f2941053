// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "system/runtimes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "system/target_fs.h"

/* Bounds on what hostile or huge state can cost. */
#define MAX_ROOTS 16                 /* distinct roots (the machine's, daemons' other ones) */
#define MAX_PLACES 64                /* distinct state directories read */
#define MAX_CONTAINERS 100000        /* entries kept in all */
#define MAX_DIR_ENTRIES 100000       /* entries looked at in one directory */
#define DOCKER_CONFIG_MAX (4u << 20) /* config.v2.json: a few KB, more with a large environment */
#define STORAGE_LIST_MAX (64u << 20) /* containers.json: ~0.5 KB per container */
#define SETTINGS_MAX (1u << 20)      /* daemon.json, storage.conf, nerdctl.toml */
#define CMDLINE_MAX (64u << 10)

struct reader {
	struct runtime_list *l;
	int roots[MAX_ROOTS];
	struct stat root_st[MAX_ROOTS];
	size_t nroots;
	struct stat places[MAX_PLACES]; /* state directories read already, by device and inode */
	size_t nplaces;
};

static void add(struct reader *r, const struct runtime_container *c)
{
	if (r->l->n >= MAX_CONTAINERS)
		return;
	xgrow(&r->l->v, &r->l->cap, r->l->n + 1, sizeof(*r->l->v));
	r->l->v[r->l->n++] = *c;
}

static void add_cb(void *ctx, const struct runtime_container *c)
{
	add(ctx, c);
}

/*
 * A state directory in a root, opened for reading once however many ways
 * lead to it (the machine's root and a daemon's are often the same); -1
 * when it is not there, unreadable (noted), or read already.
 */
static int open_place(struct reader *r, int rootfd, const char *path)
{
	int fd = root_dir(rootfd, path);
	struct stat st;

	if (fd < 0) {
		if (errno == EACCES && !r->l->unreadable[0])
			snprintf(r->l->unreadable, sizeof(r->l->unreadable), "%s", path);
		return -1;
	}
	if (fstat(fd, &st) || r->nplaces >= MAX_PLACES)
		goto skip;
	for (size_t i = 0; i < r->nplaces; i++)
		if (r->places[i].st_dev == st.st_dev && r->places[i].st_ino == st.st_ino)
			goto skip;
	r->places[r->nplaces++] = st;
	return fd;
skip:
	close(fd);
	return -1;
}

/* Entries of dirfd's subdirectory `sub` (no dot files), each to fn; bounded. */
static void each_entry(int dirfd, const char *sub,
		       void (*fn)(struct reader *r, int dirfd, const char *sub, const char *name), struct reader *r)
{
	DIR *d = root_opendir(dirfd, sub);
	struct dirent *e;
	size_t seen = 0;

	while (d && (e = readdir(d)) && seen++ < MAX_DIR_ENTRIES)
		if (e->d_name[0] != '.')
			fn(r, dirfd, sub, e->d_name);
	if (d)
		closedir(d);
}

/* docker: containers/ID/config.v2.json, whose ID must be its directory's. */
static void docker_container(struct reader *r, int datafd, const char *sub, const char *name)
{
	struct runtime_container c;
	char path[256];
	size_t len;
	char *buf;

	if (!runtime_id_valid(name))
		return;
	snprintf(path, sizeof(path), "%s/%s/config.v2.json", sub, name);
	buf = root_read(datafd, path, DOCKER_CONFIG_MAX, &len);
	if (buf && !runtime_parse_docker(buf, len, &c) && !strcmp(c.id, name))
		add(r, &c);
	free(buf);
}

/* With --userns-remap, dockerd keeps its state one level down, in DATA_ROOT/UID.GID/. */
static void docker_remapped(struct reader *r, int datafd, const char *sub, const char *name)
{
	char path[NAME_MAX + 16];
	unsigned uid, gid;
	int end = 0;

	(void)sub;
	if (sscanf(name, "%u.%u%n", &uid, &gid, &end) == 2 && !name[end] && name[0] >= '0' && name[0] <= '9' &&
	    snprintf(path, sizeof(path), "%s/containers", name) < (int)sizeof(path))
		each_entry(datafd, path, docker_container, r);
}

static void read_docker(struct reader *r, int rootfd, const char *data_root)
{
	int fd = open_place(r, rootfd, data_root);

	if (fd < 0)
		return;
	each_entry(fd, "containers", docker_container, r);
	each_entry(fd, ".", docker_remapped, r);
	close(fd);
}

/* containers/storage: DRIVER-containers/containers.json and volatile-containers.json. */
static void storage_driver(struct reader *r, int storefd, const char *sub, const char *name)
{
	static const char *const lists[] = { "containers.json", "volatile-containers.json" };
	size_t n = strlen(name), len;

	(void)sub;
	if (n <= 11 || strcmp(name + n - 11, "-containers") != 0)
		return;
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		char path[NAME_MAX + 32];
		char *buf;

		snprintf(path, sizeof(path), "%s/%s", name, lists[i]);
		buf = root_read(storefd, path, STORAGE_LIST_MAX, &len);
		if (buf)
			runtime_parse_storage(buf, len, add_cb, r);
		free(buf);
	}
}

static void read_storage(struct reader *r, int rootfd, const char *store)
{
	int fd = open_place(r, rootfd, store);

	if (fd < 0)
		return;
	each_entry(fd, ".", storage_driver, r);
	close(fd);
}

/* nerdctl: HASH/names/NAMESPACE/NAME, a file holding the id. */
static void nerdctl_name(struct reader *r, int datafd, const char *sub, const char *name)
{
	struct runtime_container c;
	char path[PATH_MAX];
	size_t len;
	char *buf;

	if (!runtime_name_valid(name) || snprintf(path, sizeof(path), "%s/%s", sub, name) >= (int)sizeof(path))
		return;
	buf = root_read(datafd, path, 256, &len);
	if (buf && !runtime_parse_nerdctl(name, buf, len, &c))
		add(r, &c);
	free(buf);
}

static void nerdctl_namespace(struct reader *r, int datafd, const char *sub, const char *name)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", sub, name) < (int)sizeof(path))
		each_entry(datafd, path, nerdctl_name, r);
}

static void nerdctl_store(struct reader *r, int datafd, const char *sub, const char *name)
{
	char path[NAME_MAX + 16];

	(void)sub;
	snprintf(path, sizeof(path), "%s/names", name);
	each_entry(datafd, path, nerdctl_namespace, r);
}

static void read_nerdctl(struct reader *r, int rootfd, const char *data_root)
{
	int fd = open_place(r, rootfd, data_root);

	if (fd < 0)
		return;
	each_entry(fd, ".", nerdctl_store, r);
	close(fd);
}

/* A settings file's text in a root, or NULL. */
static char *settings(int rootfd, const char *path, size_t *len)
{
	return root_read(rootfd, path, SETTINGS_MAX, len);
}

static void docker_config_file(struct reader *r, int rootfd, const char *path)
{
	char data_root[PATH_MAX];
	size_t len;
	char *buf = settings(rootfd, path, &len);

	/* "graph" is data-root's name before docker 17.05. */
	if (buf && (!runtime_json_string(buf, len, "data-root", data_root, sizeof(data_root)) ||
		    !runtime_json_string(buf, len, "graph", data_root, sizeof(data_root))))
		read_docker(r, rootfd, data_root);
	free(buf);
}

/* The default places of every runtime in one root. */
static void read_root(struct reader *r, int rootfd)
{
	static const char *const storage_confs[] = { "/etc/containers/storage.conf",
						     "/usr/share/containers/storage.conf" };
	char path[PATH_MAX];
	size_t len;
	char *buf;

	read_docker(r, rootfd, "/var/lib/docker");
	docker_config_file(r, rootfd, "/etc/docker/daemon.json");
	read_storage(r, rootfd, "/var/lib/containers/storage");
	read_storage(r, rootfd, "/run/containers/storage");
	/* The administrator's file, else the distribution's: the first there is read. */
	for (size_t i = 0; i < sizeof(storage_confs) / sizeof(storage_confs[0]); i++) {
		buf = settings(rootfd, storage_confs[i], &len);
		if (!buf)
			continue;
		if (!runtime_toml_string(buf, len, "storage", "graphroot", path, sizeof(path)))
			read_storage(r, rootfd, path);
		if (!runtime_toml_string(buf, len, "storage", "runroot", path, sizeof(path)))
			read_storage(r, rootfd, path);
		free(buf);
		break;
	}
	read_nerdctl(r, rootfd, "/var/lib/nerdctl");
	buf = settings(rootfd, "/etc/nerdctl/nerdctl.toml", &len);
	if (buf && !runtime_toml_string(buf, len, "", "data_root", path, sizeof(path)))
		read_nerdctl(r, rootfd, path);
	free(buf);
}

/* Index of the root fd (added if new, by device and inode); -1 when none is left. fd is taken. */
static int add_root(struct reader *r, int fd)
{
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st))
		goto drop;
	for (size_t i = 0; i < r->nroots; i++)
		if (r->root_st[i].st_dev == st.st_dev && r->root_st[i].st_ino == st.st_ino) {
			close(fd);
			return (int)i;
		}
	if (r->nroots >= MAX_ROOTS)
		goto drop;
	r->roots[r->nroots] = fd;
	r->root_st[r->nroots] = st;
	return (int)r->nroots++;
drop:
	close(fd);
	return -1;
}

/* A small /proc file whole (cmdline, comm); NULL when gone. */
static char *proc_file(const char *proc, const char *pid, const char *what, size_t max, size_t *len)
{
	char path[PATH_MAX];
	int fd;
	char *buf;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/%s/%s", proc, pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = xmalloc(max + 1);
	for (;;) {
		ssize_t k = read(fd, buf + n, max - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
		if (n == max)
			break;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Run by root in pyebpf's user namespace: a daemon whose files say what root's runtime did. A process
 * of another user, or of a user namespace of its own (rootless), could name anything. */
static int trusted(const char *proc, const char *pid)
{
	char path[PATH_MAX];
	struct stat st, mine, theirs;

	snprintf(path, sizeof(path), "%s/%s", proc, pid);
	if (stat(path, &st) || st.st_uid != 0)
		return 0;
	snprintf(path, sizeof(path), "%s/self/ns/user", proc);
	if (stat(path, &mine))
		return 0;
	snprintf(path, sizeof(path), "%s/%s/ns/user", proc, pid);
	return !stat(path, &theirs) && theirs.st_ino == mine.st_ino && theirs.st_dev == mine.st_dev;
}

/* A running dockerd: its root, and the data root its command line names. */
static void dockerd(struct reader *r, const char *proc, const char *pid, int root)
{
	char data_root[PATH_MAX], config[PATH_MAX];
	size_t len;
	char *cmd = proc_file(proc, pid, "cmdline", CMDLINE_MAX, &len);

	if (!cmd)
		return;
	runtime_dockerd_args(cmd, len, data_root, sizeof(data_root), config, sizeof(config));
	free(cmd);
	if (data_root[0])
		read_docker(r, r->roots[root], data_root);
	else if (config[0])
		docker_config_file(r, r->roots[root], config);
}

/* A running conmon: the storage of the podman that started it (its --root and --runroot, which may be
 * neither the default nor storage.conf's). */
static void conmon(struct reader *r, const char *proc, const char *pid, int root)
{
	char graphroot[PATH_MAX], runroot[PATH_MAX];
	size_t len;
	char *cmd = proc_file(proc, pid, "cmdline", CMDLINE_MAX, &len);

	if (!cmd)
		return;
	runtime_conmon_args(cmd, len, graphroot, sizeof(graphroot), runroot, sizeof(runroot));
	free(cmd);
	if (graphroot[0])
		read_storage(r, r->roots[root], graphroot);
	if (runroot[0])
		read_storage(r, r->roots[root], runroot);
}

/* The roots of running dockerd, containerd (nerdctl's) and conmon (podman's) processes. */
static void read_daemons(struct reader *r, const char *proc)
{
	DIR *d = opendir(proc);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[PATH_MAX], *comm;
		size_t len;
		int root;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		comm = proc_file(proc, e->d_name, "comm", 64, &len);
		if (!comm)
			continue;
		comm[strcspn(comm, "\n")] = '\0';
		if ((!strcmp(comm, "dockerd") || !strcmp(comm, "containerd") || !strcmp(comm, "conmon")) &&
		    trusted(proc, e->d_name)) {
			snprintf(path, sizeof(path), "%s/%s/root", proc, e->d_name);
			root = add_root(r, open(path, O_PATH | O_DIRECTORY | O_CLOEXEC));
			if (root >= 0 && !strcmp(comm, "dockerd"))
				dockerd(r, proc, e->d_name, root);
			else if (root >= 0 && !strcmp(comm, "conmon"))
				conmon(r, proc, e->d_name, root);
		}
		free(comm);
	}
	if (d)
		closedir(d);
}

static int by_id(const void *a, const void *b)
{
	return strcmp(((const struct runtime_container *)a)->id, ((const struct runtime_container *)b)->id);
}

/* One entry per id (a runtime's lists may repeat one): a named one over an unnamed. */
static void unique(struct runtime_list *l)
{
	size_t k = 0;

	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof(*l->v), by_id);
	for (size_t i = 0; i < l->n; i++) {
		if (k && !strcmp(l->v[k - 1].id, l->v[i].id)) {
			if (!l->v[k - 1].name[0] && l->v[i].name[0])
				l->v[k - 1] = l->v[i];
			continue;
		}
		l->v[k++] = l->v[i];
	}
	l->n = k;
}

void runtimes__read(const struct runtime_sources *src, struct runtime_list *l)
{
	struct reader r = { .l = l };

	memset(l, 0, sizeof(*l));
	add_root(&r, open(src->root ? src->root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC));
	if (src->proc)
		read_daemons(&r, src->proc);
	for (size_t i = 0; i < r.nroots; i++)
		read_root(&r, r.roots[i]);
	for (size_t i = 0; i < r.nroots; i++)
		close(r.roots[i]);
	unique(l);
}

void runtimes__free(struct runtime_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

const struct runtime_container *runtimes__find(const struct runtime_list *l, const char *id)
{
	struct runtime_container key = { 0 };

	if (!l->n || strlen(id) >= sizeof(key.id))
		return NULL;
	snprintf(key.id, sizeof(key.id), "%s", id);
	return bsearch(&key, l->v, l->n, sizeof(*l->v), by_id);
}
