/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Instruction offset → source line, as CPython computes it, for every table format. */
#ifndef PYEBPF_PY_LINETABLE_H
#define PYEBPF_PY_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

#include "python/offsets.h"

/*
 * The line of the instruction at byte offset `lasti` of a code object whose
 * first line is `firstlineno` and whose line table is `tab`. -1 where CPython
 * has no line (3.10+ "no location" entries); firstlineno for lasti < 0.
 */
int py_line_for_offset(enum py_linetable_format fmt, const uint8_t *tab, size_t len, int firstlineno, int lasti);

#endif
