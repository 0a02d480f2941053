/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Output formats: named by extension or --format, written by one dispatcher. */
#ifndef PYEBPF_FORMATS_H
#define PYEBPF_FORMATS_H

#include <stdbool.h>
#include <stdio.h>

#include "profile/profile.h"
#include "write/process_frame.h"

enum output_format {
	FORMAT_FOLDED,
	FORMAT_PPROF,
	FORMAT_SPEEDSCOPE,
	FORMAT_SVG,
	FORMAT_TRACE,    /* Chrome trace event JSON */
	FORMAT_TRACE_GZ, /* the same, gzip-compressed */
	FORMAT_GECKO,    /* the Firefox Profiler's Gecko format */
	FORMAT_HEATMAP,  /* Python source lines shaded by samples (HTML) */
};

/* Outputs of stacks and their weights, with no time axis (pprof, folded,
 * SVG, speedscope): the ones a memory recording can be written as. */
bool output_format_without_time(enum output_format f);

/* The help text listing the extensions. */
extern const char formats_usage[];

/* The format an output path asks for; -1 (after one error line) when unknown. */
int output_format_from_path(const char *path, enum output_format *f);
/* The format named by --format; -1 (after one error line) when unknown. */
int output_format_from_name(const char *name, enum output_format *f);

struct write_opts {
	bool threads;                  /* folded, svg: a "NAME [tid N]" frame under the process frame */
	bool containers;               /* folded, svg: a "[container ID]" frame under the process frame */
	const char *title;             /* svg */
	enum process_frames processes; /* folded, svg: --processes */
	bool diff;                     /* folded, svg: samples labelled LABEL_BASE are the "before" of a diff */
	const char *by;                /* --by KEY: a "[KEY=VALUE]" frame under the process frame (folded), at
					* the root of the stack (svg, speedscope, gecko, trace); pprof has labels */
};

/* 0, or -1 with errno set. */
int write_profile(const struct profile *p, enum output_format f, const struct write_opts *o, FILE *out);

#endif
