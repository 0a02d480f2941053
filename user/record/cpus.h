/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
#ifndef PYEBPF_CPUS_H
#define PYEBPF_CPUS_H

#include <stdbool.h>
#include <stddef.h>

/* Parse a kernel CPU list ("0-3,8,10-11") into flags[0..max); -1 if malformed. */
int cpulist__parse(const char *s, bool *flags, size_t max);
/* The online CPUs, from /sys/devices/system/cpu/online; -errno on failure. */
int cpus__online(bool *flags, size_t max);

#endif
