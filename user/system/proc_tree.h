/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The processes of a /proc as a tree and by name: what `-p PID` means with its
 * children and `--comm NAME` means at the start of a recording (BPF's fork and
 * exec hooks take over from then on). Free of libbpf: unit tests give it a
 * made-up /proc.
 */
#ifndef PYEBPF_PROC_TREE_H
#define PYEBPF_PROC_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pyebpf.h"

struct proc_stat {
	uint32_t pid, ppid;
	char state;                     /* 'R', 'S', ... 'Z' (zombie), 'X' (dead) */
	char comm[PYEBPF_COMM_LEN + 1]; /* the kernel's name, at most 15 bytes */
};

/* Parse "pid (comm) S ppid ..." (comm may hold spaces and ')'): 0, or -1. */
int proc_stat__parse(const char *buf, size_t len, struct proc_stat *st);
/* Read root/PID/stat, at most one page, without blocking: 0, or -1 (gone). */
int proc_stat__read(const char *root, uint32_t pid, struct proc_stat *st);
/* Alive: neither a zombie nor dead. */
bool proc_stat__alive(const struct proc_stat *st);

/*
 * Every live process of root ("/proc") whose name is one of names[0..nnames)
 * (compared as the kernel keeps names: their first 15 bytes) and, with
 * children, every descendant of those and of roots[0..nroots); roots
 * themselves excluded. *out is malloc'd (free it), sorted by pid; 0, or -1
 * when root cannot be listed.
 */
int proc_tree__find(const char *root, const uint32_t *roots, size_t nroots, const char *const *names, size_t nnames,
		    bool children, uint32_t **out, size_t *nout);

#endif
