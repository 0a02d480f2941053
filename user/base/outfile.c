// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Where an output goes decides how it is written:
 * - "-": standard output, written into;
 * - an existing character device or FIFO (/dev/null, a pipe): written into,
 *   never replaced, as every Unix tool does; a FIFO is opened when the
 *   output is written, so that a recording does not wait for its reader;
 * - a regular file, new or existing: a temporary file beside it, renamed
 *   over it on commit, so it appears whole or not at all. An existing file
 *   keeps its owner and mode; a file with other hard links is refused (a
 *   rename would cut them); a new file gets 0666 less the umask;
 * - a symbolic link: written through to its target by the rules above;
 * - anything else (a directory, a socket): refused.
 * Temporary files are named ".NAME.pyebpf-XXXXXX" and locked while written:
 * one left by a killed pyebpf is removed by the next write into the same
 * directory (never one another pyebpf is still writing).
 */
#include "base/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

#define TMP_TAG ".pyebpf-"

static void split(const char *path, char *dir, size_t dirlen, const char **base)
{
	const char *slash = strrchr(path, '/');

	*base = slash ? slash + 1 : path;
	if (!slash)
		snprintf(dir, dirlen, ".");
	else if (slash == path)
		snprintf(dir, dirlen, "/");
	else
		snprintf(dir, dirlen, "%.*s", (int)(slash - path), path);
}

/* ".NAME.pyebpf-" + 6 characters: the temporary files of NAME. */
static bool is_tmp_of(const char *entry, const char *base)
{
	size_t bl = strlen(base), tl = strlen(TMP_TAG);

	return entry[0] == '.' && !strncmp(entry + 1, base, bl) && !strncmp(entry + 1 + bl, TMP_TAG, tl) &&
	       strlen(entry + 1 + bl + tl) == 6;
}

/* Remove temporary files of `base` that nobody holds locked: a killed pyebpf's. */
static void remove_stale(const char *dir, const char *base)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct stat st;
		int fd;

		if (!is_tmp_of(e->d_name, base))
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() && !flock(fd, LOCK_EX | LOCK_NB))
			unlinkat(dirfd(d), e->d_name, 0);
		close(fd);
	}
	closedir(d);
}

static mode_t umask_now(void)
{
	mode_t m = umask(0);

	umask(m);
	return m;
}

/* A temporary file beside `target` (a regular file, or a new name). */
static int open_replacing(struct outfile *o, const char *target, const struct stat *old)
{
	char dir[PATH_MAX];
	const char *base;
	int fd, n;

	if (old && old->st_nlink > 1) {
		err_msg("cannot write '%s': it has %lu hard links, which replacing it would cut", o->path,
			(unsigned long)old->st_nlink);
		return -1;
	}
	split(target, dir, sizeof(dir), &base);
	if (!*base) {
		err_msg("cannot write '%s': it names a directory", o->path);
		return -1;
	}
	n = snprintf(o->tmp, sizeof(o->tmp), "%s/.%s" TMP_TAG "XXXXXX", dir, base);
	if (n < 0 || (size_t)n >= sizeof(o->tmp) || snprintf(o->target, sizeof(o->target), "%s", target) < 0 ||
	    strlen(target) >= sizeof(o->target)) {
		err_msg("cannot write '%s': path too long", o->path);
		o->tmp[0] = '\0';
		return -1;
	}
	remove_stale(dir, base);
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		err_msg("cannot write '%s': %s", o->path, strerror(errno));
		o->tmp[0] = '\0';
		return -1;
	}
	flock(fd, LOCK_EX); /* ours while it exists: not stale */
	/* The file that replaces another keeps that one's owner and mode. */
	if (old ? fchown(fd, old->st_uid, old->st_gid) || fchmod(fd, old->st_mode & 07777)
		: fchmod(fd, 0666 & ~umask_now())) {
		err_msg("cannot write '%s': %s", o->path, strerror(errno));
		close(fd);
		outfile__abort(o);
		return -1;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		err_msg("cannot write '%s': %s", o->path, strerror(errno));
		close(fd);
		outfile__abort(o);
		return -1;
	}
	return 0;
}

int outfile__open(struct outfile *o, const char *path)
{
	char real[PATH_MAX];
	const char *target = path;
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->path = path;
	if (!strcmp(path, "-")) {
		o->f = stdout;
		o->direct = true;
		return 0;
	}
	if (lstat(path, &st)) {
		if (errno != ENOENT) {
			err_msg("cannot write '%s': %s", path, strerror(errno));
			return -1;
		}
		return open_replacing(o, path, NULL);
	}
	if (S_ISLNK(st.st_mode)) {
		/* Written through, never replaced by a file of our own. */
		if (!realpath(path, real) || stat(real, &st)) {
			err_msg("cannot write '%s': it is a symbolic link to a missing file", path);
			return -1;
		}
		target = real;
	}
	if (S_ISREG(st.st_mode))
		return open_replacing(o, target, &st);
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
		o->direct = true;
		snprintf(o->target, sizeof(o->target), "%s", target);
		if (access(target, W_OK)) {
			err_msg("cannot write '%s': %s", path, strerror(errno));
			return -1;
		}
		return 0; /* opened when written: a FIFO waits for its reader there */
	}
	err_msg("cannot write '%s': it is %s", path, S_ISDIR(st.st_mode) ? "a directory" : "not a file or a device");
	return -1;
}

FILE *outfile__file(struct outfile *o)
{
	int fd;

	if (o->f)
		return o->f;
	fd = open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		err_msg("cannot write '%s': %s", o->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	return o->f;
}

int outfile__commit(struct outfile *o)
{
	int err = 0;

	if (o->direct) {
		if (o->f && (fflush(o->f) || ferror(o->f)))
			err = errno ? errno : EIO;
		if (o->f && o->f != stdout)
			fclose(o->f);
		o->f = NULL;
		if (err)
			err_msg("cannot write '%s': %s", o->path, strerror(err));
		return err ? -1 : 0;
	}
	if (fflush(o->f) || ferror(o->f) || fsync(fileno(o->f)))
		err = errno ? errno : EIO;
	if (fclose(o->f) && !err)
		err = errno ? errno : EIO;
	o->f = NULL;
	if (!err && rename(o->tmp, o->target))
		err = errno;
	if (err) {
		err_msg("cannot write '%s': %s", o->path, strerror(err));
		outfile__abort(o);
		return -1;
	}
	o->tmp[0] = '\0';
	return 0;
}

void outfile__abort(struct outfile *o)
{
	if (o->f) {
		if (o->f == stdout)
			fflush(stdout);
		else
			fclose(o->f);
		o->f = NULL;
	}
	if (o->tmp[0]) {
		unlink(o->tmp);
		o->tmp[0] = '\0';
	}
}
