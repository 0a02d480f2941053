// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "system/tracefs_ids.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#define MOUNT_AT "/sys/kernel/tracing"
#define MAX_EVENTS 16

/* In the child (of a process that may have threads: only system calls
 * here): each id as a decimal line on fd; the exit status an errno. */
static int read_ids(int fd, char paths[][256], size_t n)
{
	char buf[32];

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("nodev", MOUNT_AT, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return errno ? errno : EPERM;
	for (size_t i = 0; i < n; i++) {
		int f;
		ssize_t len;

		f = open(paths[i], O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (f < 0)
			return errno;
		len = read(f, buf, sizeof(buf) - 1);
		close(f);
		if (len <= 0)
			return EIO;
		if (write(fd, buf, (size_t)len) != len)
			return EIO;
	}
	return 0;
}

int tracefs_event_ids(const char *const events[], size_t n, uint64_t *ids)
{
	char buf[MAX_EVENTS * 24], paths[MAX_EVENTS][256], *p, *end;
	size_t got = 0, i;
	int pipefd[2], status;
	pid_t pid;

	if (n > MAX_EVENTS) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++)
		snprintf(paths[i], sizeof(paths[i]), MOUNT_AT "/events/%s/id", events[i]);
	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (!pid) {
		close(pipefd[0]);
		_exit(read_ids(pipefd[1], paths, n));
	}
	close(pipefd[1]);
	while (got < sizeof(buf) - 1) {
		ssize_t r = read(pipefd[0], buf + got, sizeof(buf) - 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(pipefd[0]);
	buf[got] = '\0';
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		errno = WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
		return -1;
	}
	for (i = 0, p = buf; i < n; i++, p = end) {
		errno = 0;
		ids[i] = strtoull(p, &end, 10);
		if (errno || end == p || *end != '\n' || !ids[i]) {
			errno = EIO;
			return -1;
		}
		end++;
	}
	return 0;
}
