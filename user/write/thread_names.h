/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * One name per thread in every output: the one its latest sample carries. A
 * thread's first samples may carry its OS name, from before its Python name
 * was read, and a thread renamed while recording shows its final name; a
 * flame graph then has one tower per thread, not one per name it had.
 */
#ifndef PYEBPF_WRITE_THREAD_NAMES_H
#define PYEBPF_WRITE_THREAD_NAMES_H

#include "base/hashmap.h"
#include "profile/profile.h"

/* (pid, tid) → the thread string id of its latest sample. Free with hashmap__free(). */
struct hashmap *thread_names__latest(const struct profile *p);
/* The name of the thread a sample's labels belong to. */
uint32_t thread_names__of(const struct hashmap *names, const struct sample_labels *l);

#endif
