// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "system/proc_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

int proc_stat__parse(const char *buf, size_t len, struct proc_stat *st)
{
	/* comm may hold ')' too: the last one closes it. */
	const char *open = memchr(buf, '(', len), *close = memrchr(buf, ')', len);
	char *end;
	unsigned long pid, ppid;

	if (!open || !close || close < open || (size_t)(close - open - 1) > PYEBPF_COMM_LEN - 1)
		return -1;
	errno = 0;
	pid = strtoul(buf, &end, 10);
	if (errno || end == buf || *end != ' ' || end + 1 != open || pid == 0 || pid > UINT32_MAX)
		return -1;
	/* ") S ppid " */
	if (buf + len - close < 5 || close[1] != ' ' || close[3] != ' ')
		return -1;
	ppid = strtoul(close + 4, &end, 10);
	if (errno || end == close + 4 || end > buf + len || ppid > UINT32_MAX)
		return -1;
	st->pid = (uint32_t)pid;
	st->ppid = (uint32_t)ppid;
	st->state = close[2];
	memcpy(st->comm, open + 1, (size_t)(close - open - 1));
	st->comm[close - open - 1] = '\0';
	return 0;
}

int proc_stat__read(const char *root, uint32_t pid, struct proc_stat *st)
{
	char path[PATH_MAX], buf[1024];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%u/stat", root, pid);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return proc_stat__parse(buf, (size_t)n, st);
}

bool proc_stat__alive(const struct proc_stat *st)
{
	return st->state != 'Z' && st->state != 'X';
}

static bool name_wanted(const char *comm, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(comm, names[i], PYEBPF_COMM_LEN - 1))
			return true;
	return false;
}

static int cmp_pid(const void *a, const void *b)
{
	uint32_t x = ((const struct proc_stat *)a)->pid, y = ((const struct proc_stat *)b)->pid;

	return (x > y) - (x < y);
}

/* The index of pid in all[0..n) sorted by pid, or -1. */
static long index_of(const struct proc_stat *all, size_t n, uint32_t pid)
{
	struct proc_stat key = { .pid = pid };
	const struct proc_stat *hit = n ? bsearch(&key, all, n, sizeof(*all), cmp_pid) : NULL;

	return hit ? hit - all : -1;
}

/* Every live process of root, read once, sorted by pid: the tree is decided on this snapshot. */
static int snapshot(const char *root, struct proc_stat **all, size_t *n)
{
	DIR *d = opendir(root);
	struct dirent *de;
	size_t cap = 0;

	*all = NULL;
	*n = 0;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);
		struct proc_stat st;

		if (*end || end == de->d_name || !pid || pid > UINT32_MAX)
			continue;
		if (proc_stat__read(root, (uint32_t)pid, &st) || !proc_stat__alive(&st))
			continue; /* gone since the listing */
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			*all = xrealloc(*all, cap * sizeof(**all));
		}
		(*all)[(*n)++] = st;
	}
	closedir(d);
	if (*n)
		qsort(*all, *n, sizeof(**all), cmp_pid);
	return 0;
}

int proc_tree__find(const char *root, const uint32_t *roots, size_t nroots, const char *const *names, size_t nnames,
		    bool children, uint32_t **out, size_t *nout)
{
	enum {
		NO = 0,
		ROOT,
		FOUND
	};
	struct proc_stat *all;
	unsigned char *mark;
	size_t n, found = 0;
	bool grew = true;

	*out = NULL;
	*nout = 0;
	if (snapshot(root, &all, &n))
		return -1;
	mark = xcalloc(n ? n : 1, 1);
	for (size_t i = 0; i < nroots; i++) {
		long at = index_of(all, n, roots[i]);

		if (at >= 0)
			mark[at] = ROOT;
	}
	for (size_t i = 0; i < n; i++)
		if (mark[i] == NO && name_wanted(all[i].comm, names, nnames))
			mark[i] = FOUND;
	/* Descendants, a generation a round, until none is added: at most the
	 * tree's depth rounds (each adds a process or ends the loop). */
	while (children && grew) {
		grew = false;
		for (size_t i = 0; i < n; i++) {
			long parent = mark[i] == NO ? index_of(all, n, all[i].ppid) : -1;

			if (parent >= 0 && mark[parent] != NO) {
				mark[i] = FOUND;
				grew = true;
			}
		}
	}
	*out = xcalloc(n ? n : 1, sizeof(**out));
	for (size_t i = 0; i < n; i++)
		if (mark[i] == FOUND)
			(*out)[found++] = all[i].pid; /* sorted, as all is */
	free(mark);
	free(all);
	*nout = found;
	return 0;
}
