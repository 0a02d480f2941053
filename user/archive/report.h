/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* `pyebpf report`: a saved recording, filtered, to another format or a table. */
#ifndef PYEBPF_REPORT_H
#define PYEBPF_REPORT_H

/* argv[0] is "report"; returns the exit code. */
int report_main(int argc, char **argv);

#endif
