/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The Python name of a thread: threading.Thread runs its threads from
 * Thread._bootstrap(self); the name is self._name (2.7: _Thread__name),
 * read from the instance's attributes in each version's dict layout.
 */
#ifndef PYEBPF_PY_THREADNAME_H
#define PYEBPF_PY_THREADNAME_H

#include <stdint.h>
#include <sys/types.h>

#include "detect.h"

/* A new string, or NULL when the thread was not started by threading.Thread. */
char *py_thread_name(pid_t pid, const struct py_interp *in, uint64_t tstate);

#endif
