// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int child__spawn(struct child *c, char **cmd)
{
	int go[2], er[2];

	c->pid = 0;
	c->go_w = c->err_r = -1;
	if (pipe2(go, O_CLOEXEC))
		goto pipe_fail;
	if (pipe2(er, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		goto pipe_fail;
	}
	c->pid = fork();
	if (c->pid < 0) {
		err_msg("cannot fork: %s", strerror(errno));
		c->pid = 0;
		close(go[0]), close(go[1]), close(er[0]), close(er[1]);
		return -1;
	}
	if (c->pid == 0) {
		char b;
		int e;

		close(go[1]);
		close(er[0]);
		/* Samples before the exec are the command starting, not pyebpf:
		 * pyebpf never profiles itself, and its name would say it did. */
		const char *base = strrchr(cmd[0], '/');
		prctl(PR_SET_NAME, base ? base + 1 : cmd[0], 0, 0, 0);
		if (read(go[0], &b, 1) != 1)
			_exit(127); /* pyebpf gave up before starting us */
		execvp(cmd[0], cmd);
		e = errno;
		if (write(er[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	c->go_w = go[1];
	c->err_r = er[0];
	return 0;
pipe_fail:
	err_msg("cannot create a pipe: %s", strerror(errno));
	return -1;
}

int child__release(struct child *c, const char *name)
{
	int e = 0;
	ssize_t n;

	if (write(c->go_w, "g", 1) != 1) {
		err_msg("cannot start '%s': %s", name, strerror(errno));
		return -1;
	}
	close_fd(&c->go_w);
	n = read(c->err_r, &e, sizeof(e)); /* 0 bytes: exec succeeded (CLOEXEC) */
	close_fd(&c->err_r);
	if (n == sizeof(e)) {
		waitpid(c->pid, NULL, 0);
		c->pid = 0;
		err_msg("cannot run '%s': %s", name, strerror(e));
		return -1;
	}
	return 0;
}

int child__exited(struct child *c)
{
	if (c->pid <= 0 || waitpid(c->pid, &c->status, WNOHANG) != c->pid)
		return 0;
	c->pid = 0;
	c->reaped = true;
	return 1;
}

void child__stop(struct child *c, int grace_ms)
{
	if (c->pid <= 0 || child__exited(c))
		return;
	c->stopped_by = SIGTERM;
	kill(c->pid, SIGTERM);
	for (int waited = 0; waited < grace_ms; waited += 10) {
		if (child__exited(c))
			return;
		usleep(10000);
	}
	c->stopped_by = SIGKILL;
	kill(c->pid, SIGKILL);
	if (waitpid(c->pid, &c->status, 0) == c->pid)
		c->reaped = true;
	c->pid = 0;
}

int child__outcome(const struct child *c, const char *name, char *buf, size_t size)
{
	if (!c->reaped) {
		buf[0] = '\0';
		return 0;
	}
	if (c->stopped_by) {
		snprintf(buf, size, "stopped '%s' with %s when the recording ended", name,
			 c->stopped_by == SIGKILL ? "SIGKILL (it ignored SIGTERM)" : "SIGTERM");
		return 0;
	}
	if (WIFSIGNALED(c->status)) {
		snprintf(buf, size, "'%s' was killed by signal %d (%s)%s", name, WTERMSIG(c->status),
			 strsignal(WTERMSIG(c->status)), WCOREDUMP(c->status) ? ", core dumped" : "");
		return 128 + WTERMSIG(c->status);
	}
	snprintf(buf, size, "'%s' exited with status %d", name, WEXITSTATUS(c->status));
	return WEXITSTATUS(c->status);
}

void child__kill(struct child *c)
{
	close_fd(&c->go_w); /* an unreleased command exits without running */
	close_fd(&c->err_r);
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
		c->pid = 0;
	}
}
