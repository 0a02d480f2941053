/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
#ifndef PYEBPF_LIVE_TOP_H
#define PYEBPF_LIVE_TOP_H

/* `pyebpf top`: argv[0] is "top". Returns the process exit code. */
int live_top_main(int argc, char **argv);

#endif
