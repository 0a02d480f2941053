// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "serve/serve_args.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

#define DEFAULT_LISTEN "127.0.0.1:8080"

static const char usage[] =
	"Usage: pyebpf serve DIR [--listen ADDR:PORT] [--public] [--allow-host NAME]... [--user NAME]\n"
	"A local web viewer over a directory of record --continuous: a timeline of samples\n"
	"per interval; select a range for its flame graph and top functions, a base range\n"
	"for a diff, filter by process, thread or container, search frames. Read-only.\n"
	"\n"
	"      --listen ADDR:PORT  where to listen (default " DEFAULT_LISTEN "; port 0: any free one)\n"
	"      --public            allow an address other than loopback: serve has no\n"
	"                          authentication, anyone who reaches it reads the profiles\n"
	"      --allow-host NAME   a name the server may be reached by (the Host of a\n"
	"                          request), beside its address, localhost, 127.0.0.1 and\n"
	"                          [::1]; other names are refused (DNS rebinding). Repeatable\n"
	"      --user NAME         started as root, run as NAME once DIR and the socket are\n"
	"                          open (default nobody; it must read DIR); root: keep root\n"
	"  -h, --help              this help\n"
	"\n"
	"Example:\n"
	"  sudo pyebpf record -a --continuous /var/lib/pyebpf --interval 1m &\n"
	"  pyebpf serve /var/lib/pyebpf        then open http://127.0.0.1:8080/\n";

/* "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:80", ":8080" or "8080" (loopback). */
int serve_args__listen(const char *arg, struct serve_listen *a)
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

static const struct option opts[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "public", no_argument, NULL, 'P' },
	{ "allow-host", required_argument, NULL, 'H' },
	{ "user", required_argument, NULL, 'u' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

/* A host name for --allow-host: letters, digits, '-' and '.' (no port, no address). */
static bool host_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 253)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
		      *s == '.'))
			return false;
	return true;
}

int serve_args__parse(int argc, char **argv, struct serve_args *g)
{
	int c;

	memset(g, 0, sizeof(*g));
	g->where = DEFAULT_LISTEN;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			g->where = optarg;
			break;
		case 'P':
			g->public = true;
			break;
		case 'H':
			if (!host_name(optarg)) {
				err_msg("--allow-host '%s' is not a host name (letters, digits, '-' and '.'; no port)",
					optarg);
				return -1;
			}
			if (g->nallow == SERVE_MAX_ALLOW_HOSTS) {
				err_msg("at most %d --allow-host names", SERVE_MAX_ALLOW_HOSTS);
				return -1;
			}
			g->allow[g->nallow++] = optarg;
			break;
		case 'u':
			g->user = optarg;
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
	g->dir = argv[optind];
	if (serve_args__listen(g->where, &g->a)) {
		err_msg("invalid address '%s' for --listen (ADDR:PORT, e.g. 127.0.0.1:8080 or [::1]:8080)", g->where);
		return -1;
	}
	if (!g->a.loopback && !g->public) {
		err_msg("--listen %s is not a loopback address: serve has no authentication, so add --public "
			"to let anyone who can reach it read the profiles",
			g->where);
		return -1;
	}
	return 0;
}

char *serve_args__help(void)
{
	return xstrdup(usage);
}

const struct option *serve_args__options(void)
{
	return opts;
}
