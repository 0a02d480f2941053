/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * CPython's version to its patch level where no Py_Version (3.11+) says
 * it: the PY_VERSION literal ("2.7.18") that Py_GetVersion() formats sits
 * in the interpreter's read-only data, often as the tail of a longer string
 * the linker merged it into ("/root/.pyenv/versions/2.7.18").
 */
#ifndef PYEBPF_PY_VERSION_H
#define PYEBPF_PY_VERSION_H

#include <stddef.h>
#include <stdint.h>

/*
 * The PY_VERSION_HEX of the one version MAJOR.MINOR.MICRO[{a,b,rc}N][+]
 * that ends a NUL-terminated string of buf[0 .. len) after a character that
 * is no digit or dot. 0 when none, or more than one version, does: what
 * cannot be told apart is not guessed.
 */
uint32_t py_version_in_strings(const char *buf, size_t len, int major, int minor);

/* "2.7.18", "3.15.0a2" from a PY_VERSION_HEX. */
void py_version_format(uint32_t hex, char *out, size_t size);

#endif
