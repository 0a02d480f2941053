// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "push/ca_bundle.h"

#include <sys/stat.h>
#include <unistd.h>

const char *const ca_bundle_paths[] = {
	"/etc/ssl/certs/ca-certificates.crt",                /* Debian, Ubuntu, Arch, Gentoo, Alpine */
	"/etc/pki/tls/certs/ca-bundle.crt",                  /* Fedora, RHEL 6, Amazon Linux */
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", /* RHEL 7+, CentOS, Rocky, Alma */
	"/etc/ssl/ca-bundle.pem",                            /* openSUSE, SLES */
	"/etc/pki/tls/cacert.pem",                           /* OpenELEC */
	"/etc/ssl/cert.pem",                                 /* Alpine, Wolfi, the BSDs */
	NULL,
};

static int readable_file(const char *path)
{
	struct stat st;

	return path && *path && stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

const char *ca_bundle__find(const char *env_file, const char *const *paths)
{
	if (readable_file(env_file))
		return env_file;
	for (; paths && *paths; paths++)
		if (readable_file(*paths))
			return *paths;
	return NULL;
}
