/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The options of pushing, shared by `record --continuous` and `pyebpf
 * push`: where to (--push, --otlp, repeatable), what the series are called
 * (--service-name, --label) and how to get in (--ca-file, credential
 * files, --tenant, timeouts). Checked before sampling starts.
 */
#ifndef PYEBPF_PUSH_ARGS_H
#define PYEBPF_PUSH_ARGS_H

#include <getopt.h>
#include <stddef.h>

#include "push/endpoint.h"
#include "push/secret.h"
#include "push/series.h"

enum push_opt {
	OPT_PUSH = 1100,
	OPT_OTLP,
	OPT_SERVICE_NAME,
	OPT_LABEL,
	OPT_CA_FILE,
	OPT_BEARER_FILE,
	OPT_BASIC_FILE,
	OPT_TENANT,
	OPT_PUSH_TIMEOUT,
};

#define PUSH_LONG_OPTIONS                                                                                             \
	{ "push", required_argument, NULL, OPT_PUSH }, { "otlp", required_argument, NULL, OPT_OTLP },                 \
		{ "service-name", required_argument, NULL, OPT_SERVICE_NAME },                                        \
		{ "label", required_argument, NULL, OPT_LABEL }, { "ca-file", required_argument, NULL, OPT_CA_FILE }, \
		{ "bearer-token-file", required_argument, NULL, OPT_BEARER_FILE },                                    \
		{ "basic-auth-file", required_argument, NULL, OPT_BASIC_FILE },                                       \
		{ "tenant", required_argument, NULL, OPT_TENANT },                                                    \
	{                                                                                                             \
		"push-timeout", required_argument, NULL, OPT_PUSH_TIMEOUT                                             \
	}

#define PUSH_DEFAULT_TIMEOUT 60.0       /* seconds for one push, answer included */
#define PUSH_DEFAULT_CONNECT_TIMEOUT 10 /* seconds to connect */

struct push_opts {
	struct push_endpoint *endpoints;
	size_t nendpoints;
	const char *service_name;
	struct series_label *labels;
	size_t nlabels;
	struct push_auth auth;
	double timeout_s;
	bool given; /* any push option at all */
};

extern const char push_args_usage[];

void push_args__init(struct push_opts *o);
/* 1: option `c` is a push option, applied; 0: it is not; -1 after one error line. */
int push_args__option(struct push_opts *o, int c, const char *arg);
/* After the options: the credential files readable and private. 0, or -1 after one error line. */
int push_args__check(struct push_opts *o);
void push_args__free(struct push_opts *o);

#endif
