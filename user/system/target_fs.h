/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Files a profiled process names (its code's file names, its mapped files,
 * the debug files in its root), opened as that process sees them and never
 * as root on the host sees them: resolved inside /proc/PID/root with
 * openat2(RESOLVE_IN_ROOT), so an absolute symlink in a container cannot
 * reach a host file; relative names beneath the process's working
 * directory; no procfs magic links (/dev/stdin). Only regular files, opened
 * without blocking: a FIFO or a device never stalls the recorder.
 */
#ifndef PYEBPF_TARGET_FS_H
#define PYEBPF_TARGET_FS_H

#include <stddef.h>
#include <stdint.h>

/* A read-only fd of `path` (absolute: in pid's root; relative: beneath its
 * working directory); -1 with errno (EINVAL: not a regular file). pid 0
 * means pyebpf's own view of the host, with the same checks. */
int target_open(uint32_t pid, const char *path);
/* At most max bytes of the file from the start into a new buffer (*len set,
 * NUL-terminated); NULL with errno when it cannot be opened. */
char *target_read(uint32_t pid, const char *path, size_t max, size_t *len);

#endif
