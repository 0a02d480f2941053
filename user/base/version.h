/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * pyebpf's version: the one place it is written. The Makefile reads it for
 * dist/'s file names, the .deb, the wheel and the image tag; the push
 * sender's User-Agent and OTLP's scope carry it.
 */
#ifndef PYEBPF_BASE_VERSION_H
#define PYEBPF_BASE_VERSION_H

#define PYEBPF_VERSION "0.2.0"

/* The CPU the binary was built for, as `uname -m` names it. */
#if defined(__x86_64__)
#define PYEBPF_MACHINE "x86_64"
#elif defined(__aarch64__)
#define PYEBPF_MACHINE "aarch64"
#else /* the Makefile refuses other CPUs; cppcheck and clang-tidy see neither */
#define PYEBPF_MACHINE "unknown"
#endif

#endif
