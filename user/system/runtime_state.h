/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The container runtimes' own files, parsed from memory (runtimes.c finds
 * and reads them; a fuzz target drives these alone): docker's
 * containers/ID/config.v2.json, the containers.json lists of
 * containers/storage (podman, buildah and CRI-O share that store), a
 * nerdctl names/NAMESPACE/NAME file, dockerd's command line, daemon.json,
 * and the TOML settings of storage.conf and nerdctl.toml. Each file is a
 * root-owned one, but read as untrusted input all the same: what is kept is
 * a 64-hex id and a name of the characters the runtimes allow in one, so
 * nothing a file says reaches a path or a terminal unchecked.
 */
#ifndef PYEBPF_RUNTIME_STATE_H
#define PYEBPF_RUNTIME_STATE_H

#include <stdbool.h>
#include <stddef.h>

#define CONTAINER_ID_LEN 64
/* docker, podman and nerdctl take any length; longer names are left unnamed. */
#define CONTAINER_NAME_MAX 128

enum runtime_kind {
	RUNTIME_DOCKER,
	RUNTIME_PODMAN, /* containers/storage: podman's, and buildah's and CRI-O's */
	RUNTIME_NERDCTL,
	RUNTIME_CGROUP, /* none known: a container seen only by its cgroup */
};

struct runtime_container {
	char id[CONTAINER_ID_LEN + 1];
	char name[CONTAINER_NAME_MAX]; /* "" when it has none we can show */
	enum runtime_kind runtime;
	int running; /* what the runtime's state says: 1, 0, or -1 when it does not say */
};

/* "docker", "podman", "nerdctl", "cgroup". */
const char *runtime_kind_name(enum runtime_kind k);
/* Exactly 64 lowercase hex digits, as the three runtimes make ids. */
bool runtime_id_valid(const char *s);
/* [a-zA-Z0-9][a-zA-Z0-9_.-]*, shorter than CONTAINER_NAME_MAX: the names docker, podman and nerdctl accept. */
bool runtime_name_valid(const char *s);

/* docker's config.v2.json: "ID", "Name" ("/NAME", kept without its '/') and "State": {"Running"}. 0, or -1
 * when it is not JSON or its id is not one; a bad name leaves name "". */
int runtime_parse_docker(const char *buf, size_t len, struct runtime_container *c);
/* containers/storage's containers.json (or volatile-containers.json): an array of {"id", "names": [...]};
 * fn gets each entry with a valid id (its first valid name, or ""). How many, or -1 when not an array. */
int runtime_parse_storage(const char *buf, size_t len, void (*fn)(void *ctx, const struct runtime_container *c),
			  void *ctx);
/* A nerdctl names/NAMESPACE/NAME file: the id it holds (trailing whitespace allowed). 0, or -1. */
int runtime_parse_nerdctl(const char *name, const char *buf, size_t len, struct runtime_container *c);

/* dockerd's /proc/PID/cmdline (arguments NUL-separated): its data root (--data-root, or the old -g and
 * --graph) and --config-file, each "" when not given or not absolute. */
void runtime_dockerd_args(const char *cmdline, size_t len, char *data_root, size_t dsize, char *config, size_t csize);
/* conmon's /proc/PID/cmdline: the storage podman ran it with, from the exit command it hands conmon
 * ("--exit-command-arg --root --exit-command-arg PATH", and --runroot), each "" when not given or not
 * absolute. */
void runtime_conmon_args(const char *cmdline, size_t len, char *graphroot, size_t gsize, char *runroot, size_t rsize);
/* A JSON file's top-level string member `key` (daemon.json's "data-root"); 0 or -1. */
int runtime_json_string(const char *buf, size_t len, const char *key, char *out, size_t size);
/* A TOML file's `key = "value"` in [section] ("" for the top level), a basic string without escapes
 * (storage.conf's graphroot and runroot, nerdctl.toml's data_root). 0 or -1. */
int runtime_toml_string(const char *buf, size_t len, const char *section, const char *key, char *out, size_t size);

#endif
