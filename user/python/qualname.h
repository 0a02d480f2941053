/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Qualified names for CPython < 3.11, whose code objects carry only co_name:
 * derived from the source like CPython's own __qualname__ (PEP 3155) —
 * "Class.method", "outer.<locals>.inner" — by walking out from the function's
 * first line through the enclosing class and def lines by indentation.
 */
#ifndef PYEBPF_PY_QUALNAME_H
#define PYEBPF_PY_QUALNAME_H

#include <stddef.h>

/*
 * The qualified name of the code object `name` whose first line is
 * `firstlineno` in the source text `src`; NULL when it cannot be derived
 * (then co_name alone is right). A new string.
 */
char *py_qualname_from_source(const char *src, size_t len, int firstlineno, const char *name);

#endif
