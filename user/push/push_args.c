// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "push/push_args.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "archive/rotation.h"
#include "base/util.h"

const char push_args_usage[] = "Pushing to a fleet's backend (the interval files are the spool: none is lost\n"
			       "while a backend is away, none is sent twice):\n"
			       "      --push URL          Grafana Pyroscope (push.v1.PusherService/Push), e.g.\n"
			       "                          http://pyroscope:4040 (repeatable)\n"
			       "      --otlp URL          an OpenTelemetry collector's OTLP/HTTP receiver, profiles\n"
			       "                          v1development, e.g. http://otelcol:4318 (repeatable)\n"
			       "      --service-name NAME the service_name of every series (default: the command;\n"
			       "                          push DIR: the one its files were recorded with)\n"
			       "      --label KEY=VALUE   a label on every series, e.g. env=prod (repeatable; push\n"
			       "                          DIR: with those its files were recorded with)\n"
			       "      --ca-file FILE      trust these CAs for https (default: the system's)\n"
			       "      --bearer-token-file FILE   send the token in FILE (mode 600)\n"
			       "      --basic-auth-file FILE     send USER:PASSWORD from FILE (mode 600)\n"
			       "      --tenant ID         the X-Scope-OrgID header (multi-tenant backends)\n"
			       "      --push-timeout TIME one push's time limit, answer included (default 60s)\n";

void push_args__init(struct push_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->timeout_s = PUSH_DEFAULT_TIMEOUT;
}

/* Mimir's and Pyroscope's tenant ids: up to 150 of these characters. */
static int check_tenant(const char *t)
{
	size_t n = strlen(t);

	if (!n || n > 150 || strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!-_.*'()") != n ||
	    !strcmp(t, ".") || !strcmp(t, "..")) {
		char shown[160];

		err_msg("invalid tenant '%s' for --tenant (1-150 letters, digits and !-_.*'())",
			n > 150 ? "..." : utf8_clean(t, shown, sizeof(shown)));
		return -1;
	}
	return 0;
}

int push_args__option(struct push_opts *o, int c, const char *arg)
{
	char why[512];

	switch (c) {
	case OPT_PUSH:
	case OPT_OTLP: {
		struct push_endpoint e;

		if (push_endpoint__parse(&e, c == OPT_PUSH ? PUSH_PYROSCOPE : PUSH_OTLP, arg, why, sizeof(why))) {
			/* The URL is not repeated: it may hold what was refused in it. */
			err_msg("invalid URL for %s: %s", c == OPT_PUSH ? "--push" : "--otlp", why);
			return -1;
		}
		for (size_t i = 0; i < o->nendpoints; i++)
			if (o->endpoints[i].kind == e.kind && !strcmp(o->endpoints[i].url, e.url)) {
				err_msg("%s %s is given twice", c == OPT_PUSH ? "--push" : "--otlp", e.base);
				push_endpoint__free(&e);
				return -1;
			}
		o->endpoints = xrealloc(o->endpoints, (o->nendpoints + 1) * sizeof(*o->endpoints));
		o->endpoints[o->nendpoints++] = e;
		break;
	}
	case OPT_SERVICE_NAME:
		if (series_check_service_name(arg)) {
			err_msg("invalid name for --service-name (1 to 255 bytes of printable UTF-8)");
			return -1;
		}
		o->service_name = arg;
		break;
	case OPT_LABEL: {
		struct series_label l;

		if (series_parse_label(arg, &l, why, sizeof(why))) {
			err_msg("%s", why);
			return -1;
		}
		o->labels = xrealloc(o->labels, (o->nlabels + 1) * sizeof(*o->labels));
		o->labels[o->nlabels++] = l;
		break;
	}
	case OPT_CA_FILE:
		o->auth.ca_file = arg;
		break;
	case OPT_BEARER_FILE:
		o->auth.bearer_file = arg;
		break;
	case OPT_BASIC_FILE:
		o->auth.basic_file = arg;
		break;
	case OPT_TENANT:
		if (check_tenant(arg))
			return -1;
		o->auth.tenant = arg;
		break;
	case OPT_PUSH_TIMEOUT:
		if (parse_interval(arg, &o->timeout_s)) {
			err_msg("invalid time '%s' for --push-timeout (e.g. 30s, 2m; at least 1 s)", arg);
			return -1;
		}
		break;
	default:
		return 0;
	}
	o->given = true;
	return 1;
}

int push_args__check(struct push_opts *o)
{
	char why[512];

	if (!o->given)
		return 0;
	if (!o->nendpoints) {
		err_msg("--service-name, --label, --ca-file, credentials, --tenant and --push-timeout need --push or "
			"--otlp");
		return -1;
	}
	if (push_auth__check(&o->auth, why, sizeof(why))) {
		err_msg("%s", why);
		return -1;
	}
	return 0;
}

void push_args__free(struct push_opts *o)
{
	for (size_t i = 0; i < o->nendpoints; i++)
		push_endpoint__free(&o->endpoints[i]);
	free(o->endpoints);
	for (size_t i = 0; i < o->nlabels; i++)
		free((char *)o->labels[i].name);
	free(o->labels);
	push_args__init(o);
}
