/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Every container's and every Kubernetes pod's cgroup under the cgroup2
 * mount, found by the names the runtimes and kubelet give them
 * (container_id_of's docker-ID.scope, cri-containerd-ID.scope, .../ID...;
 * k8s_pod_uid_of's pod<UID> and kubepods-...-pod<UID>.slice): a running
 * container is one with a cgroup, whichever runtime made it. A parent such
 * as /docker or /kubepods is never one. One walk, bounded in depth (as
 * deep as BPF matches ancestors) and in directories.
 */
#ifndef PYEBPF_CGROUP_SCAN_H
#define PYEBPF_CGROUP_SCAN_H

#include <stddef.h>
#include <stdint.h>

struct cgroup_found {
	char *key;   /* the container id, or the pod UID */
	char *dir;   /* its cgroup directory (the shallowest, when its own children carry the key too) */
	uint64_t id; /* the directory's inode: the cgroup id BPF sees */
	int depth;
};

struct cgroup_scan {
	struct cgroup_found *containers; /* sorted by key */
	size_t ncontainers, ccap;
	struct cgroup_found *pods; /* sorted by key */
	size_t npods, pcap;
};

/* Walk the tree under mount into s; 0, or -1 when the mount cannot be read (s empty). */
int cgroup_scan__run(const char *mount, struct cgroup_scan *s);
void cgroup_scan__free(struct cgroup_scan *s);
/* The container (pod) of this exact key, or NULL. */
const struct cgroup_found *cgroup_scan__container(const struct cgroup_scan *s, const char *id);
const struct cgroup_found *cgroup_scan__pod(const struct cgroup_scan *s, const char *uid);

#endif
