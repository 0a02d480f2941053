/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Which Host a request may name (against DNS rebinding: a page of a name that
 * its owner points at 127.0.0.1 reaches serve with that name as Host, so a
 * name serve was not given is refused). Answered: the listen address,
 * localhost and the loopback literals 127.0.0.1 and [::1], any address
 * literal when listening on every address (no name can be rebound to a
 * literal), and names given with --allow-host; each with the listening
 * port (none: 80).
 */
#ifndef PYEBPF_SERVE_HOST_H
#define PYEBPF_SERVE_HOST_H

#include <stdbool.h>
#include <stddef.h>

struct serve_hosts {
	const char *listen; /* the listen address as a Host names it: "127.0.0.1", "[::1]" */
	bool any;           /* listening on 0.0.0.0 or [::] */
	unsigned port;
	const char *const *names; /* --allow-host */
	size_t nnames;
};

/* Is `host` (a Host header's value) this server's? */
bool serve_host__allowed(const struct serve_hosts *h, const char *host);

#endif
