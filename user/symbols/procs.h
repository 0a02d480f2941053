/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Processes seen while recording: their executable mappings, read from
 * /proc/PID/maps at first sight (and again after exec, or when an address
 * falls outside every known mapping, e.g. after dlopen), and the symbol
 * tables of their files, cached per file. User addresses become frames here,
 * while the process is alive, so a process that exits keeps its names.
 */
#ifndef PYEBPF_PROCS_H
#define PYEBPF_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct procs;
struct proc;

struct procs *procs__new(struct profile *p);
/* Where detached debug files of stripped files are looked up (by build id),
 * in the process's root first, then on the host; NULL-terminated, kept. */
void procs__set_debug_dirs(struct procs *t, const char *const *dirs);
#define PROCS_DEFAULT_DEBUG_DIR "/usr/lib/debug"
void procs__free(struct procs *t); /* accepts NULL */

/*
 * A process's part here lives in its record of the process table
 * (record/processes.h): *slot, made (and its maps read) when first seen,
 * NULL before. The process's own record decides when it goes.
 */
struct proc *procs__get(struct procs *t, struct proc **slot, uint32_t pid, uint64_t now);
/* The process replaced its image: forget its mappings. */
void procs__exec(struct procs *t, struct proc *p);
/* The process exited: its maps are not read again (NULL accepted). */
void procs__exit(struct proc *p, uint64_t now);
/* The process's part goes; its files' symbols stay cached for 60 s (NULL accepted). */
void procs__drop(struct procs *t, struct proc *p);
/* Free the symbols of files no process has mapped for 60 s. */
void procs__sweep(struct procs *t, uint64_t now);
/* Re-read the maps of a process seen (or exec'd) less than `young_ns` ago,
 * backing off from 5 ms to 200 ms: its libraries (libpython) may still be loading. */
void procs__refresh_young(struct procs *t, struct proc *p, uint64_t now, uint64_t young_ns);
/* Native unwinding met code outside the known mappings (a library loaded
 * since, JIT code): re-read them, at most every 10 ms. True when they changed. */
bool procs__rescan_unknown(struct procs *t, struct proc *p, uint64_t now);
/* Naming is behind sampling (the samples being named were taken a while
 * ago): re-read the maps of a live process at most every 500 ms, and read
 * the symbols of every file it maps then, while it lives to be read: a
 * library it loaded since is named even if it exits before the samples
 * there are named. */
void procs__refresh_behind(struct procs *t, struct proc *p, uint64_t now);
/* Changes whenever the maps of the process changed, and at every re-read
 * of a young process (procs__refresh_young): look at it again. Unique
 * among all processes and over time: a process that exec'd, or a new one
 * under a reused pid, never has a generation seen before. */
uint64_t procs__maps_gen(const struct proc *p);
/* The same, but changed only when the maps did (or the process is a new
 * one): what the names of its addresses depend on. */
uint64_t procs__maps_id(const struct proc *p);
/* Note that p is Python; true the first time in its life (an exec, a shell
 * that execs python, is not a second process). */
bool procs__mark_python(struct proc *p);
/* The name the process gives itself (multiprocessing's `SpawnPoolWorker-1`):
 * a string id, 0 when none is known; whether to look for it (not found, not
 * looked for too often); what a look found (0: nothing). */
uint32_t procs__process_name(const struct proc *p);
bool procs__want_process_name(const struct proc *p);
void procs__set_process_name(struct proc *p, uint32_t name);
/* Note p's executable among the profile's modules (once per image): pprof
 * lists the main binary first. */
void procs__note_exe(struct procs *t, struct proc *p);
/* Processes seen so far, alive or not. */
size_t procs__seen(const struct procs *t);
/* Files whose symbols are cached: those mapped by known processes, and for
 * 60 s those no process maps any more (procs__gc frees them after). */
size_t procs__files(const struct procs *t);

/* The process's cgroup v2 path, container id and in-namespace pid, read once
 * (and again after exec) from /proc. */
void procs__container_labels(struct procs *t, struct proc *p, struct sample_labels *l);

/* The frame id of a user address; `leaf` is false for return addresses. */
uint32_t procs__user_frame(struct procs *t, struct proc *p, uint64_t addr, int leaf, uint64_t now);

#endif
