/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A memory profile (--mode memory: profile_meta.mem_sample_bytes) holds
 * three kinds of sample points, memory grown, memory still held at the end
 * (LABEL_MEM_HELD) and memory held at each process's high-water mark
 * (LABEL_MEM_PEAK), and each point stands for a number of bytes. pprof
 * keeps them as Go's heap profiles name theirs (alloc_objects, alloc_space,
 * inuse_objects, inuse_space) and peak_objects, peak_space (memray's
 * high-water mark); every other output shows one of them,
 * --sample-type's, as a profile of its own whose counts are bytes (or
 * points, for the _objects types).
 */
#ifndef PYEBPF_MEM_VIEW_H
#define PYEBPF_MEM_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"

enum mem_value {
	MEM_INUSE_SPACE = 0, /* bytes still held at the end, by the stack they grew under (the default) */
	MEM_ALLOC_SPACE,     /* bytes mapped in while recording */
	MEM_INUSE_OBJECTS,   /* the same two in sample points */
	MEM_ALLOC_OBJECTS,
	MEM_PEAK_SPACE,   /* bytes held at each process's high-water mark, by the stack they grew under */
	MEM_PEAK_OBJECTS, /* the same in sample points */
};

#define MEM_VALUE_NAMES "inuse_space, alloc_space, peak_space, inuse_objects, alloc_objects or peak_objects"

/* --sample-type NAME: 0, or -1 when it names none. */
int mem_value_parse(const char *name, enum mem_value *v);
/* --sample-type's argument into *v (an enum mem_value): 0, or -1 after one error line. */
int mem_value_option(const char *arg, int *v);
const char *mem_value_name(enum mem_value v);

/* A memory profile's sample points of a moment (held: at its end or at the peak, LABEL_MEM_MOMENT), or of what grew. */
uint64_t mem_view_points(const struct profile *p, bool held);

/* The one kind of value v of memory profile p, as a new profile (counts in
 * bytes or points, meta.value_unit saying which). */
struct profile *mem_view(const struct profile *p, enum mem_value v);

#endif
