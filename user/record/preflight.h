/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What `record` checks before anything is loaded, each failure one error
 * line: privileges, the kernel's rate limit, the target processes, the
 * output directory, and --cgroup/--container/--pod resolved to cgroup ids.
 */
#ifndef PYEBPF_PREFLIGHT_H
#define PYEBPF_PREFLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/record_args.h"
#include "system/container_watch.h"

/* Root, or CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) in the effective set. */
bool preflight_privileged(void);
/* -F within kernel.perf_event_max_sample_rate. */
int preflight_rate(uint64_t freq);
/* Every -p names a live process, not a thread of one. */
int preflight_targets(const uint32_t *pids, size_t n);
/* --continuous DIR: made if missing, and proven writable. */
int preflight_dir(const char *dir);
/* --cgroup, --container and --pod to cgroup v2 ids (*ids allocated; NULL when none given); the
 * containers into *watch, which follows them (NULL without --container; the caller frees it). */
int preflight_cgroups(const struct record_opts *o, uint64_t **ids, size_t *n, struct container_watch **watch);
/* Is any of the -p processes still running (not a zombie)? */
bool targets_alive(const uint32_t *pids, size_t n);

#endif
