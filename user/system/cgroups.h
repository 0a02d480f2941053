/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * cgroup v2 and containers: where the cgroup2 hierarchy is mounted (beside
 * v1 controllers on hybrid systems), which cgroup a --cgroup argument
 * names, the container id and pod UID a cgroup path carries, and a
 * process's cgroup and in-namespace pid. A --container argument:
 * container_find.h; --pod: pod_find.h.
 */
#ifndef PYEBPF_CGROUPS_H
#define PYEBPF_CGROUPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The cgroup2 mount point from a mounts file (/proc/mounts); 0, or -1 when none. */
int cgroup2_mount(const char *mounts_file, char *out, size_t size);

/*
 * The cgroup a --cgroup argument names: an absolute directory under the mount,
 * or a path relative to it ("/system.slice/x.scope" as /proc/PID/cgroup
 * writes it, or "system.slice/x.scope"). Fills its directory and id (the
 * directory's inode number, which is the cgroup id BPF sees); 0, or -1 with
 * the reason in why.
 */
int cgroup_resolve(const char *mount, const char *arg, char *dir, size_t dirlen, uint64_t *id, char *why,
		   size_t whylen);

/*
 * The container id in a cgroup path (the deepest component naming one), or
 * "" when the path names no container. Returns out.
 */
const char *container_id_of(const char *cgroup_path, char *out, size_t size);

/*
 * The Kubernetes pod UID in a cgroup path kubelet made, or "" (returns out):
 * the systemd driver's ".../kubepods-burstable-pod<UID, '_' for '-'>.slice/..."
 * and the cgroupfs driver's "/kubepods/burstable/pod<UID>/...", the UID
 * given back with '-'. Nothing outside a "kubepods" tree is taken.
 */
const char *k8s_pod_uid_of(const char *cgroup_path, char *out, size_t size);

/* Where kubelet keeps each pod's logs: NAMESPACE_NAME_UID per pod. */
#define K8S_PODS_DIR "/var/log/pods"

/*
 * The "NAMESPACE/NAME" of the pod with this UID, from the entry of
 * pods_dir (K8S_PODS_DIR) that kubelet names NAMESPACE_NAME_UID (neither
 * part can hold '_'), or "" (returns out). On the node's side: a pod can
 * write its own hostname, not this.
 */
const char *k8s_pod_of_uid(const char *pods_dir, const char *uid, char *out, size_t size);

/* Where kubelet links each container's log: POD_NAMESPACE_CONTAINER-ID.log. */
#define K8S_CONTAINERS_DIR "/var/log/containers"

/*
 * The Kubernetes name of the container with this id (64 hex digits), from
 * the entry of containers_dir (K8S_CONTAINERS_DIR) that kubelet names
 * POD_NAMESPACE_CONTAINER-ID.log (no part can hold '_'; a container's name
 * is a DNS label), or "" (returns out). Only names are read, never a link.
 */
const char *k8s_container_of_id(const char *containers_dir, const char *id, char *out, size_t size);

/* A process's cgroup v2 path ("/system.slice/x.scope") from /proc/PID/cgroup; 0 or -1. */
int proc_cgroup_path(pid_t pid, char *out, size_t size);
/* A process's pid in its own (innermost) pid namespace, from /proc/PID/status; 0 when unknown. */
uint32_t proc_ns_pid(pid_t pid);

#endif
