/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `pyebpf dump`: every thread of a process at one instant. */
#ifndef PYEBPF_DUMP_H
#define PYEBPF_DUMP_H

/* argv[0] is "dump"; the exit status. */
int dump_main(int argc, char **argv);

#endif
