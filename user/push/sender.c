// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "push/sender.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "archive/archive.h"
#include "push/backoff.h"
#include "push/ca_bundle.h"
#include "push/journal.h"
#include "push/otlp_req.h"
#include "push/pyroscope_req.h"
#include "archive/rotation.h"
#include "base/util.h"
#include "base/version.h"

#define PUSH_USER_AGENT "pyebpf/" PYEBPF_VERSION
/* What is read of an answer: enough for its error message; a longer one is cut off. */
#define ANSWER_MAX 4096
/* What is read of Pyroscope's answer to a query: one series' profile of one interval. */
#define QUERY_ANSWER_MAX (16 << 20)
/* Intervals a backend may be handed, not yet sent; past that the oldest is
 * dropped from memory (it is still in the spool, read from there). */
#define HANDOFF_MAX 4
/* An idle backend looks at the directory again this often (files another
 * run left, or that came while it was busy). */
#define RESCAN_S 60.0
/* Refusals for good said one by one; past that they are counted in the summary. */
#define REFUSALS_SHOWN 10

/* An interval handed over as it was written: its series, split already. */
struct handoff {
	char name[128];
	struct push_series *s;
	size_t n;
};

struct backend {
	struct pusher *owner;
	const struct push_endpoint *ep;
	pthread_t thread;
	bool started;
	/* Under owner->lock: */
	struct push_journal *journal; /* its memory; the file is written by this thread alone */
	char **queue;                 /* what it lacks, oldest first */
	size_t nq, qcap;
	bool rescan; /* the queue is to be built again from the directory */
	struct handoff hand[HANDOFF_MAX];
	size_t nhand;
	uint64_t sent, rejected, retries, profiles, bytes;
	double cpu_s;
	/* This thread's own: */
	unsigned failures; /* in a row */
	bool told_down;    /* the line that it fails was said; the next success says it is back */
	unsigned refusals_told;
	unsigned rand_state;
};

struct pusher {
	struct push_config c;
	int dirfd;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* a new file, draining, stopping, a thread done */
	bool draining;       /* finish: no new files will come; leave when none is left */
	bool stop_now;       /* finish's time is up: leave now, cutting a push short */
	double drain_until;  /* monotonic seconds */
	unsigned running;
	struct backend *b;
	size_t n;
};

static double mono_s(void)
{
	return (double)now_ns() / 1e9;
}

static double thread_cpu_s(void)
{
	return (double)thread_cpu_ns() / 1e9;
}

/* Wait on the condition until `until` (monotonic seconds) or a signal; under p->lock. */
static void wait_until(struct pusher *p, double until)
{
	struct timespec ts;
	double left = until - mono_s();

	if (left <= 0)
		return;
	/* The condition waits on CLOCK_MONOTONIC (pusher__start). */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (left > 3600)
		left = 3600;
	ts.tv_sec += (time_t)left;
	ts.tv_nsec += (long)((left - floor(left)) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&p->cond, &p->lock, &ts);
}

/* A backend lacks an interval it was never sent, and one it may not have got. */
static bool lacks(enum journal_state st)
{
	return st == JOURNAL_UNSENT || st == JOURNAL_MAYBE;
}

static bool in_window(const struct pusher *p, const char *name)
{
	int64_t t = rotation_name_time(name);

	return t >= p->c.since_ns && t < p->c.until_ns;
}

static void queue_clear(struct backend *b)
{
	for (size_t i = 0; i < b->nq; i++)
		free(b->queue[i]);
	b->nq = 0;
}

/* Add a name, kept in order (names sort by time); under the lock. */
static void queue_add(struct backend *b, const char *name)
{
	size_t at = b->nq;

	while (at && strcmp(b->queue[at - 1], name) >= 0) {
		if (!strcmp(b->queue[at - 1], name))
			return;
		at--;
	}
	xgrow(&b->queue, &b->qcap, b->nq + 1, sizeof(*b->queue));
	memmove(&b->queue[at + 1], &b->queue[at], (b->nq - at) * sizeof(*b->queue));
	b->queue[at] = xstrdup(name);
	b->nq++;
}

static void queue_remove(struct backend *b, const char *name)
{
	for (size_t i = 0; i < b->nq; i++)
		if (!strcmp(b->queue[i], name)) {
			free(b->queue[i]);
			memmove(&b->queue[i], &b->queue[i + 1], (b->nq - i - 1) * sizeof(*b->queue));
			b->nq--;
			return;
		}
}

/* The queue completed from the directory: every interval file in the window
 * the backend lacks. Listed outside the lock (a directory may be large);
 * what was offered meanwhile stays queued (a file gone is found at its turn). */
static void scan(struct backend *b)
{
	struct pusher *p = b->owner;
	size_t n = 0;
	struct rotation_file *v = rotation_list(p->dirfd, &n);

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < b->nq;)
		if (lacks(push_journal__state(b->journal, b->queue[i])))
			i++;
		else
			queue_remove(b, b->queue[i]);
	for (size_t i = 0; i < n; i++)
		if (v[i].start_ns >= p->c.since_ns && v[i].start_ns < p->c.until_ns &&
		    lacks(push_journal__state(b->journal, v[i].name)))
			queue_add(b, v[i].name);
	b->rescan = false;
	pthread_mutex_unlock(&p->lock);
	rotation_list_free(v, n);
}

/* curl: the answer, up to `max` bytes; past that the transfer is cut off
 * (a server cannot make pyebpf read gigabytes to learn a status). A push's
 * answer is kept for its message (ANSWER_MAX); a query's is a profile. */
struct answer {
	char *buf; /* NUL-terminated; NULL until something came */
	size_t len, max;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct answer *a = ctx;
	size_t n = size * nmemb;

	if (n > a->max - a->len)
		return 0;
	a->buf = xrealloc(a->buf, a->len + n + 1);
	memcpy(a->buf + a->len, data, n);
	a->len += n;
	a->buf[a->len] = 0;
	return n;
}

/* curl: a push in flight is cut short once finish's time is up. */
static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct pusher *p = ctx;

	(void)dt, (void)dn, (void)ut, (void)un;
	return __atomic_load_n(&p->stop_now, __ATOMIC_RELAXED);
}

/* curl: sockets closed on exec, so a command pyebpf runs (-- CMD) does not
 * inherit a connection to the backend. */
static curl_socket_t open_socket(void *ctx, curlsocktype purpose, struct curl_sockaddr *a)
{
	(void)ctx, (void)purpose;
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* Why an interval could not be made into a request. */
enum build_result {
	BUILD_OK = 0,
	BUILD_GONE,   /* pruned meanwhile: nothing to send */
	BUILD_BROKEN, /* not a profile: will never be sent */
	BUILD_AGAIN,  /* out of memory or file descriptors: try again later */
};

/* The series of interval `name`: handed over when it was written
 * (pusher__offer), or read back from the spool (*prof then holds them). */
static enum build_result series_of(struct backend *b, const char *name, struct push_series **s, size_t *ns,
				   struct profile **prof)
{
	struct pusher *p = b->owner;
	int fd;

	*s = NULL;
	*ns = 0;
	*prof = NULL;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < b->nhand && !*s; i++)
		if (!strcmp(b->hand[i].name, name)) {
			*s = b->hand[i].s;
			*ns = b->hand[i].n;
			memmove(&b->hand[i], &b->hand[i + 1], (b->nhand - i - 1) * sizeof(*b->hand));
			b->nhand--;
		}
	pthread_mutex_unlock(&p->lock);
	if (*s)
		return BUILD_OK;
	fd = openat(p->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? BUILD_GONE : errno == ELOOP ? BUILD_BROKEN : BUILD_AGAIN;
	close(fd);
	*prof = recording__read_at(p->dirfd, name, O_NOFOLLOW); /* says why when it cannot */
	if (!*prof)
		return BUILD_BROKEN;
	*s = series_split(*prof, &p->c.series, ns);
	return BUILD_OK;
}

/* Credentials, read again for each push (a rotated file is taken). 0, or -1 with why. */
static int set_auth(struct pusher *p, CURL *curl, char *secret, size_t size, char *why, size_t whylen)
{
	const struct push_auth *a = &p->c.auth;

	if (a->bearer_file) {
		if (secret_read(a->bearer_file, "--bearer-token-file", secret, size, why, whylen))
			return -1;
		curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
		curl_easy_setopt(curl, CURLOPT_XOAUTH2_BEARER, secret);
	} else if (a->basic_file) {
		if (secret_read(a->basic_file, "--basic-auth-file", secret, size, why, whylen) ||
		    secret_check_basic(secret, why, whylen))
			return -1;
		curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
		curl_easy_setopt(curl, CURLOPT_USERPWD, secret);
	}
	return 0;
}

/* Is a 2xx the protocol's answer, not a web page that happened to be there
 * (a captive portal, a UI on the wrong port)? */
static bool protocol_answer(const struct backend *b, const char *type, size_t len)
{
	if (!type)
		return len == 0;
	return !strncmp(type, b->ep->kind == PUSH_OTLP ? "application/x-protobuf" : "application/proto",
			strlen(b->ep->kind == PUSH_OTLP ? "application/x-protobuf" : "application/proto"));
}

/* One try of one interval: the HTTP status (0: no answer, -1: credentials
 * not read, -2: a 2xx that is not the protocol's), Retry-After in
 * *retry_after, whether the whole body went out in *sent_whole (with no
 * answer, the backend may have taken it), what went wrong in err. */
static long post(struct backend *b, CURL *curl, const char *url, const uint8_t *body, size_t len, struct answer *ans,
		 double *retry_after, bool *sent_whole, char *err, size_t errlen)
{
	struct pusher *p = b->owner;
	struct curl_slist *h = NULL;
	char secret[SECRET_MAX + 2] = "", tenant[256], errbuf[CURL_ERROR_SIZE] = "";
	curl_off_t ra = -1;
	const char *type = NULL;
	long status = 0;
	CURLcode rc;

	curl_easy_reset(curl);
	if (set_auth(p, curl, secret, sizeof(secret), err, errlen)) {
		secret_wipe(secret, sizeof(secret));
		return -1;
	}
	h = curl_slist_append(h, b->ep->kind == PUSH_OTLP ? "Content-Type: application/x-protobuf"
							  : "Content-Type: application/proto");
	if (b->ep->kind == PUSH_OTLP)
		h = curl_slist_append(h, "Content-Encoding: gzip");
	else /* Connect's unary protocol, as Pyroscope's own clients send it */
		h = curl_slist_append(h, "Connect-Protocol-Version: 1");
	if (p->c.auth.tenant) {
		snprintf(tenant, sizeof(tenant), "X-Scope-OrgID: %s", p->c.auth.tenant);
		h = curl_slist_append(h, tenant);
	}
	h = curl_slist_append(h, "Expect:"); /* no 100-continue round trip */
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_socket);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, PUSH_USER_AGENT);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)(p->c.connect_timeout_s * 1000));
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)(p->c.timeout_s * 1000));
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, ans);
	curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(curl, CURLOPT_XFERINFODATA, p);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	/* A dead peer is found out while waiting for a slow answer. */
	curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
	{
		/* The TLS library's built-in default is one distribution's path. */
		const char *ca = p->c.auth.ca_file ? p->c.auth.ca_file
						   : ca_bundle__find(getenv("SSL_CERT_FILE"), ca_bundle_paths);

		if (ca)
			curl_easy_setopt(curl, CURLOPT_CAINFO, ca);
		else
			curl_easy_setopt(curl, CURLOPT_CAPATH, "/etc/ssl/certs");
	}
	rc = curl_easy_perform(curl);
	secret_wipe(secret, sizeof(secret));
	curl_slist_free_all(h);
	{
		curl_off_t up = 0;

		*sent_whole = curl_easy_getinfo(curl, CURLINFO_SIZE_UPLOAD_T, &up) == CURLE_OK && up == (curl_off_t)len;
	}
	/* The status counts once it came, even if the body was cut off or slow:
	 * a 2xx means the backend has the interval. */
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (!status) {
		/* curl's words may quote a certificate's names: made printable. */
		utf8_clean(errbuf[0] ? errbuf : curl_easy_strerror(rc), err, errlen);
		return 0;
	}
	if (curl_easy_getinfo(curl, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
		*retry_after = (double)ra;
	curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &type);
	if (status >= 200 && status < 300 && !protocol_answer(b, type, ans->len)) {
		snprintf(err, errlen, "HTTP %ld as %.64s, not %s's answer: is the URL the backend's?", status,
			 type ? type : "(no type)", b->ep->kind == PUSH_OTLP ? "OTLP" : "Pyroscope");
		utf8_clean(err, err, errlen);
		return -2;
	}
	return status;
}

/* An answer's text for a one-line message: its first line, made printable. */
static const char *answer_text(const struct answer *a, char *out, size_t size)
{
	char line[512];

	const char *text = a->buf ? a->buf : "";

	snprintf(line, sizeof(line), "%.*s", (int)strcspn(text, "\r\n"), text);
	return utf8_clean(line, out, size);
}

/* The line said when a backend starts failing (once, until it answers again). */
static void tell_down(struct backend *b, const char *what, bool setup)
{
	if (b->told_down)
		return;
	b->told_down = true;
	fprintf(stderr, "pyebpf: push to %s: %s; intervals are kept in %s and sent when it %s\n", b->ep->base, what,
		b->owner->c.dir, setup ? "takes them (check the URL and credentials)" : "answers");
}

/* Send interval `name`; what the answer means for it. *status: the HTTP
 * status; 0 with PUSH_SENT: nothing to send, and nothing to mark. */
/*
 * Is interval `name` in Pyroscope already (its push went out whole and its
 * answer was lost)? Pyroscope does not deduplicate, so it is asked before
 * the interval is sent again: its first CPU series, at the interval's start.
 * 1: there; 0: not there (or nothing to ask about); -1: no answer (err).
 */
static int pyroscope_has(struct backend *b, CURL *curl, const struct push_series *s, size_t ns, char *err,
			 size_t errlen)
{
	char url[2048];
	uint8_t *q;
	size_t qlen;
	struct answer ans = { .max = QUERY_ANSWER_MAX };
	double retry_after = 0;
	bool whole;
	int64_t total = 0;
	long status;

	if (pyroscope_query_request(s, ns, &q, &qlen))
		return 0;
	snprintf(url, sizeof(url), "%s%s", b->ep->base, PYROSCOPE_QUERY_PATH);
	status = post(b, curl, url, q, qlen, &ans, &retry_after, &whole, err, errlen);
	free(q);
	if (status != 200 || pyroscope_query_total((const uint8_t *)(ans.buf ? ans.buf : ""), ans.len, &total)) {
		if (status > 0)
			snprintf(err, errlen, "asking whether it has an interval already: HTTP %ld%s", status,
				 status == 200 ? " with an answer that is no profile" : "");
		free(ans.buf);
		return -1;
	}
	free(ans.buf);
	return total > 0;
}

static enum push_verdict push_one(struct backend *b, CURL *curl, const char *name, bool maybe, long *status,
				  double *retry_after, bool *sent_whole)
{
	struct pusher *p = b->owner;
	uint8_t *body = NULL;
	size_t len = 0, nprofiles = 0, ns = 0;
	struct answer ans = { .max = ANSWER_MAX };
	char err[CURL_ERROR_SIZE + 128] = "", text[512], what[1024];
	struct push_series *s = NULL;
	struct profile *prof = NULL;
	enum push_verdict v;
	enum build_result built;
	int ret;

	*status = 0;
	*retry_after = 0;
	*sent_whole = false;
	built = series_of(b, name, &s, &ns, &prof);
	if (built == BUILD_OK && maybe && b->ep->kind == PUSH_PYROSCOPE) {
		int has = pyroscope_has(b, curl, s, ns, err, sizeof(err));

		if (has) {
			series_free(s, ns);
			profile__free(prof);
			if (has < 0) {
				tell_down(b, err, false);
				return PUSH_RETRY;
			}
			fprintf(stderr, "pyebpf: push to %s: %s arrived before its answer was lost: not sent again\n",
				b->ep->base, name);
			*status = 200;
			return PUSH_SENT;
		}
	}
	if (built == BUILD_OK) {
		ret = b->ep->kind == PUSH_OTLP ? otlp_request(s, ns, name, &body, &len, &nprofiles)
					       : pyroscope_request(s, ns, name, &body, &len, &nprofiles);
		series_free(s, ns);
		profile__free(prof);
		if (ret)
			built = BUILD_AGAIN;
	}
	switch (built) {
	case BUILD_GONE:
		return PUSH_SENT; /* pruned meanwhile: not marked */
	case BUILD_BROKEN:
		return PUSH_REJECTED; /* status 0: not a profile */
	case BUILD_AGAIN:
		snprintf(what, sizeof(what), "cannot build the request for %s: %s", name, strerror(errno));
		tell_down(b, what, false);
		return PUSH_RETRY;
	case BUILD_OK:
		break;
	}
	if (!nprofiles) { /* no samples of any kind: nothing to send, done */
		free(body);
		*status = 204;
		return PUSH_SENT;
	}
	*status = post(b, curl, b->ep->url, body, len, &ans, retry_after, sent_whole, err, sizeof(err));
	free(body);
	if (*status < 0) { /* credentials not read, or not the backend answering */
		tell_down(b, err, true);
		*status = 0;
		free(ans.buf);
		return PUSH_SETUP;
	}
	v = *status ? push_verdict_of(*status) : PUSH_RETRY;
	if (v == PUSH_SENT && b->ep->kind == PUSH_OTLP && ans.buf)
		otlp_partial_success_note(stderr, b->ep->base, name, (const uint8_t *)ans.buf, ans.len);
	if (v == PUSH_SENT) {
		pthread_mutex_lock(&p->lock);
		b->profiles += nprofiles;
		b->bytes += len;
		pthread_mutex_unlock(&p->lock);
		if (b->told_down)
			fprintf(stderr, "pyebpf: push to %s: it answers again; sending what it lacks, oldest first\n",
				b->ep->base);
		b->told_down = false;
		if (p->c.log)
			fprintf(stderr, "pyebpf: pushed %s to %s (%zu profiles, %zu bytes)\n", name, b->ep->base,
				nprofiles, len);
	} else if (v == PUSH_REJECTED) {
		if (b->refusals_told < REFUSALS_SHOWN)
			fprintf(stderr,
				"pyebpf: push to %s: %s refused for good (HTTP %ld: %s): kept in %s, not sent "
				"again%s\n",
				b->ep->base, name, *status, answer_text(&ans, text, sizeof(text)), p->c.dir,
				b->refusals_told + 1 == REFUSALS_SHOWN ? " (more refusals are only counted)" : "");
		b->refusals_told++;
	} else if (!*status) {
		tell_down(b, err, false);
	} else {
		snprintf(what, sizeof(what), "HTTP %ld%s (%s)", *status,
			 *retry_after > 0 ? ", retry after the time it asked" : "",
			 answer_text(&ans, text, sizeof(text)));
		tell_down(b, what, v == PUSH_SETUP);
	}
	free(ans.buf);
	return v;
}

/* The backoff after a failure, with jitter from the thread's own generator. */
static double backend_wait(struct backend *b, double retry_after)
{
	return backoff_wait(b->failures, (double)rand_r(&b->rand_state) / ((double)RAND_MAX + 1), retry_after);
}

/* The answer to interval `name` recorded: in memory under the lock, on disk
 * (written and synced) outside it, so the sampling loop never waits on a sync. */
static void record_answer(struct backend *b, const char *name, enum journal_state st, long status)
{
	struct pusher *p = b->owner;

	pthread_mutex_lock(&p->lock);
	push_journal__set(b->journal, name, st);
	queue_remove(b, name);
	if (st == JOURNAL_SENT)
		b->sent++;
	else
		b->rejected++;
	pthread_mutex_unlock(&p->lock);
	if (push_journal__append(b->journal, name, st, status))
		err_msg("push: cannot write the journal in %s: %s (%s may be sent again)", p->c.dir, strerror(errno),
			name);
	if (push_journal__stale(b->journal)) {
		pthread_mutex_lock(&p->lock);
		if (push_journal__compact(b->journal))
			err_msg("push: cannot compact the journal in %s: %s", p->c.dir, strerror(errno));
		pthread_mutex_unlock(&p->lock);
	}
}

static void *backend_main(void *arg)
{
	struct backend *b = arg;
	struct pusher *p = b->owner;
	CURL *curl = curl_easy_init();
	double next_try = 0, next_scan = 0, cpu0 = thread_cpu_s();
	char name[128];

	while (curl) {
		bool have, rescan, maybe = false, sent_whole;
		long status;
		double retry_after;
		enum push_verdict v;

		pthread_mutex_lock(&p->lock);
		if (p->stop_now || (p->draining && (mono_s() >= p->drain_until || next_try > p->drain_until))) {
			pthread_mutex_unlock(&p->lock);
			break;
		}
		if (mono_s() < next_try) {
			wait_until(p, p->draining && p->drain_until < next_try ? p->drain_until : next_try);
			pthread_mutex_unlock(&p->lock);
			continue;
		}
		rescan = b->rescan || (!b->nq && mono_s() >= next_scan);
		pthread_mutex_unlock(&p->lock);
		if (rescan) {
			scan(b);
			next_scan = mono_s() + RESCAN_S;
		}
		pthread_mutex_lock(&p->lock);
		have = b->nq > 0;
		if (have) {
			snprintf(name, sizeof(name), "%s", b->queue[0]);
			maybe = push_journal__state(b->journal, name) == JOURNAL_MAYBE;
		} else if (p->draining) {
			pthread_mutex_unlock(&p->lock);
			break;
		} else {
			wait_until(p, next_scan); /* an offer, a finish, or time to look again */
		}
		pthread_mutex_unlock(&p->lock);
		if (!have)
			continue;
		v = push_one(b, curl, name, maybe, &status, &retry_after, &sent_whole);
		if (v == PUSH_SENT) {
			if (status)
				record_answer(b, name, JOURNAL_SENT, status);
			else { /* gone: nothing to mark */
				pthread_mutex_lock(&p->lock);
				queue_remove(b, name);
				pthread_mutex_unlock(&p->lock);
			}
			b->failures = 0;
			next_try = mono_s() + 1.0 / PUSH_MAX_RATE;
		} else if (v == PUSH_REJECTED) {
			record_answer(b, name, JOURNAL_REJECTED, status);
			b->failures = 0;
		} else {
			/* Sent whole, no answer: it may be there; asked before it goes again. */
			if (!status && sent_whole && !maybe) {
				pthread_mutex_lock(&p->lock);
				push_journal__set(b->journal, name, JOURNAL_MAYBE);
				pthread_mutex_unlock(&p->lock);
				if (push_journal__append(b->journal, name, JOURNAL_MAYBE, 0))
					err_msg("push: cannot write the journal in %s: %s", p->c.dir, strerror(errno));
			}
			pthread_mutex_lock(&p->lock);
			b->retries++;
			pthread_mutex_unlock(&p->lock);
			b->failures++;
			next_try = mono_s() + backend_wait(b, retry_after);
		}
	}
	curl_easy_cleanup(curl);
	pthread_mutex_lock(&p->lock);
	b->cpu_s = thread_cpu_s() - cpu0;
	p->running--;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct pusher *pusher__start(const struct push_config *c)
{
	struct pusher *p = xcalloc(1, sizeof(*p));
	pthread_condattr_t ca;
	char why[512];
	int err;

	p->c = *c;
	p->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->dirfd < 0) {
		err_msg("cannot open %s: %s", c->dir, strerror(errno));
		free(p);
		return NULL;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		err_msg("push: libcurl could not start");
		close(p->dirfd);
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	p->n = c->nendpoints;
	p->b = xcalloc(p->n + 1, sizeof(*p->b));
	for (size_t i = 0; i < p->n; i++) {
		struct backend *b = &p->b[i];
		char key[17];

		b->owner = p;
		b->ep = &c->endpoints[i];
		b->rescan = true;
		b->rand_state = (unsigned)(now_ns() ^ (uint64_t)getpid() ^ i);
		push_endpoint__key(b->ep, c->auth.tenant, key);
		b->journal = push_journal__open(p->dirfd, key, b->ep->base, why, sizeof(why));
		if (!b->journal) {
			err_msg("push: %s", why);
			pusher__free(p);
			return NULL;
		}
	}
	for (size_t i = 0; i < p->n; i++) {
		pthread_mutex_lock(&p->lock);
		p->running++;
		pthread_mutex_unlock(&p->lock);
		if ((err = pthread_create(&p->b[i].thread, NULL, backend_main, &p->b[i]))) {
			err_msg("push: cannot start a thread: %s", strerror(err));
			pthread_mutex_lock(&p->lock);
			p->running--;
			pthread_mutex_unlock(&p->lock);
			pusher__free(p);
			return NULL;
		}
		p->b[i].started = true;
	}
	return p;
}

static void handoff_free(struct handoff *h)
{
	series_free(h->s, h->n);
	h->s = NULL;
}

void pusher__offer(struct pusher *p, const char *name, const struct profile *prof)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		struct backend *b = &p->b[i];
		struct handoff h = { .s = NULL };

		/* Split here, outside the lock: each backend its own copy (they send at their own pace). */
		snprintf(h.name, sizeof(h.name), "%s", name);
		h.s = series_split(prof, &p->c.series, &h.n);
		pthread_mutex_lock(&p->lock);
		if (b->nhand == HANDOFF_MAX) { /* a backend away: the oldest waits in the spool alone */
			handoff_free(&b->hand[0]);
			memmove(&b->hand[0], &b->hand[1], (HANDOFF_MAX - 1) * sizeof(*b->hand));
			b->nhand--;
		}
		b->hand[b->nhand++] = h;
		if (in_window(p, name) && lacks(push_journal__state(b->journal, name)))
			queue_add(b, name);
		pthread_mutex_unlock(&p->lock);
	}
	pusher__poke(p);
}

void pusher__poke(struct pusher *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

bool pusher__unsent(struct pusher *p, const char *name)
{
	bool unsent = false;

	if (!p)
		return false;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n && !unsent; i++)
		unsent = lacks(push_journal__state(p->b[i].journal, name));
	pthread_mutex_unlock(&p->lock);
	return unsent;
}

void pusher__finish(struct pusher *p, double seconds)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	if (!p->draining) {
		p->draining = true;
		p->drain_until = mono_s() + seconds;
	}
	pthread_cond_broadcast(&p->cond);
	while (p->running && mono_s() < p->drain_until)
		wait_until(p, p->drain_until);
	/* Time is up: a push in flight is cut short (its progress callback sees this). */
	__atomic_store_n(&p->stop_now, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (size_t i = 0; i < p->n; i++)
		if (p->b[i].started) {
			pthread_join(p->b[i].thread, NULL);
			p->b[i].started = false;
		}
}

void pusher__stats(struct pusher *p, struct push_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n; i++) {
		const struct backend *b = &p->b[i];

		st->sent += b->sent;
		st->rejected += b->rejected;
		st->failures += b->retries;
		st->profiles += b->profiles;
		st->bytes += b->bytes;
		st->cpu_s += b->cpu_s;
		/* The backend that lacks most: until its scan, all of the directory may be. */
		if (b->rescan)
			st->unsent = st->unsent > 1 ? st->unsent : 1;
		else if (b->nq > st->unsent)
			st->unsent = b->nq;
	}
	pthread_mutex_unlock(&p->lock);
}

void pusher__free(struct pusher *p)
{
	if (!p)
		return;
	pusher__finish(p, 0);
	for (size_t i = 0; i < p->n; i++) {
		push_journal__close(p->b[i].journal);
		for (size_t k = 0; k < p->b[i].nhand; k++)
			handoff_free(&p->b[i].hand[k]);
		queue_clear(&p->b[i]);
		free(p->b[i].queue);
	}
	free(p->b);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	close(p->dirfd);
	free(p);
}
