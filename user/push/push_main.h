/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
#ifndef PYEBPF_PUSH_MAIN_H
#define PYEBPF_PUSH_MAIN_H

/* `pyebpf push DIR`: argv[0] is "push". Returns the process exit code. */
int push_main(int argc, char **argv);

#endif
