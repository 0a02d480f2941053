/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The containers a profile's samples ran in, said in one line: what
 * `report --container X` tells when X kept nothing, so a mistyped name is
 * told apart from a container that was never recorded.
 */
#ifndef PYEBPF_CONTAINERS_SEEN_H
#define PYEBPF_CONTAINERS_SEEN_H

#include <stddef.h>

#include "profile/profile.h"

/*
 * "web (3f2a9c1b7e4d), api (9b1e0c2d4f6a)" in order of first sample, the
 * first `max` of them, then "and N more"; a container without a recorded
 * name is its id alone. Names are escaped for a terminal (they are a
 * recording's bytes). Returns how many containers there are (0: the line
 * is empty).
 */
size_t containers_seen(const struct profile *p, size_t max, char *out, size_t size);

#endif
