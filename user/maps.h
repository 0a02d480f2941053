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
	char perms[5];       /* "r-xp" */
	bool deleted;        /* the path ended in " (deleted)" (removed from the line) */
	char *path;          /* "" for anonymous memory; "[vdso]", "[stack]"... */
};

/* Parse one line; 0, or -1 when it is not a maps line. m->path is allocated. */
int maps__parse_line(const char *line, struct mapping *m);
/* Read /proc/PID/maps (or any file in that format); only executable mappings when exec_only.
 * Returns 0 or -errno; the array is sorted by start. */
int maps__read_file(const char *path, bool exec_only, struct mapping **out, size_t *n);
int maps__read(int pid, bool exec_only, struct mapping **out, size_t *n);
void maps__free(struct mapping *m, size_t n);
/* The mapping containing addr, or NULL. */
const struct mapping *maps__find(const struct mapping *m, size_t n, uint64_t addr);

#endif
