/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * `record -- CMD`: the command is forked stopped before exec, made a target,
 * and only then released, so its first samples are not missed.
 */
#ifndef PYEBPF_CHILD_H
#define PYEBPF_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct child {
	pid_t pid;      /* 0: none, or reaped */
	int go_w;       /* written to release the command; -1 once done */
	int err_r;      /* carries errno when exec failed; -1 once done */
	int status;     /* waitpid status once reaped */
	bool reaped;    /* status is valid */
	int stopped_by; /* the signal pyebpf stopped it with; 0: it ended on its own */
};

/* Fork CMD stopped before exec; -1 after one error line. */
int child__spawn(struct child *c, char **cmd);
/* Let it run; -1 after one error line when it could not exec. */
int child__release(struct child *c, const char *name);
/* Reap it if it exited: 1 when it did (status in c->status). */
int child__exited(struct child *c);
/* Never leave it behind: an unreleased command exits without running, a running one is killed. */
void child__kill(struct child *c);
/* The recording stops while the command runs: SIGTERM, then SIGKILL after
 * grace_ms if it ignores that; reaped either way. */
void child__stop(struct child *c, int grace_ms);
/* One line on how the command ended ("'false' exited with status 1"), into
 * buf; and the exit status pyebpf passes on (the command's, or 128 + its
 * fatal signal; 0 when pyebpf itself stopped it). */
int child__outcome(const struct child *c, const char *name, char *buf, size_t size);

#endif
