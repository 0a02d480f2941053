/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Where --push and --otlp send: a URL checked before sampling starts (one
 * error line for one that cannot be parsed, an unknown scheme or a secret
 * written into it), the request URL of its protocol, and a key that names
 * the backend in the spool's journal (push/journal.h). No network here.
 */
#ifndef PYEBPF_PUSH_ENDPOINT_H
#define PYEBPF_PUSH_ENDPOINT_H

#include <stdbool.h>
#include <stddef.h>

enum push_kind {
	PUSH_PYROSCOPE = 0, /* --push: Pyroscope's push.v1.PusherService/Push */
	PUSH_OTLP,          /* --otlp: OTLP/HTTP profiles (v1development) */
};

/* The path a collector's OTLP/HTTP receiver takes profiles on. */
#define OTLP_PROFILES_PATH "/v1development/profiles"
#define PYROSCOPE_PUSH_PATH "/push.v1.PusherService/Push"
#define PYROSCOPE_QUERY_PATH "/querier.v1.QuerierService/SelectMergeProfile"

struct push_endpoint {
	enum push_kind kind;
	char *url;  /* what is requested: the base with the protocol's path */
	char *base; /* as given, for messages (holds no secret: those are refused) */
	bool tls;   /* https */
};

/*
 * Parse `arg` for `kind` (option: "--push" or "--otlp", for the error).
 * http:// or https://, a host, an optional port (1-65535) and path; no
 * user:password@ (a secret on a command line), no spaces or control
 * characters. --otlp's path is taken as the full endpoint when it ends in
 * /v1development/profiles, else that is appended, as OTel exporters do
 * with a base endpoint. 0, or -1 with the reason in why.
 */
int push_endpoint__parse(struct push_endpoint *e, enum push_kind kind, const char *arg, char *why, size_t whylen);
void push_endpoint__free(struct push_endpoint *e);

/* The journal's name for this backend: a hash of its kind and request URL
 * (and tenant), 16 hex digits and NUL. */
void push_endpoint__key(const struct push_endpoint *e, const char *tenant, char key[17]);

#endif
