/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The ids of tracepoints (events/SYSTEM/NAME/id in the tracing filesystem)
 * where no tracing filesystem is mounted: a fresh host, most containers
 * and a DaemonSet that mounts debugfs alone have none. A child process in
 * a mount namespace of its own (private, so nothing propagates back)
 * mounts tracefs there, reads the ids and ends; the namespace ends with it
 * and the host's mounts are never touched. A perf event opened by id
 * (PERF_TYPE_TRACEPOINT) needs no filesystem after that.
 */
#ifndef PYEBPF_TRACEFS_IDS_H
#define PYEBPF_TRACEFS_IDS_H

#include <stddef.h>
#include <stdint.h>

/* ids[i] of events[i] ("syscalls/sys_enter_munmap"); 0 when all n were
 * read, else -1 with errno (EPERM: no right to mount, ENOENT: the kernel
 * has no such event). */
int tracefs_event_ids(const char *const events[], size_t n, uint64_t *ids);

#endif
