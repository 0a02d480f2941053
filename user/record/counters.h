/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What each of the sampler's give-up counters (enum pyebpf_counter) means, for the summary. */
#ifndef PYEBPF_COUNTERS_H
#define PYEBPF_COUNTERS_H

#include "pyebpf.h"

/* The summary line of a counter; never NULL for a counter below PYEBPF_CNT__COUNT. */
const char *counter_name(enum pyebpf_counter c);

#endif
