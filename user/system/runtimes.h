/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The containers docker, podman and nerdctl know, with their names, read
 * from each runtime's own state on disk: no daemon is asked (there may be
 * none: podman and nerdctl have no daemon, and a daemon's socket is one
 * more thing to trust). Where each keeps it:
 *   docker   DATA_ROOT/containers/ID/config.v2.json (DATA_ROOT/UID.GID/containers
 *            with --userns-remap); DATA_ROOT is
 *            /var/lib/docker, daemon.json's "data-root", and each running
 *            dockerd's --data-root (or its --config-file's "data-root")
 *   podman   containers/storage's GRAPHROOT/DRIVER-containers/containers.json
 *            and volatile-containers.json (--rm), and the same under
 *            RUNROOT (--transient-store): /var/lib/containers/storage,
 *            /run/containers/storage, or storage.conf's graphroot and runroot
 *   nerdctl  DATA_ROOT/ADDRESS_HASH/names/NAMESPACE/NAME holding the id;
 *            DATA_ROOT /var/lib/nerdctl or nerdctl.toml's data_root
 * The places are looked for in the machine's root and in the root of each
 * running dockerd, containerd and conmon (/proc/PID/root: when pyebpf runs
 * in a container of its own with the host's pids, that is the host's
 * root), of processes root runs in pyebpf's own user namespace only.
 * Every file is opened inside its root (symlinks and ".." stay in it, the
 * file itself is never a symlink), regular files only, of bounded size.
 */
#ifndef PYEBPF_RUNTIMES_H
#define PYEBPF_RUNTIMES_H

#include <stddef.h>

#include "system/runtime_state.h"

struct runtime_sources {
	const char *root; /* the machine's root: "/", or a test's tree shaped like one */
	const char *proc; /* where running daemons are found ("/proc"); NULL: nowhere */
};

struct runtime_list {
	struct runtime_container *v; /* sorted by id, one entry per id */
	size_t n, cap;
	char unreadable[256]; /* the first state directory there but not readable (not root?), or "" */
};

/* Every container the sources' state holds into l (empty when there is none); never fails as a whole: a
 * place or file that cannot be read is left out. */
void runtimes__read(const struct runtime_sources *src, struct runtime_list *l);
void runtimes__free(struct runtime_list *l);
/* The entry of this id, or NULL. */
const struct runtime_container *runtimes__find(const struct runtime_list *l, const char *id);

#endif
