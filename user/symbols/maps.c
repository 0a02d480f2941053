// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "symbols/maps.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "system/target_fs.h"
#include "base/util.h"

int maps__parse_line(const char *line, struct mapping *m)
{
	unsigned long long start, end, pgoff, inode;
	unsigned int maj, min;
	char perms[8];
	int pos = 0;
	size_t len;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end, perms, &pgoff, &maj, &min, &inode, &pos) != 7)
		return -1;
	if (end < start || strlen(perms) != 4)
		return -1;
	line += pos;
	while (*line == ' ' || *line == '\t')
		line++;
	len = strcspn(line, "\n");
	static const char deleted[] = " (deleted)";
	if (len >= sizeof(deleted) - 1 &&
	    memcmp(line + len - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1) == 0) {
		len -= sizeof(deleted) - 1;
		m->deleted = true;
	}
	m->path = xmalloc(len + 1);
	memcpy(m->path, line, len);
	m->path[len] = '\0';
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->inode = inode;
	m->dev_major = maj;
	m->dev_minor = min;
	memcpy(m->perms, perms, 5);
	return 0;
}

static int cmp_start(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int maps__read_file(const char *path, bool exec_only, struct mapping **out, size_t *n)
{
	FILE *f = fopen(path, "re");
	struct mapping *v = NULL;
	size_t cnt = 0, cap = 0, lcap = 0;
	char *line = NULL;

	*out = NULL;
	*n = 0;
	if (!f)
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
		struct mapping m;

		if (maps__parse_line(line, &m))
			continue;
		if (exec_only && m.perms[2] != 'x') {
			free(m.path);
			continue;
		}
		xgrow(&v, &cap, cnt + 1, sizeof(*v));
		v[cnt++] = m;
	}
	free(line);
	/* A process that exits while we read leaves an empty file. */
	int err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (err) {
		maps__free(v, cnt);
		return err;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_start);
	*out = v;
	*n = cnt;
	return 0;
}

int maps__read(int pid, bool exec_only, struct mapping **out, size_t *n)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	return maps__read_file(path, exec_only, out, n);
}

void maps__free(struct mapping *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].path);
	free(m);
}

int maps__open(uint32_t pid, const struct mapping *m)
{
	char path[4096 + 64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || m->path[0] != '/')
		return fd;
	return target_open(pid, m->path);
}

const struct mapping *maps__find(const struct mapping *m, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m[mid].start)
			hi = mid;
		else if (addr >= m[mid].end)
			lo = mid + 1;
		else
			return &m[mid];
	}
	return NULL;
}
