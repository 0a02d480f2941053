/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `pyebpf serve DIR`: a local web viewer over a continuous directory. */
#ifndef PYEBPF_SERVE_H
#define PYEBPF_SERVE_H

/* argv[0] is "serve"; the exit status. */
int serve_main(int argc, char **argv);

#endif
