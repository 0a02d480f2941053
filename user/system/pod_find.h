/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Which cgroup a --pod NAMESPACE/NAME argument names, from what kubelet
 * leaves on the node, without an API server: its log directories
 * (/var/log/pods/NAMESPACE_NAME_UID) give the pod's UID, and the pod's
 * cgroup is the one kubelet names after that UID (cgroupfs driver:
 * kubepods/QOS/pod<UID>; systemd driver: kubepods-QOS-pod<UID, '_' for
 * '-'>.slice). That group holds every container of the pod, the ones it
 * restarts or adds later included: BPF keeps a task whose ancestor is a
 * target.
 */
#ifndef PYEBPF_POD_FIND_H
#define PYEBPF_POD_FIND_H

#include <stddef.h>
#include <stdint.h>

/* Pods an unknown argument's error line lists. */
#define POD_LIST_MAX 10

struct pod_match {
	char uid[37];
	char dir[4096];     /* the pod's cgroup directory */
	uint64_t cgroup_id; /* its id, as BPF sees it */
	size_t ncontainers; /* container cgroups below it now (its sandbox's included) */
};

/*
 * The running pods of that namespace and name under mount (*v allocated,
 * *n of them; two only while one with the name replaces another). 0, or
 * -1 with one line in why: the argument's form, no such pod on this node
 * (with the pods running here), a pod with no cgroup.
 */
int pod_find(const char *pods_dir, const char *mount, const char *arg, struct pod_match **v, size_t *n, char *why,
	     size_t whylen);

#endif
