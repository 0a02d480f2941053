/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* How a frame reads to a person: one rule shared by every writer. */
#ifndef PYEBPF_FRAME_FORMAT_H
#define PYEBPF_FRAME_FORMAT_H

#include <stddef.h>

#include "profile/profile.h"

/*
 * native: "name", or "module+0xOFFSET" (module's basename) with no symbol,
 *         or "[unknown]" outside any mapped file;
 * kernel: "name";   python: "qualname (file:line)";   mark: "name".
 * Returns the length snprintf would have written.
 */
int frame__format(const struct profile *p, const struct frame *f, char *buf, size_t size);

#endif
