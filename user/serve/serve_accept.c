// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "serve/serve_accept.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/util.h"

#define STOP_EVENT UINT64_MAX
#define LISTEN_EVENT (UINT64_MAX - 1)

struct waiting {
	int fd;       /* -1: a free slot */
	uint32_t gen; /* events of a slot's earlier connection are stale */
	uint64_t accepted_ns;
	struct sockaddr_storage addr;
	socklen_t len;
};

struct serve_accept {
	struct serve_accept_opts o;
	int listen_fd, ep, stop_fd;
	serve_hand_fn hand;
	void *ctx;
	struct waiting *w;
	unsigned nwaiting;
	char *peek; /* max_header + 1 bytes */
	pthread_t thread;
};

/* Close a waiting connection, with a one-line answer (status "408 Request
 * Timeout") for a client that is there to read it: never waited on. */
static void drop(struct serve_accept *s, struct waiting *w, const char *status, const char *line)
{
	char reply[256];
	int n;

	if (status) {
		n = snprintf(reply, sizeof(reply),
			     "HTTP/1.1 %s\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n"
			     "Content-Length: %zu\r\n\r\n%s",
			     status, strlen(line), line);
		if (n > 0 && (size_t)n < sizeof(reply))
			(void)!send(w->fd, reply, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	close(w->fd);
	w->fd = -1;
	w->gen++;
	s->nwaiting--;
}

static struct waiting *oldest(struct serve_accept *s)
{
	struct waiting *o = NULL;

	for (unsigned i = 0; i < s->o.max_waiting; i++)
		if (s->w[i].fd >= 0 && (!o || s->w[i].accepted_ns < o->accepted_ns))
			o = &s->w[i];
	return o;
}

/* A free slot; when none is, the oldest waiting connection makes room. */
static struct waiting *free_slot(struct serve_accept *s)
{
	struct waiting *o;

	for (unsigned i = 0; i < s->o.max_waiting; i++)
		if (s->w[i].fd < 0)
			return &s->w[i];
	o = oldest(s);
	if (o)
		drop(s, o, NULL, NULL);
	return o;
}

static bool headers_end(const char *b, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (b[i] == '\n' && (b[i - 1] == '\n' || (i >= 2 && b[i - 1] == '\r' && b[i - 2] == '\n')))
			return true;
	return false;
}

/* Look at what a waiting connection sent: hand it on once its headers are complete. */
static void look(struct serve_accept *s, struct waiting *w)
{
	ssize_t n = recv(w->fd, s->peek, s->o.max_header + 1, MSG_PEEK | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		drop(s, w, NULL, NULL);
		return;
	}
	if (headers_end(s->peek, (size_t)n)) {
		epoll_ctl(s->ep, EPOLL_CTL_DEL, w->fd, NULL);
		s->hand(s->ctx, w->fd, (struct sockaddr *)&w->addr, w->len);
		w->fd = -1;
		w->gen++;
		s->nwaiting--;
	} else if ((size_t)n > s->o.max_header) {
		drop(s, w, "431 Request Header Fields Too Large", "the request's headers are too large\n");
	}
}

static void accept_all(struct serve_accept *s)
{
	/* A bounded batch: the waiting connections are looked at too. */
	for (int k = 0; k < 64; k++) {
		struct sockaddr_storage addr;
		socklen_t len = sizeof(addr);
		int fd = accept4(s->listen_fd, (struct sockaddr *)&addr, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct waiting *w;

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				struct waiting *o = oldest(s);

				if (o) { /* room for the next one, which may be quick */
					drop(s, o, NULL, NULL);
					continue;
				}
			}
			return;
		}
		w = free_slot(s);
		if (!w) {
			close(fd);
			continue;
		}
		w->fd = fd;
		w->accepted_ns = now_ns();
		w->addr = addr;
		w->len = len;
		s->nwaiting++;
		/* Edge-triggered: a peek leaves the bytes there, so only new bytes wake us. */
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLET,
					  .data.u64 = (uint64_t)w->gen << 32 | (uint64_t)(w - s->w) };
		if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev))
			drop(s, w, NULL, NULL);
	}
}

/* Connections past their deadline are closed; how long until the next one's, in ms. */
static int expire(struct serve_accept *s)
{
	uint64_t now = now_ns(), limit = (uint64_t)s->o.deadline_ms * 1000000ULL, next = 1000000000ULL;

	for (unsigned i = 0; i < s->o.max_waiting; i++) {
		struct waiting *w = &s->w[i];

		if (w->fd < 0)
			continue;
		if (now - w->accepted_ns >= limit)
			drop(s, w, "408 Request Timeout", "the request took too long to arrive\n");
		else if (w->accepted_ns + limit - now < next)
			next = w->accepted_ns + limit - now;
	}
	return (int)(next / 1000000ULL) + 1;
}

static void *run(void *arg)
{
	struct serve_accept *s = arg;
	struct epoll_event ev[64];

	for (;;) {
		int n = epoll_wait(s->ep, ev, 64, expire(s));

		for (int i = 0; i < n; i++) {
			uint64_t d = ev[i].data.u64;

			if (d == STOP_EVENT)
				return NULL;
			if (d == LISTEN_EVENT) {
				accept_all(s);
				continue;
			}
			struct waiting *w = &s->w[(uint32_t)d];
			if (w->fd >= 0 && w->gen == (uint32_t)(d >> 32))
				look(s, w);
		}
	}
}

struct serve_accept *serve_accept__start(int listen_fd, const struct serve_accept_opts *o, serve_hand_fn hand,
					 void *ctx)
{
	struct serve_accept *s = xcalloc(1, sizeof(*s));
	struct epoll_event lev = { .events = EPOLLIN, .data.u64 = LISTEN_EVENT },
			   sev = { .events = EPOLLIN, .data.u64 = STOP_EVENT };
	int e = 0;

	s->o = *o;
	s->listen_fd = listen_fd;
	/* Accepted in batches until none is left: never waited on. */
	fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
	s->hand = hand;
	s->ctx = ctx;
	s->w = xcalloc(o->max_waiting, sizeof(*s->w));
	for (unsigned i = 0; i < o->max_waiting; i++)
		s->w[i].fd = -1;
	s->peek = xmalloc(o->max_header + 1);
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->ep < 0 || s->stop_fd < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, listen_fd, &lev) ||
	    epoll_ctl(s->ep, EPOLL_CTL_ADD, s->stop_fd, &sev) || (e = pthread_create(&s->thread, NULL, run, s))) {
		err_msg("cannot start serve's connection thread: %s", strerror(e ? e : errno));
		if (s->ep >= 0)
			close(s->ep);
		if (s->stop_fd >= 0)
			close(s->stop_fd);
		free(s->w);
		free(s->peek);
		free(s);
		return NULL;
	}
	return s;
}

void serve_accept__stop(struct serve_accept *s)
{
	if (!s)
		return;
	(void)!write(s->stop_fd, &(uint64_t){ 1 }, sizeof(uint64_t));
	pthread_join(s->thread, NULL);
	for (unsigned i = 0; i < s->o.max_waiting; i++)
		if (s->w[i].fd >= 0)
			close(s->w[i].fd);
	close(s->ep);
	close(s->stop_fd);
	free(s->w);
	free(s->peek);
	free(s);
}
