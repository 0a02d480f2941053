/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `record -- CMD`: the command is forked stopped before exec, made a target,
 * and only then released, so its first samples are not missed.
 */
#ifndef PYEBPF_CHILD_H
#define PYEBPF_CHILD_H

#include <sys/types.h>

struct child {
	pid_t pid;  /* 0: none, or reaped */
	int go_w;   /* written to release the command; -1 once done */
	int err_r;  /* carries errno when exec failed; -1 once done */
	int status; /* waitpid status once reaped */
};

/* Fork CMD stopped before exec; -1 after one error line. */
int child__spawn(struct child *c, char **cmd);
/* Let it run; -1 after one error line when it could not exec. */
int child__release(struct child *c, const char *name);
/* Reap it if it exited: 1 when it did (status in c->status). */
int child__exited(struct child *c);
/* Never leave it behind: an unreleased command exits without running, a running one is killed. */
void child__kill(struct child *c);

#endif
