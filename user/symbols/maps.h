/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* /proc/PID/maps: which file backs which address range. */
#ifndef PYEBPF_MAPS_H
#define PYEBPF_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mapping {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;      /* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char perms[5]; /* "r-xp" */
	bool deleted;  /* the path ended in " (deleted)" (removed from the line) */
	char *path;    /* "" for anonymous memory; "[vdso]", "[stack]"... */
};

/* Parse one line; 0, or -1 when it is not a maps line. m->path is allocated. */
int maps__parse_line(const char *line, struct mapping *m);
/* Read /proc/PID/maps (or any file in that format); only executable mappings when exec_only.
 * Returns 0 or -errno; the array is sorted by start. */
int maps__read_file(const char *path, bool exec_only, struct mapping **out, size_t *n);
int maps__read(int pid, bool exec_only, struct mapping **out, size_t *n);
void maps__free(struct mapping *m, size_t n);
/* What identifies a mapped file across processes: its device and inode. */
struct file_key {
	uint32_t dev_major, dev_minor;
	uint64_t inode;
};

static inline struct file_key mapping__file_key(const struct mapping *m)
{
	return (struct file_key){ m->dev_major, m->dev_minor, m->inode };
}

/* Open the file behind a mapping of a live process as that process sees it:
 * through /proc/PID/map_files (deleted files, other mount namespaces), else
 * through /proc/PID/root. Never by the host's path, which may name another
 * file. An fd, or -1. */
int maps__open(uint32_t pid, const struct mapping *m);

/* The mapping containing addr, or NULL. */
const struct mapping *maps__find(const struct mapping *m, size_t n, uint64_t addr);

#endif
