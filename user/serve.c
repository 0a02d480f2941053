// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * HTTP for serve_api: libmicrohttpd, one internal thread (requests are
 * answered one at a time, so no answer's memory adds to another's), bounded
 * connections, a timeout for idle and slow clients, and only GET.
 */
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve_api.h"
#include "util.h"

#define DEFAULT_LISTEN "127.0.0.1:8080"

static const char usage[] = "Usage: pyebpf serve DIR [--listen ADDR:PORT] [--public]\n"
			    "A local web viewer over a directory of record --continuous: a timeline of samples\n"
			    "per interval; select a range for its flame graph and top functions, a base range\n"
			    "for a diff, filter by process, thread or container, search frames. Read-only.\n"
			    "\n"
			    "      --listen ADDR:PORT  where to listen (default " DEFAULT_LISTEN
			    "; port 0: any free one)\n"
			    "      --public            allow an address other than loopback: serve has no\n"
			    "                          authentication, anyone who reaches it reads the profiles\n"
			    "  -h, --help              this help\n"
			    "\n"
			    "Example:\n"
			    "  sudo pyebpf record -a --continuous /var/lib/pyebpf --interval 1m &\n"
			    "  pyebpf serve /var/lib/pyebpf        then open http://127.0.0.1:8080/\n";

struct listen_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	bool loopback;
};

/* "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:80", ":8080" or "8080" (loopback). */
static int parse_listen(const char *arg, struct listen_addr *a)
{
	char host[64];
	const char *colon = strrchr(arg, ':');
	uint64_t port;

	memset(a, 0, sizeof(*a));
	if (!colon) {
		snprintf(host, sizeof(host), "127.0.0.1");
		colon = arg - 1;
	} else if ((size_t)(colon - arg) >= sizeof(host)) {
		return -1;
	} else {
		snprintf(host, sizeof(host), "%.*s", (int)(colon - arg), arg);
	}
	if (parse_u64(colon + 1, 0, 65535, &port))
		return -1;
	if (!*host)
		snprintf(host, sizeof(host), "127.0.0.1");
	if (host[0] == '[') {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a->ss;
		size_t n = strlen(host);

		if (n < 3 || host[n - 1] != ']')
			return -1;
		host[n - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &s6->sin6_addr) != 1)
			return -1;
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		a->len = sizeof(*s6);
		a->loopback = IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
		return 0;
	}
	struct sockaddr_in *s4 = (struct sockaddr_in *)&a->ss;
	if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
		return -1;
	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	a->len = sizeof(*s4);
	a->loopback = (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	return 0;
}

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
	ret = MHD_queue_response(c, (unsigned)r->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	static int seen;
	struct serve_reply r = { 0 };

	(void)version;
	(void)upload_data;
	if (!*con_cls) { /* the headers: answer once the request is complete */
		*con_cls = &seen;
		return MHD_YES;
	}
	if (*upload_data_size) { /* a body: not ours to read */
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		r = (struct serve_reply){ 405, "text/plain; charset=utf-8", xstrdup("only GET\n"), 9 };
		return reply(c, &r);
	}
	serve_api__handle(cls, url, query_value, c, &r);
	return reply(c, &r);
}

static int parse(int argc, char **argv, const char **dir, const char **where, struct listen_addr *a, bool *public)
{
	static const struct option opts[] = { { "listen", required_argument, NULL, 'l' },
					      { "public", no_argument, NULL, 'P' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
	const char *listen_arg = DEFAULT_LISTEN;
	int c;

	optind = 1;
	opterr = 0;
	*public = false;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen_arg = optarg;
			break;
		case 'P':
			*public = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		case ':':
			err_msg("option '%s' needs a value (see 'pyebpf serve --help')", argv[optind - 1]);
			return -1;
		default:
			err_msg("unknown option '%s' (see 'pyebpf serve --help')", argv[optind - 1]);
			return -1;
		}
	}
	if (optind >= argc) {
		err_msg("serve needs a directory: pyebpf serve DIR [--listen ADDR:PORT]");
		return -1;
	}
	if (optind + 1 < argc) {
		err_msg("serve shows one directory, not '%s' too", argv[optind + 1]);
		return -1;
	}
	*dir = argv[optind];
	*where = listen_arg;
	if (parse_listen(listen_arg, a)) {
		err_msg("invalid address '%s' for --listen (ADDR:PORT, e.g. 127.0.0.1:8080 or [::1]:8080)", listen_arg);
		return -1;
	}
	if (!a->loopback && !*public) {
		err_msg("--listen %s is not a loopback address: serve has no authentication, so add --public "
			"to let anyone who can reach it read the profiles",
			listen_arg);
		return -1;
	}
	return 0;
}

static int open_socket(const struct listen_addr *a, char *url, size_t size)
{
	int fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	union {
		struct sockaddr sa;
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} got;
	socklen_t len = sizeof(got);
	char host[INET6_ADDRSTRLEN] = "";
	unsigned port;

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
		inet_ntop(AF_INET6, &got.v6.sin6_addr, host, sizeof(host));
		port = ntohs(got.v6.sin6_port);
		snprintf(url, size, "http://[%s]:%u/", host, port);
	} else {
		inet_ntop(AF_INET, &got.v4.sin_addr, host, sizeof(host));
		port = ntohs(got.v4.sin_port);
		snprintf(url, size, "http://%s:%u/", host, port);
	}
	return fd;
}

int serve_main(int argc, char **argv)
{
	struct listen_addr a;
	const char *dir, *where;
	bool public;
	char url[128];
	int fd, perr, sig;
	struct serve_api *api;
	struct MHD_Daemon *d;
	sigset_t stop;

	perr = parse(argc, argv, &dir, &where, &a, &public);
	if (perr)
		return perr > 0 ? 0 : 2;
	api = serve_api__new(dir, SERVE_MAX_BYTES);
	if (!api)
		return 1;
	fd = open_socket(&a, url, sizeof(url));
	if (fd < 0) {
		err_msg("cannot listen on %s: %s (choose another with --listen)", where, strerror(errno));
		serve_api__free(api);
		return 1;
	}
	/* Signals are waited for here, not taken by the server's thread. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL, on_request, api,
			     MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned)32,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)16, MHD_OPTION_CONNECTION_TIMEOUT,
			     (unsigned)10, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536, MHD_OPTION_END);
	if (!d) {
		err_msg("cannot start the web server on %s", url);
		close(fd);
		serve_api__free(api);
		return 1;
	}
	if (public)
		fprintf(stderr, "pyebpf: serve has no authentication: anyone who reaches %s reads the profiles\n", url);
	fprintf(stderr, "pyebpf: serving %s at %s (Ctrl-C to stop)\n", dir, url);
	sigwait(&stop, &sig);
	MHD_stop_daemon(d);
	close(fd);
	serve_api__free(api);
	return 0;
}
