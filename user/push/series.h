/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * An interval's samples as the series a fleet's backend files them under:
 * one per service and where it ran (host, container, Kubernetes pod), each
 * with the labels a backend filters by. The process and thread ids stay
 * out (a series per pid would grow without bound on a busy host); thread
 * names, the command, GIL, off-CPU reasons and CPython version stay sample
 * labels (write/pprof.h: PPROF_ONLY_*). No network here.
 *
 * service_name: --service-name, else for a Kubernetes pod "NAMESPACE/WORKLOAD"
 * (the pod's name less the generated suffixes: every replica of a
 * Deployment is one service), else the command (comm): a gunicorn master
 * and its workers are one service, as they are one tower in a flame graph
 * (write/process_frame.h). host: --label host=..., else the host the file
 * was recorded on (its "pyebpf host:" comment), else this host. A file
 * also keeps the recording's --service-name and --labels (comments beside
 * the host's), for a push that is not given them. A pod's
 * samples also carry namespace, pod, pod_uid, container_id and the
 * container's name (container).
 */
#ifndef PYEBPF_PUSH_SERIES_H
#define PYEBPF_PUSH_SERIES_H

#include <stddef.h>

#include "profile/profile.h"

struct series_label {
	const char *name, *value;
};

struct series_config {
	const char *service_name;         /* --service-name; NULL: from each process */
	const struct series_label *extra; /* --label KEY=VALUE, applied last (they win) */
	size_t nextra;
};

struct push_series {
	struct series_label *labels; /* sorted by name; owned */
	size_t nlabels;
	struct profile *prof; /* its samples, with the push's labels only */
};

/* The comment that names the host a file was recorded on. */
#define SERIES_HOST_COMMENT "pyebpf host: "
/* The comments that keep a recording's --service-name and each --label in
 * its interval files, so that `pyebpf push DIR` files them where the live
 * push did. Read back as what a push is not told (series_split). */
#define SERIES_SERVICE_COMMENT "pyebpf service_name: "
#define SERIES_LABEL_COMMENT "pyebpf label: "
/* Labels read back from one file at most; more are ignored (pyebpf writes
 * what --label was given: a fleet's few). */
#define SERIES_STORED_LABELS_MAX 64

/* Note c's --service-name and --labels in p's comments, before p is written. */
void series_note_identity(struct profile *p, const struct series_config *c);

/* The series of p, in the order first seen; NULL with *n 0 when p has no
 * samples. What the push was given wins; what it was not, p's comments say
 * (series_note_identity): given's service name, else the stored one; the
 * stored labels, then given's (a key given names wins). A stored name or
 * label that fails --service-name's or --label's checks is ignored; a file
 * that stores none (an older one) is split as before. */
struct push_series *series_split(const struct profile *p, const struct series_config *given, size_t *n);
void series_free(struct push_series *s, size_t n);
const char *series_label(const struct push_series *s, const char *name); /* NULL when absent */

/* The workload of a pod's name: "web-7d9f8b6c5-x2x9z" (a Deployment's) and
 * "agent-x2x9z" (a DaemonSet's) give "web" and "agent", "db-0" (a
 * StatefulSet's) "db"; a name without such a suffix stays. Returns out. */
char *k8s_workload_of(const char *pod, char *out, size_t size);

/* --label KEY=VALUE: a name Prometheus and Pyroscope accept ([a-zA-Z_][a-zA-Z0-9_]*,
 * not __reserved__), a value of printable UTF-8. 0, or -1 with why. */
int series_parse_label(const char *arg, struct series_label *out, char *why, size_t whylen);
/* --service-name NAME: 1 to 255 bytes of printable UTF-8. 0, or -1. */
int series_check_service_name(const char *name);

#endif
