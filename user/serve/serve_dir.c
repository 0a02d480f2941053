// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "serve/serve_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/pprof.h"
#include "archive/rotation.h"
#include "base/util.h"

static void identity(struct serve_file *f, const struct stat *st)
{
	f->size = (uint64_t)st->st_size;
	f->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
	f->dev = (uint64_t)st->st_dev;
	f->ino = (uint64_t)st->st_ino;
}

/* rotation_list's files (the same names, the same checks, the same order),
 * each with the identity a later read must find again. */
struct serve_file *serve_dir__list(int dirfd, size_t *n)
{
	struct rotation_file *r = rotation_list(dirfd, n);
	struct serve_file *v = *n ? xcalloc(*n, sizeof(*v)) : NULL;

	for (size_t i = 0; i < *n; i++) {
		v[i] = (struct serve_file){ .name = r[i].name,
					    .seq = r[i].seq,
					    .size = r[i].size,
					    .start_ns = r[i].start_ns,
					    .mtime_ns = r[i].mtime_ns,
					    .dev = r[i].dev,
					    .ino = r[i].ino };
		r[i].name = NULL; /* now v's */
	}
	rotation_list_free(r, *n);
	return v;
}

void serve_dir__free(struct serve_file *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].name);
	free(v);
}

bool serve_file__same(const struct serve_file *a, const struct serve_file *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns;
}

/* The open file's bytes, up to max_size; NULL with why. */
static uint8_t *read_all(int fd, uint64_t max_size, size_t *len, char *why, size_t whylen)
{
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;

	for (;;) {
		ssize_t r;

		if (n > max_size) {
			snprintf(why, whylen, "larger than %llu MiB", (unsigned long long)(max_size >> 20));
			break;
		}
		xgrow(&buf, &cap, n + 65536, 1);
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(why, whylen, "cannot read: %s", strerror(errno));
			break;
		}
		if (!r) {
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	return NULL;
}

struct profile *serve_dir__read(int dirfd, const struct serve_file *f, uint64_t max_size, char *why, size_t whylen)
{
	/* O_NOFOLLOW: a link fails (ELOOP); O_NONBLOCK: a FIFO is not waited on. */
	int fd = openat(dirfd, f->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct serve_file now = { 0 };
	struct profile *p = NULL;
	uint8_t *data;
	struct stat st;
	size_t len = 0;
	char pwhy[200];

	if (fd < 0) {
		snprintf(why, whylen, "%s",
			 errno == ELOOP    ? "not a regular file"
			 : errno == ENOENT ? "gone since it was listed"
					   : strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not a regular file");
		close(fd);
		return NULL;
	}
	identity(&now, &st);
	if (!serve_file__same(&now, f)) {
		snprintf(why, whylen, "replaced since it was listed");
		close(fd);
		return NULL;
	}
	data = read_all(fd, max_size, &len, why, whylen);
	close(fd);
	if (!data)
		return NULL;
	p = pprof__read(data, len, pwhy, sizeof(pwhy));
	free(data);
	if (!p)
		snprintf(why, whylen, "cannot read: %s", pwhy);
	return p;
}
