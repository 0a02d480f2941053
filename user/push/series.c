// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "push/series.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "system/cgroups.h"
#include "base/hashmap.h"
#include "base/util.h"

/* Pyroscope's default limits on a label value's length and a name's are
 * 2048 and 1024. */
#define LABEL_VALUE_MAX 1024
#define LABEL_NAME_MAX 1024
#define SERVICE_NAME_MAX 256
/* The longest "NAME=VALUE" a label comment holds. */
#define LABEL_ARG_MAX (LABEL_NAME_MAX + 1 + LABEL_VALUE_MAX - 1)

int series_parse_label(const char *arg, struct series_label *out, char *why, size_t whylen)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : 0;
	char clean[LABEL_VALUE_MAX];

	if (!eq || !n) {
		snprintf(why, whylen, "invalid label '%s' (expected KEY=VALUE)", arg);
		return -1;
	}
	if (n > LABEL_NAME_MAX) {
		snprintf(why, whylen, "invalid label name (at most %d bytes)", LABEL_NAME_MAX);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (!(isalpha((unsigned char)arg[i]) || arg[i] == '_' || (i && isdigit((unsigned char)arg[i])))) {
			snprintf(why, whylen, "invalid label name '%.*s' (letters, digits and _, not first a digit)",
				 (int)n, arg);
			return -1;
		}
	if (n >= 2 && arg[0] == '_' && arg[1] == '_') {
		snprintf(why, whylen, "label names starting with __ are the backend's own ('%.*s')", (int)n, arg);
		return -1;
	}
	if (!eq[1] || strlen(eq + 1) >= sizeof(clean) ||
	    strcmp(utf8_clean(eq + 1, clean, sizeof(clean)), eq + 1) != 0) {
		snprintf(why, whylen, "invalid value for label '%.*s' (1 to %d bytes of printable UTF-8)", (int)n, arg,
			 LABEL_VALUE_MAX - 1);
		return -1;
	}
	out->name = strndup(arg, n);
	out->value = eq + 1;
	if (!out->name)
		die("out of memory");
	return 0;
}

int series_check_service_name(const char *name)
{
	char clean[SERVICE_NAME_MAX];

	if (!*name || strnlen(name, sizeof(clean)) >= sizeof(clean))
		return -1;
	return strcmp(utf8_clean(name, clean, sizeof(clean)), name) ? -1 : 0;
}

void series_note_identity(struct profile *p, const struct series_config *c)
{
	char *note;

	if (c->service_name) {
		note = xasprintf("%s%s", SERIES_SERVICE_COMMENT, c->service_name);
		profile__add_comment(p, note);
		free(note);
	}
	for (size_t i = 0; i < c->nextra; i++) {
		note = xasprintf("%s%s=%s", SERIES_LABEL_COMMENT, c->extra[i].name, c->extra[i].value);
		profile__add_comment(p, note);
		free(note);
	}
}

/* What a split files series under: the push's --service-name and --labels
 * over those a file keeps. */
struct identity {
	struct series_config c;
	struct series_label *labels; /* the stored ones (names owned), then the push's */
	size_t nstored;
};

static const char *after_prefix(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) ? NULL : s + n;
}

/* A stored label, checked as --label is: the file is outside bytes. */
static bool stored_label(const char *arg, struct series_label *out)
{
	char why[256];

	return strnlen(arg, LABEL_ARG_MAX + 1) <= LABEL_ARG_MAX && !series_parse_label(arg, out, why, sizeof(why));
}

static void identity_read(struct identity *id, const struct profile *p, const struct series_config *given)
{
	size_t n;
	const char *const *comments = profile__comments(p, &n);
	const char *service = NULL, *arg;

	memset(id, 0, sizeof(*id));
	id->labels = xcalloc(SERIES_STORED_LABELS_MAX + given->nextra + 1, sizeof(*id->labels));
	for (size_t i = 0; i < n; i++) {
		if (!service && (arg = after_prefix(comments[i], SERIES_SERVICE_COMMENT)) &&
		    !series_check_service_name(arg))
			service = arg;
		else if (id->nstored < SERIES_STORED_LABELS_MAX &&
			 (arg = after_prefix(comments[i], SERIES_LABEL_COMMENT)) &&
			 stored_label(arg, &id->labels[id->nstored]))
			id->nstored++;
	}
	/* After the stored labels: a key given to the push wins (add_label). */
	for (size_t i = 0; i < given->nextra; i++)
		id->labels[id->nstored + i] = given->extra[i];
	id->c.service_name = given->service_name ? given->service_name : service;
	id->c.extra = id->labels;
	id->c.nextra = id->nstored + given->nextra;
}

static void identity_free(struct identity *id)
{
	for (size_t i = 0; i < id->nstored; i++)
		free((char *)id->labels[i].name);
	free(id->labels);
}

/* What one sample's process says of its series. */
struct series_key {
	uint32_t comm, container, container_name, k8s_pod; /* string ids of the source profile */
	char pod_uid[40];                                  /* from the cgroup path; "" outside a pod */
};

/* The characters of Kubernetes' generated name suffixes (no vowels, no 0, 1, 3). */
#define K8S_SUFFIX_CHARS "bcdfghjklmnpqrstvwxz2456789"

/* Does s end in "-" and n..m suffix characters? The length of that end, else 0. */
static size_t generated_suffix(const char *s, size_t len, size_t n, size_t m, const char *chars)
{
	for (size_t k = m; k >= n && k; k--)
		if (len > k + 1 && s[len - k - 1] == '-' && strspn(s + len - k, chars) >= k)
			return k + 1;
	return 0;
}

char *k8s_workload_of(const char *pod, char *out, size_t size)
{
	size_t len = strlen(pod), cut;

	if ((cut = generated_suffix(pod, len, 5, 5, K8S_SUFFIX_CHARS))) { /* a ReplicaSet's, DaemonSet's or Job's pod */
		len -= cut;
		len -= generated_suffix(pod, len, 6, 10, K8S_SUFFIX_CHARS); /* a Deployment's ReplicaSet */
	} else {
		len -= generated_suffix(pod, len, 1, 5, "0123456789"); /* a StatefulSet's ordinal */
	}
	snprintf(out, size, "%.*s", (int)len, pod);
	return out;
}

struct splitter {
	const struct profile *in;
	const struct series_config *c;
	char host[256];
	struct hashmap *index; /* series key -> index in v */
	struct push_series *v;
	size_t n, cap;
	uint32_t **frame_maps; /* per series: source frame id + 1 -> its frame id there + 1 */
};

static void add_label(struct push_series *s, const char *name, const char *value)
{
	char clean[LABEL_VALUE_MAX];

	for (size_t i = 0; i < s->nlabels; i++)
		if (!strcmp(s->labels[i].name, name)) { /* a later value wins (--label) */
			free((char *)s->labels[i].value);
			s->labels[i].value = xstrdup(utf8_clean(value, clean, sizeof(clean)));
			return;
		}
	s->labels = xrealloc(s->labels, (s->nlabels + 1) * sizeof(*s->labels));
	s->labels[s->nlabels].name = xstrdup(name);
	s->labels[s->nlabels].value = xstrdup(utf8_clean(value, clean, sizeof(clean)));
	s->nlabels++;
}

static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const struct series_label *)a)->name, ((const struct series_label *)b)->name);
}

static struct push_series *series_for(struct splitter *sp, const struct series_key *k)
{
	bool created;
	uint64_t *idx = hashmap__put(sp->index, k, sizeof(*k), &created);
	struct push_series *s;
	const struct profile *in = sp->in;
	char buf[400];

	if (!created)
		return &sp->v[*idx];
	*idx = sp->n;
	xgrow(&sp->v, &sp->cap, sp->n + 1, sizeof(*sp->v));
	sp->frame_maps = xrealloc(sp->frame_maps, sp->cap * sizeof(*sp->frame_maps));
	sp->frame_maps[sp->n] = xcalloc(profile__nframes(in) + 1, sizeof(**sp->frame_maps));
	s = &sp->v[sp->n++];
	memset(s, 0, sizeof(*s));
	s->prof = profile__new();
	*profile__meta(s->prof) = *profile__meta_of(in);
	if (k->k8s_pod) { /* "NAMESPACE/POD" */
		const char *both = profile__str_at(in, k->k8s_pod), *slash = strchr(both, '/');
		char ns[128], workload[256];

		snprintf(ns, sizeof(ns), "%.*s", slash ? (int)(slash - both) : 0, both);
		if (*ns)
			add_label(s, "namespace", ns);
		if (slash && slash[1])
			add_label(s, "pod", slash + 1);
		/* A pod's service: its namespace and workload, as Grafana Alloy names
		 * Kubernetes services (every replica of a Deployment is one service). */
		if (!sp->c->service_name && slash && slash[1]) {
			snprintf(buf, sizeof(buf), "%s/%s", ns, k8s_workload_of(slash + 1, workload, sizeof(workload)));
			add_label(s, "service_name", buf);
		}
	}
	if (!series_label(s, "service_name"))
		add_label(s, "service_name",
			  sp->c->service_name ? sp->c->service_name
			  : k->comm           ? profile__str_at(in, k->comm)
					      : "unknown");
	add_label(s, "host", sp->host);
	if (k->container)
		add_label(s, "container_id", profile__str_at(in, k->container));
	if (k->container_name) /* Kubernetes' name, else the runtime's: it outlives a restart's new id */
		add_label(s, "container", profile__str_at(in, k->container_name));
	if (k->pod_uid[0])
		add_label(s, "pod_uid", k->pod_uid);
	for (size_t i = 0; i < sp->c->nextra; i++)
		add_label(s, sp->c->extra[i].name, sp->c->extra[i].value);
	qsort(s->labels, s->nlabels, sizeof(*s->labels), cmp_label);
	return s;
}

/* A string of the source profile, cleaned, in series profile p. */
static uint32_t copy_str(const struct profile *in, struct profile *p, uint32_t id)
{
	char clean[4096];

	return id ? profile__str(p, utf8_clean(profile__str_at(in, id), clean, sizeof(clean))) : 0;
}

struct request_copy {
	struct profile *to;
	const struct profile *from;
};

static uint32_t request_str(void *ctx, uint32_t id)
{
	const struct request_copy *c = ctx;

	return copy_str(c->from, c->to, id);
}

static uint32_t copy_frame(struct splitter *sp, size_t si, uint32_t id)
{
	uint32_t *map = sp->frame_maps[si];

	if (!map[id]) {
		struct frame f = *profile__frame_at(sp->in, id);

		f.name = copy_str(sp->in, sp->v[si].prof, f.name);
		f.module = copy_str(sp->in, sp->v[si].prof, f.module);
		map[id] = profile__frame(sp->v[si].prof, &f) + 1;
	}
	return map[id] - 1;
}

static void host_of(const struct profile *p, char *host, size_t size)
{
	size_t n;
	const char *const *comments = profile__comments(p, &n);

	for (size_t i = 0; i < n; i++)
		if (!strncmp(comments[i], SERIES_HOST_COMMENT, strlen(SERIES_HOST_COMMENT))) {
			snprintf(host, size, "%s", comments[i] + strlen(SERIES_HOST_COMMENT));
			return;
		}
	if (gethostname(host, size))
		snprintf(host, size, "unknown");
	host[size - 1] = 0;
}

struct push_series *series_split(const struct profile *p, const struct series_config *given, size_t *n)
{
	struct identity id;
	const struct series_config *c = &id.c;
	struct splitter sp = { .in = p, .c = c, .index = hashmap__new() };
	struct profile_entry e;
	size_t pos = 0;
	uint32_t *frames = NULL;
	size_t fcap = 0;

	identity_read(&id, p, given);
	host_of(p, sp.host, sizeof(sp.host));
	while (profile__next(p, &pos, &e)) {
		/* Keyed by what the series' labels say, so two cgroups of one
		 * service (a system unit and a shell's) are one series. */
		struct series_key k;

		memset(&k, 0, sizeof(k));                     /* hashed as bytes */
		k.comm = c->service_name ? 0 : e.labels.comm; /* --service-name: one service whatever the command */
		k.container = e.labels.container;
		k.container_name = e.labels.container_name;
		k.k8s_pod = e.labels.k8s_pod;
		if (e.labels.cgroup_path)
			k8s_pod_uid_of(profile__str_at(p, e.labels.cgroup_path), k.pod_uid, sizeof(k.pod_uid));
		struct push_series *s = series_for(&sp, &k);
		size_t si = (size_t)(s - sp.v);
		struct sample_labels l = {
			.comm = copy_str(p, s->prof, e.labels.comm),
			.thread = copy_str(p, s->prof, e.labels.thread),
			.flags = e.labels.flags,
			.python = copy_str(p, s->prof, e.labels.python),
			.offcpu = e.labels.offcpu,
		};
		/* which request: sample labels, never series (one per trace) */
		struct request_copy rcp = { s->prof, p };
		struct sample_request rc = *profile__request_at(p, e.labels.request);

		sample_request__map(&rc, request_str, &rcp);
		l.request = profile__request(s->prof, &rc);

		xgrow(&frames, &fcap, e.nframes + 1, sizeof(*frames));
		for (uint32_t i = 0; i < e.nframes; i++)
			frames[i] = copy_frame(&sp, si, e.frames[i]);
		/* Counts above 2^32 come in parts (an entry's count is 64 bits). */
		for (uint64_t left = e.count; left;) {
			uint32_t part = left > UINT32_MAX ? UINT32_MAX : (uint32_t)left;

			profile__add(s->prof, &l, frames, e.nframes, part);
			left -= part;
		}
	}
	for (size_t i = 0; i < sp.n; i++)
		free(sp.frame_maps[i]);
	free(sp.frame_maps);
	free(frames);
	hashmap__free(sp.index);
	identity_free(&id);
	*n = sp.n;
	return sp.v;
}

void series_free(struct push_series *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < s[i].nlabels; k++) {
			free((char *)s[i].labels[k].name);
			free((char *)s[i].labels[k].value);
		}
		free(s[i].labels);
		profile__free(s[i].prof);
	}
	free(s);
}

const char *series_label(const struct push_series *s, const char *name)
{
	for (size_t i = 0; i < s->nlabels; i++)
		if (!strcmp(s->labels[i].name, name))
			return s->labels[i].value;
	return NULL;
}
