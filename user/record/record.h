/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
#ifndef PYEBPF_RECORD_H
#define PYEBPF_RECORD_H

/* `pyebpf record`: argv[0] is "record". Returns the process exit code. */
int record_main(int argc, char **argv);

#endif
