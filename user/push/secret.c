// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "push/secret.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int secret_read(const char *path, const char *what, char *buf, size_t size, char *why, size_t whylen)
{
	/* Non-blocking and no symlink: a FIFO or a link planted in its place is refused, not waited on. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	ssize_t n = 0, r;
	size_t len;

	if (size)
		buf[0] = 0;
	if (fd < 0) {
		snprintf(why, whylen, "cannot read %s '%s': %s", what, path,
			 errno == ELOOP ? "it is a symbolic link" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "%s '%s' is not a regular file", what, path);
		close(fd);
		return -1;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(why, whylen, "%s '%s' belongs to another user (uid %u): a secret is pyebpf's user's or root's",
			 what, path, (unsigned)st.st_uid);
		close(fd);
		return -1;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(why, whylen, "%s '%s' can be read or written by other users (mode %03o): chmod 600 it", what,
			 path, (unsigned)(st.st_mode & 0777));
		close(fd);
		return -1;
	}
	while ((size_t)n + 1 < size && (r = read(fd, buf + n, size - 1 - (size_t)n)) > 0)
		n += r;
	close(fd);
	buf[n] = 0;
	if ((size_t)n + 1 >= size || (size_t)st.st_size > SECRET_MAX) {
		secret_wipe(buf, size);
		snprintf(why, whylen, "%s '%s' is longer than %d bytes", what, path, SECRET_MAX);
		return -1;
	}
	len = strcspn(buf, "\r\n");
	buf[len] = 0;
	/* Anything after the first line must be blank: a second secret is a mistake. */
	for (size_t i = len + 1; i < (size_t)n; i++)
		if (buf[i] != '\r' && buf[i] != '\n') {
			secret_wipe(buf, size);
			snprintf(why, whylen, "%s '%s' holds more than one line", what, path);
			return -1;
		}
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f) {
			secret_wipe(buf, size);
			snprintf(why, whylen, "%s '%s' holds a control character", what, path);
			return -1;
		}
	if (!len) {
		snprintf(why, whylen, "%s '%s' is empty", what, path);
		return -1;
	}
	return 0;
}

int secret_check_basic(const char *secret, char *why, size_t whylen)
{
	const char *colon = strchr(secret, ':');

	if (!colon || colon == secret) {
		snprintf(why, whylen, "a basic-auth file holds one line USER:PASSWORD");
		return -1;
	}
	return 0;
}

void secret_wipe(char *buf, size_t size)
{
	/* Through a volatile pointer: a memset before free may be optimized away. */
	volatile char *p = buf;

	for (size_t i = 0; i < size; i++)
		p[i] = 0;
}

int push_auth__check(const struct push_auth *a, char *why, size_t whylen)
{
	char buf[SECRET_MAX + 2];
	int ret = 0;

	if (a->bearer_file && a->basic_file) {
		snprintf(why, whylen, "--bearer-token-file and --basic-auth-file exclude each other");
		return -1;
	}
	if (a->bearer_file)
		ret = secret_read(a->bearer_file, "--bearer-token-file", buf, sizeof(buf), why, whylen);
	if (!ret && a->basic_file &&
	    !(ret = secret_read(a->basic_file, "--basic-auth-file", buf, sizeof(buf), why, whylen)))
		ret = secret_check_basic(buf, why, whylen);
	secret_wipe(buf, sizeof(buf));
	if (!ret && a->ca_file && access(a->ca_file, R_OK)) {
		snprintf(why, whylen, "cannot read --ca-file '%s': %s", a->ca_file, strerror(errno));
		ret = -1;
	}
	return ret;
}
