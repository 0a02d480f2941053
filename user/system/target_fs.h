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

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>

/* A read-only fd of `path` (absolute: in pid's root; relative: beneath its
 * working directory); -1 with errno (EINVAL: not a regular file). pid 0
 * means pyebpf's own view of the host, with the same checks. */
int target_open(uint32_t pid, const char *path);
/* At most max bytes of the file from the start into a new buffer (*len set,
 * NUL-terminated); NULL with errno when it cannot be opened. */
char *target_read(uint32_t pid, const char *path, size_t max, size_t *len);

/*
 * The same rules inside a root given as a directory fd (a machine's root, or
 * a daemon's /proc/PID/root): `path` resolved in it, so neither ".." nor a
 * symlink leaves it; the last component is never followed (O_NOFOLLOW: a
 * state file that is a symlink is refused, not read elsewhere).
 */
/* A read-only fd of a regular file; -1 with errno (EINVAL: not a regular file). */
int root_open(int rootfd, const char *path);
/* The whole file into a new NUL-terminated buffer (*len set) if it holds at
 * most max bytes; NULL with errno (EFBIG: larger) otherwise. */
char *root_read(int rootfd, const char *path, size_t max, size_t *len);
/* A directory's fd (to read in as a root itself, or list); -1 with errno. */
int root_dir(int rootfd, const char *path);
/* A directory, for readdir; NULL with errno. */
DIR *root_opendir(int rootfd, const char *path);

#endif
