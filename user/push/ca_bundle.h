/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Where this host keeps its CA certificates. A static pyebpf carries its
 * TLS library, whose compiled-in default (Debian's /usr/lib/ssl) is right on
 * Debian alone: each distribution keeps its bundle elsewhere, so pyebpf
 * looks where each does, as Go's crypto/x509 does. SSL_CERT_FILE, the
 * variable OpenSSL's own tools honour, comes first; --ca-file overrides
 * all of it. No network here.
 */
#ifndef PYEBPF_PUSH_CA_BUNDLE_H
#define PYEBPF_PUSH_CA_BUNDLE_H

#include <stddef.h>

/* The bundle files, in the order they are tried. NULL-terminated. */
extern const char *const ca_bundle_paths[];

/* The first of env_file (SSL_CERT_FILE's value, or NULL) and `paths` that is
 * a readable regular file, or NULL when none is. */
const char *ca_bundle__find(const char *env_file, const char *const *paths);

#endif
