// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "system/target_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"

/* O_NONBLOCK: opening a FIFO would otherwise wait for a writer. */
#define OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

static int openat2_(int dirfd, const char *path, uint64_t resolve)
{
	struct open_how how = { .flags = OPEN_FLAGS, .resolve = resolve };

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* Only a regular file is read: anything else is closed and refused. */
static int regular_only(int fd)
{
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

int target_open(uint32_t pid, const char *path)
{
	char dir[64];
	int dfd, fd, saved;

	if (!pid)
		return regular_only(open(path, OPEN_FLAGS));
	snprintf(dir, sizeof(dir), "/proc/%u/%s", pid, path[0] == '/' ? "root" : "cwd");
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	/* In its root, "/" and ".." stop at that root; beneath its working
	 * directory a relative name cannot climb out at all (its root is not
	 * known from there), and absolute symlinks are refused. */
	fd = openat2_(dfd, path[0] == '/' ? path + 1 : path,
		      RESOLVE_NO_MAGICLINKS | (path[0] == '/' ? RESOLVE_IN_ROOT : RESOLVE_BENEATH));
	saved = errno;
	close(dfd);
	errno = saved;
	return regular_only(fd);
}

char *target_read(uint32_t pid, const char *path, size_t max, size_t *len)
{
	int fd = target_open(pid, path);
	char *buf;
	size_t n = 0;

	if (fd < 0)
		return NULL;
	buf = xmalloc(max + 1);
	while (n < max) {
		ssize_t r = read(fd, buf + n, max - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* A path inside a root, relative to its fd: "/a/b" is "a/b", "/" the root itself. */
static const char *in_root(const char *path)
{
	while (path[0] == '/')
		path++;
	return path[0] ? path : ".";
}

int root_open(int rootfd, const char *path)
{
	struct open_how how = { .flags = OPEN_FLAGS | O_NOFOLLOW, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };

	return regular_only((int)syscall(SYS_openat2, rootfd, in_root(path), &how, sizeof(how)));
}

char *root_read(int rootfd, const char *path, size_t max, size_t *len)
{
	int fd = root_open(rootfd, path);
	struct stat st;
	size_t n = 0, size;
	char *buf;

	if (fd < 0)
		return NULL;
	/* Refused whole when larger: a cut document is not the runtime's. */
	if (fstat(fd, &st) || (uint64_t)st.st_size > max) {
		close(fd);
		errno = EFBIG;
		return NULL;
	}
	size = (size_t)st.st_size;
	buf = xmalloc(size + 2);
	/* One byte more than its size asks whether it grew while read. */
	for (;;) {
		ssize_t r = read(fd, buf + n, size + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n > size) {
			close(fd);
			free(buf);
			errno = EAGAIN;
			return NULL;
		}
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

int root_dir(int rootfd, const char *path)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };

	return (int)syscall(SYS_openat2, rootfd, in_root(path), &how, sizeof(how));
}

DIR *root_opendir(int rootfd, const char *path)
{
	int fd = root_dir(rootfd, path), saved;
	DIR *d;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		saved = errno;
		close(fd);
		errno = saved;
	}
	return d;
}
