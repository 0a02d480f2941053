/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * serve's front door, against slow clients (slowloris): connections are
 * accepted here and handed to the HTTP server only once their request's
 * headers have all arrived (seen with MSG_PEEK, so nothing is consumed). A
 * connection waiting for its headers costs a socket and a slot here, not one
 * of the server's few connections; it gets a deadline from its accept, not
 * from its last byte (a header line every few seconds does not keep it), and
 * when every slot is taken the oldest waiting one makes room: a client whose
 * request arrives at once is answered whatever the slow ones do.
 * Free of HTTP servers: the hand-over is a callback.
 */
#ifndef PYEBPF_SERVE_ACCEPT_H
#define PYEBPF_SERVE_ACCEPT_H

#include <stddef.h>
#include <sys/socket.h>

struct serve_accept_opts {
	unsigned max_waiting; /* connections waiting for their headers */
	unsigned deadline_ms; /* from accept to the end of the headers */
	size_t max_header;    /* bytes of request line and headers */
};
#define SERVE_ACCEPT_DEFAULTS ((struct serve_accept_opts){ 256, 10000, 16384 })

/* Takes fd (a complete request waits in it) and closes it when done. */
typedef void (*serve_hand_fn)(void *ctx, int fd, const struct sockaddr *addr, socklen_t len);

struct serve_accept;

/* A thread accepting on listen_fd; NULL after one error line. */
struct serve_accept *serve_accept__start(int listen_fd, const struct serve_accept_opts *o, serve_hand_fn hand,
					 void *ctx);
/* Stop it and close the connections still waiting (not listen_fd). */
void serve_accept__stop(struct serve_accept *s);

#endif
