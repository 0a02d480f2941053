// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/preflight.h"

#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "system/cgroups.h"
#include "system/container_find.h"
#include "system/container_watch.h"
#include "system/pod_find.h"
#include "system/proc_tree.h"
#include "base/util.h"

bool preflight_privileged(void)
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

int preflight_rate(uint64_t freq)
{
	long max_rate = read_sysctl_long("/proc/sys/kernel/perf_event_max_sample_rate");

	if (max_rate > 0 && freq > (uint64_t)max_rate) {
		err_msg("-F %llu is above the kernel's limit of %ld Hz (kernel.perf_event_max_sample_rate)",
			(unsigned long long)freq, max_rate);
		return -1;
	}
	return 0;
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

int preflight_targets(const uint32_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t tgid = tgid_of(pids[i]);

		if (!tgid) {
			err_msg("no process with pid %u", pids[i]);
			return -1;
		}
		if (tgid != pids[i]) {
			err_msg("pid %u is a thread of process %u: use -p %u", pids[i], tgid, tgid);
			return -1;
		}
	}
	return 0;
}

int preflight_dir(const char *dir)
{
	char *probe;
	int fd;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		err_msg("cannot create the directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	probe = xasprintf("%s/.pyebpf-probe-XXXXXX", dir);
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

static void add_id(uint64_t **ids, size_t *n, size_t *cap, uint64_t id)
{
	xgrow(ids, cap, *n + 1, sizeof(**ids));
	(*ids)[(*n)++] = id;
}

int preflight_cgroups(const struct record_opts *o, uint64_t **ids, size_t *n, struct container_watch **watch)
{
	char mount[1024], dir[4096], why[2048];
	size_t cap = 0;

	*ids = NULL;
	*n = 0;
	*watch = NULL;
	if (!o->ncgroups && !o->ncontainers && !o->npods)
		return 0;
	if (cgroup2_mount("/proc/mounts", mount, sizeof(mount))) {
		err_msg("no cgroup v2 hierarchy is mounted (needed by --cgroup, --container and --pod)");
		return -1;
	}
	for (size_t i = 0; i < o->ncgroups; i++) {
		struct statfs fs;
		uint64_t id;

		if (cgroup_resolve(mount, o->cgroups[i], dir, sizeof(dir), &id, why, sizeof(why))) {
			err_msg("--cgroup: %s", why);
			return -1;
		}
		/* A plain directory that happens to sit under the mount point. */
		if (statfs(dir, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC) {
			err_msg("--cgroup: '%s' is not a cgroup v2 directory", o->cgroups[i]);
			return -1;
		}
		add_id(ids, n, &cap, id);
	}
	for (size_t i = 0; i < o->ncontainers; i++) {
		struct container_match m;

		if (container_find(&container_sources_host, mount, o->container_ids[i], &m, why, sizeof(why))) {
			err_msg("--container: %s", why);
			return -1;
		}
		add_id(ids, n, &cap, m.cgroup_id);
		if (!*watch)
			*watch = container_watch__new(&container_sources_host, mount);
		container_watch__add(*watch, o->container_ids[i], &m);
	}
	for (size_t i = 0; i < o->npods; i++) {
		struct pod_match *pods;
		size_t npods;

		if (pod_find(K8S_PODS_DIR, mount, o->pods[i], &pods, &npods, why, sizeof(why))) {
			err_msg("--pod: %s", why);
			return -1;
		}
		for (size_t k = 0; k < npods; k++)
			add_id(ids, n, &cap, pods[k].cgroup_id);
		free(pods);
	}
	return 0;
}

bool targets_alive(const uint32_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct proc_stat st;

		if (!proc_stat__read("/proc", pids[i], &st) && proc_stat__alive(&st))
			return true;
	}
	return false;
}
