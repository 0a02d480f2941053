/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Is this process CPython, which version, and where is its interpreter
 * state? Looks at the main executable and any mapped libpython: pyenv
 * builds (shared libpython, full symbol tables), static distribution
 * builds (.dynsym only), programs that embed libpython.
 */
#ifndef PYEBPF_PY_DETECT_H
#define PYEBPF_PY_DETECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "python/offsets.h"

struct py_interp {
	int major, minor, micro;
	uint32_t version_hex;
	struct py_layout layout;
	uint64_t runtime;          /* _PyRuntime, 0 before 3.7 */
	uint64_t interp_head_addr; /* where the pointer to the first interpreter is */
	uint64_t gil_addr;         /* GIL_TSTATE_CURRENT: the current-tstate pointer */
	uint64_t code_type;        /* &PyCode_Type: code objects are checked against it */
	uint64_t static_gil_lo;    /* 3.6: [lo, hi) holds its static GIL mutexes and conditions; else 0 */
	uint64_t static_gil_hi;
	uint32_t tp_to_self; /* pthread_self() = thread pointer - this (include/pyebpf_arch.h) */
	char path[512];      /* the file that holds the interpreter */
};

struct py_detector;

struct py_detector *py_detector__new(void);
void py_detector__free(struct py_detector *d); /* accepts NULL */

enum py_detect_result {
	PY_NOT_PYTHON = 0,
	PY_SUPPORTED = 1,
	PY_UNSUPPORTED = 2, /* CPython, but not readable: why says why */
};

/* Per file (device, inode) results are cached: a binary is looked at once. */
enum py_detect_result py_detect(struct py_detector *d, pid_t pid, struct py_interp *out, char *why, size_t whylen);

/* "3.9" from a file name like libpython3.9.so.1.0, python3.9, libpython3.6m.so; 0 on success. */
int py_version_from_name(const char *path, int *major, int *minor);

#endif
