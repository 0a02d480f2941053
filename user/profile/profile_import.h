/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Copying samples from one profile into another: the ids of `in` (strings,
 * frames, labels) interned into `out`, each looked up once. The filters copy
 * what they keep so; report merges recordings so.
 */
#ifndef PYEBPF_PROFILE_IMPORT_H
#define PYEBPF_PROFILE_IMPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"

struct profile_import {
	const struct profile *in;
	struct profile *out;
	uint32_t *str; /* in id → out id + 1 */
	uint32_t *frame;
	bool functions; /* --functions: Python frames lose their line */
};

void profile_import__init(struct profile_import *im, struct profile *out, const struct profile *in, bool functions);
void profile_import__free(struct profile_import *im);

uint32_t profile_import__str(struct profile_import *im, uint32_t id);
uint32_t profile_import__frame(struct profile_import *im, uint32_t id);
/* The string ids of labels of `in`, made ids of `out`. */
void profile_import__labels(struct profile_import *im, struct sample_labels *l);
/* The recording's notes (comments not there yet) and its modules. */
void profile_import__notes(struct profile_import *im);

#endif
