/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A self-contained interactive SVG flame graph: click a frame to zoom,
 * Search (or Ctrl-F) highlights frames matching a regular expression and
 * shows their share, hovering shows a frame's samples and share. Python,
 * native and kernel frames have distinct colours. Frames narrower than a
 * tenth of a pixel are left out, so 100k distinct stacks stay a small file.
 */
#ifndef PYEBPF_WRITE_FLAMEGRAPH_H
#define PYEBPF_WRITE_FLAMEGRAPH_H

#include <stdbool.h>
#include <stdio.h>

#include "profile/profile.h"
#include "write/process_frame.h"

struct flamegraph_opts {
	bool threads;                  /* a "NAME [tid N]" frame under the process frame */
	bool containers;               /* a "[container ID]" frame under the process frame */
	const char *title;             /* NULL: "pyebpf" */
	enum process_frames processes; /* the process frame: "comm" or "comm [pid N]" */
	bool diff; /* LABEL_BASE samples are a diff's before: widths are after, colours the change */
};

/* 0, or -1 with errno set. */
int flamegraph__write(const struct profile *p, const struct flamegraph_opts *o, FILE *out);

#endif
