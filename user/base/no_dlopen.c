// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * pyebpf is linked statically, glibc included, and wraps dlopen with this
 * (-Wl,--wrap=dlopen): a shared object built for the host's glibc, loaded
 * into a static one, shares none of its state and can crash it. Who would
 * load one: libdw's debuginfod client (when DEBUGINFOD_URLS is set, as
 * Fedora and Ubuntu set it), OpenSSL's engines and providers, glibc's own
 * NSS and iconv. Each copes with a NULL as with a library that is absent.
 */
#include <stddef.h>

void *__wrap_dlopen(const char *file, int mode);

void *__wrap_dlopen(const char *file, int mode)
{
	(void)file;
	(void)mode;
	return NULL;
}
