// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * HTTP for serve_api: libmicrohttpd, one internal thread (requests are
 * answered one at a time, so no answer's memory adds to another's), bounded
 * connections, only GET, only this server's Host names (serve_host.h), one
 * request per connection. Connections reach it through serve_accept.h once
 * their headers are complete, so slow clients cannot hold its connections.
 * Started as root, it runs as --user once DIR and the socket are open.
 */
#include "serve/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve/serve_accept.h"
#include "serve/serve_args.h"
#include "serve/serve_api.h"
#include "serve/serve_host.h"
#include "serve/serve_user.h"
#include "base/util.h"

struct server {
	struct serve_api *api;
	struct serve_hosts hosts;
	struct MHD_Daemon *d;
};

static const char *query_value(void *ctx, const char *name)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, name);
}

static enum MHD_Result reply(struct MHD_Connection *c, struct serve_reply *r)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!resp) {
		free(r->body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", r->type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Content-Security-Policy",
				"default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; "
				"frame-ancestors 'none'");
	/* One request a connection: the next one would come without the front
	 * door's deadline (serve_accept.h). */
	MHD_add_response_header(resp, "Connection", "close");
	ret = MHD_queue_response(c, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result reply_line(struct MHD_Connection *c, int status, const char *line)
{
	struct serve_reply r = { status, "text/plain; charset=utf-8", xstrdup(line), strlen(line) };

	return reply(c, &r);
}

/* Answered once the headers are in (the first call): a body is never read. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct server *srv = cls;
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	struct serve_reply r = { 0 };

	(void)upload_data;
	(void)con_cls;
	*upload_data_size = 0;
	if (!host && strcmp(version, MHD_HTTP_VERSION_1_0) != 0)
		return reply_line(c, 400, "an HTTP/1.1 request needs a Host header\n");
	if (host && !serve_host__allowed(&srv->hosts, host))
		return reply_line(
			c, 421, "this server answers to its own address, localhost and its --allow-host names only\n");
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return reply_line(c, 405, "only GET\n");
	serve_api__handle(srv->api, url, query_value, c, &r);
	return reply(c, &r);
}

/* From the front door: a connection whose request has arrived. */
static void hand(void *ctx, int fd, const struct sockaddr *addr, socklen_t len)
{
	struct server *srv = ctx;

	MHD_add_connection(srv->d, fd, addr, len); /* closes fd when it cannot take it */
}

/* Listening on the address; its URL and the Host names it answers to. */
static int open_socket(const struct serve_listen *a, char *url, size_t size, char *host, size_t hsize,
		       struct serve_hosts *h)
{
	int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	union {
		struct sockaddr sa;
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} got;
	socklen_t len = sizeof(got);
	char ip[INET6_ADDRSTRLEN] = "";

	memset(&got, 0, sizeof(got));
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&a->ss, a->len) || listen(fd, 64) || getsockname(fd, &got.sa, &len)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	/* The port the kernel chose for port 0. */
	if (got.sa.sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &got.v6.sin6_addr, ip, sizeof(ip));
		h->port = ntohs(got.v6.sin6_port);
		h->any = IN6_IS_ADDR_UNSPECIFIED(&got.v6.sin6_addr);
		snprintf(host, hsize, "[%s]", ip);
	} else {
		inet_ntop(AF_INET, &got.v4.sin_addr, ip, sizeof(ip));
		h->port = ntohs(got.v4.sin_port);
		h->any = got.v4.sin_addr.s_addr == htonl(INADDR_ANY);
		snprintf(host, hsize, "%s", ip);
	}
	h->listen = host;
	snprintf(url, size, "http://%s:%u/", host, h->port);
	return fd;
}

int serve_main(int argc, char **argv)
{
	struct serve_args g;
	struct serve_user user;
	struct server srv = { 0 };
	struct serve_accept *front = NULL;
	struct serve_accept_opts fo = SERVE_ACCEPT_DEFAULTS;
	char url[128], host[INET6_ADDRSTRLEN + 2];
	int fd, perr, sig, ret = 1;
	sigset_t stop;

	perr = serve_args__parse(argc, argv, &g);
	if (perr)
		return perr > 0 ? 0 : 2;
	if ((g.user || geteuid() == 0) && serve_user__find(g.user, &user))
		return 2;
	srv.api = serve_api__new(g.dir, SERVE_MAX_BYTES);
	if (!srv.api)
		return 1;
	fd = open_socket(&g.a, url, sizeof(url), host, sizeof(host), &srv.hosts);
	if (fd < 0) {
		err_msg("cannot listen on %s: %s (choose another with --listen)", g.where, strerror(errno));
		serve_api__free(srv.api);
		return 1;
	}
	srv.hosts.names = g.allow;
	srv.hosts.nnames = g.nallow;
	/* Root no longer: DIR and the socket are open. */
	if ((g.user || geteuid() == 0) && serve_user__become(&user, serve_api__dirfd(srv.api), g.dir))
		goto out;
	/* Signals are waited for here, not taken by the server's threads. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Connections come from the front door (serve_accept.h), their requests complete. */
	srv.d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_NO_LISTEN_SOCKET |
					 MHD_USE_ITC,
				 0, NULL, NULL, on_request, &srv, MHD_OPTION_CONNECTION_LIMIT, (unsigned)32,
				 MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)16, MHD_OPTION_CONNECTION_TIMEOUT,
				 (unsigned)10, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536, MHD_OPTION_END);
	if (!srv.d) {
		err_msg("cannot start the web server on %s", url);
		goto out;
	}
	front = serve_accept__start(fd, &fo, hand, &srv);
	if (!front)
		goto out;
	if (g.public)
		fprintf(stderr, "pyebpf: serve has no authentication: anyone who reaches %s reads the profiles\n", url);
	fprintf(stderr, "pyebpf: serving %s at %s (Ctrl-C to stop)\n", g.dir, url);
	sigwait(&stop, &sig);
	ret = 0;
out:
	serve_accept__stop(front);
	if (srv.d)
		MHD_stop_daemon(srv.d);
	close(fd);
	serve_api__free(srv.api);
	return ret;
}
