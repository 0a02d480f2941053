/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Kernel function names from /proc/kallsyms. */
#ifndef PYEBPF_KALLSYMS_H
#define PYEBPF_KALLSYMS_H

#include <stdbool.h>
#include <stdint.h>

struct kallsyms;

/* NULL with errno set; EPERM when every address reads as zero (kptr_restrict). */
struct kallsyms *kallsyms__load(const char *path);
void kallsyms__free(struct kallsyms *k); /* accepts NULL */
/* The function containing addr, or NULL below the first symbol. */
const char *kallsyms__lookup(const struct kallsyms *k, uint64_t addr, uint64_t *off);

/* kallsyms__load(path) in a thread of its own, from now (NULL: no thread
 * could start; load when needed). */
struct kallsyms_loader;
struct kallsyms_loader *kallsyms__load_async(const char *path);
/* Has the thread finished (kallsyms__wait will not wait)? True for NULL. */
bool kallsyms__ready(const struct kallsyms_loader *l);
/* What the thread read, waiting for it (NULL with errno, as kallsyms__load);
 * frees the loader (accepts NULL: returns NULL). */
struct kallsyms *kallsyms__wait(struct kallsyms_loader *l);

#endif
