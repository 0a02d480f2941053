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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "archive.h"
#include "push/backoff.h"
#include "push/journal.h"
#include "push/otlp_req.h"
#include "push/pyroscope_req.h"
#include "rotation.h"
#include "util.h"

#define PUSH_USER_AGENT "pyebpf/0.1.0"
/* What is kept of an answer's body: enough for its error message. */
#define ANSWER_MAX 4096

/* Intervals a backend may be handed, not yet sent; past that the oldest is
 * dropped from memory (it is still in the spool, read from there). */
#define HANDOFF_MAX 4

/* An interval handed over as it was written: its series, split already. */
struct handoff {
	char name[128];
	struct push_series *s;
	size_t n;
};

struct backend {
	struct pusher *owner;
	struct handoff hand[HANDOFF_MAX]; /* under owner->lock, oldest first */
	size_t nhand;
	const struct push_endpoint *ep;
	struct push_journal *journal; /* under owner->lock */
	pthread_t thread;
	bool started;
	unsigned failures; /* in a row */
	bool told_down;    /* the line that it fails was said; the next success says it is back */
	uint64_t sent, rejected, retries, profiles, bytes;
	double cpu_s;
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

/* The oldest interval file in the window that this backend lacks; false when none. */
static bool next_unsent(struct backend *b, char *name, size_t size)
{
	struct pusher *p = b->owner;
	size_t n = 0;
	struct rotation_file *v = rotation_list(p->dirfd, &n);
	bool found = false;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < n && !found; i++) {
		if (v[i].start_ns < p->c.since_ns || v[i].start_ns >= p->c.until_ns)
			continue;
		if (push_journal__state(b->journal, v[i].name) == JOURNAL_UNSENT) {
			snprintf(name, size, "%s", v[i].name);
			found = true;
		}
	}
	pthread_mutex_unlock(&p->lock);
	rotation_list_free(v, n);
	return found;
}

/* curl: the answer's first ANSWER_MAX bytes (the rest is read and dropped). */
struct answer {
	char buf[ANSWER_MAX + 1];
	size_t len;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct answer *a = ctx;
	size_t n = size * nmemb, room = ANSWER_MAX - a->len;

	memcpy(a->buf + a->len, data, n < room ? n : room);
	a->len += n < room ? n : room;
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

/* The request body of interval `name` for this backend; 0, or -1 after one line. */
static int build_body(struct backend *b, const char *name, uint8_t **body, size_t *len, size_t *nprofiles)
{
	struct pusher *p = b->owner;
	struct profile *prof = NULL;
	struct push_series *s = NULL;
	size_t ns = 0;
	int ret;

	/* Handed over when it was written (pusher__offer), or read back from the spool. */
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < b->nhand && !s; i++)
		if (!strcmp(b->hand[i].name, name)) {
			s = b->hand[i].s;
			ns = b->hand[i].n;
			memmove(&b->hand[i], &b->hand[i + 1], (b->nhand - i - 1) * sizeof(*b->hand));
			b->nhand--;
		}
	pthread_mutex_unlock(&p->lock);
	if (!s) {
		prof = recording__read_at(p->dirfd, name, O_NOFOLLOW);
		if (!prof)
			return -1;
		s = series_split(prof, &p->c.series, &ns);
	}
	ret = b->ep->kind == PUSH_OTLP ? otlp_request(s, ns, name, body, len, nprofiles)
				       : pyroscope_request(s, ns, name, body, len, nprofiles);
	if (ret)
		err_msg("push: cannot encode %s: %s", name, strerror(errno));
	series_free(s, ns);
	profile__free(prof);
	return ret;
}

/* Credentials, read again for each push (a rotated file is taken). 0, or -1 after one line. */
static int set_auth(struct pusher *p, CURL *curl, char *secret, size_t size)
{
	const struct push_auth *a = &p->c.auth;
	char why[512];
	int ret = 0;

	if (a->bearer_file &&
	    !(ret = secret_read(a->bearer_file, "--bearer-token-file", secret, size, why, sizeof(why)))) {
		curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
		curl_easy_setopt(curl, CURLOPT_XOAUTH2_BEARER, secret);
	} else if (a->basic_file &&
		   !(ret = secret_read(a->basic_file, "--basic-auth-file", secret, size, why, sizeof(why))) &&
		   !(ret = secret_check_basic(secret, why, sizeof(why)))) {
		curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
		curl_easy_setopt(curl, CURLOPT_USERPWD, secret);
	}
	if (ret)
		err_msg("push: %s", why);
	return ret;
}

/* One try of one interval: the HTTP status (0: no answer), Retry-After in *retry_after. */
static long post(struct backend *b, CURL *curl, const uint8_t *body, size_t len, struct answer *ans,
		 double *retry_after, char *err, size_t errlen)
{
	struct pusher *p = b->owner;
	struct curl_slist *h = NULL;
	char secret[SECRET_MAX + 2] = "", tenant[256], errbuf[CURL_ERROR_SIZE] = "";
	curl_off_t ra = -1;
	long status = 0;
	CURLcode rc;

	curl_easy_reset(curl);
	if (set_auth(p, curl, secret, sizeof(secret))) {
		snprintf(err, errlen, "credentials not read");
		return 0;
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
	curl_easy_setopt(curl, CURLOPT_URL, b->ep->url);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
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
	if (p->c.auth.ca_file)
		curl_easy_setopt(curl, CURLOPT_CAINFO, p->c.auth.ca_file);
	rc = curl_easy_perform(curl);
	secret_wipe(secret, sizeof(secret));
	curl_slist_free_all(h);
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
		return 0;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	if (curl_easy_getinfo(curl, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK && ra > 0)
		*retry_after = (double)ra;
	return status;
}

/* An answer's text for a one-line message: its first line, made printable. */
static const char *answer_text(const struct answer *a, char *out, size_t size)
{
	char line[512];

	snprintf(line, sizeof(line), "%.*s", (int)strcspn(a->buf, "\r\n"), a->buf);
	return utf8_clean(line, out, size);
}

/* Send interval `name`; what the answer means for it. */
static enum push_verdict push_one(struct backend *b, CURL *curl, const char *name, long *status, double *retry_after)
{
	struct pusher *p = b->owner;
	uint8_t *body = NULL;
	size_t len = 0, nprofiles = 0;
	struct answer ans = { .len = 0 };
	char err[CURL_ERROR_SIZE + 64] = "", text[512];
	enum push_verdict v;
	struct stat st;

	*status = 0;
	*retry_after = 0;
	if (fstatat(p->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && errno == ENOENT)
		return PUSH_SENT; /* pruned meanwhile: nothing to send (not marked) */
	if (build_body(b, name, &body, &len, &nprofiles))
		return PUSH_REJECTED; /* status 0: not readable */
	if (!nprofiles) {             /* no samples of any kind: nothing to send, done */
		free(body);
		*status = 204;
		return PUSH_SENT;
	}
	*status = post(b, curl, body, len, &ans, retry_after, err, sizeof(err));
	free(body);
	v = *status ? push_verdict_of(*status) : PUSH_RETRY;
	if (v == PUSH_SENT && b->ep->kind == PUSH_OTLP)
		otlp_partial_success_note(stderr, b->ep->base, name, (const uint8_t *)ans.buf, ans.len);
	if (v == PUSH_SENT) {
		b->profiles += nprofiles;
		b->bytes += len;
		if (b->told_down)
			fprintf(stderr, "pyebpf: push to %s: it answers again; sending what it lacks, oldest first\n",
				b->ep->base);
		b->told_down = false;
		if (p->c.log)
			fprintf(stderr, "pyebpf: pushed %s to %s (%zu profiles, %zu bytes)\n", name, b->ep->base,
				nprofiles, len);
	} else if (v == PUSH_REJECTED) {
		fprintf(stderr, "pyebpf: push to %s: %s refused for good (HTTP %ld: %s): kept in %s, not sent again\n",
			b->ep->base, name, *status, answer_text(&ans, text, sizeof(text)), p->c.dir);
	} else if (!b->told_down) {
		b->told_down = true;
		if (!*status)
			fprintf(stderr, "pyebpf: push to %s: %s; intervals are kept in %s and sent when it answers\n",
				b->ep->base, err, p->c.dir);
		else
			fprintf(stderr,
				"pyebpf: push to %s: HTTP %ld%s%s (%s); intervals are kept in %s and sent when it %s\n",
				b->ep->base, *status, *retry_after > 0 ? ", retry after " : "",
				*retry_after > 0 ? "the time it asked" : "", answer_text(&ans, text, sizeof(text)),
				p->c.dir, v == PUSH_SETUP ? "takes them (check the URL and credentials)" : "answers");
	}
	return v;
}

/* The backoff after a failure, with jitter from the thread's own generator. */
static double backend_wait(struct backend *b, double retry_after)
{
	return backoff_wait(b->failures, (double)rand_r(&b->rand_state) / ((double)RAND_MAX + 1), retry_after);
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *backend_main(void *arg)
{
	struct backend *b = arg;
	struct pusher *p = b->owner;
	CURL *curl = curl_easy_init();
	double next_try = 0, cpu0 = thread_cpu_s();
	char name[128];

	while (curl) {
		bool have;
		long status;
		double retry_after, wait;
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
		pthread_mutex_unlock(&p->lock);
		have = next_unsent(b, name, sizeof(name));
		pthread_mutex_lock(&p->lock);
		if (!have) {
			if (p->draining) {
				pthread_mutex_unlock(&p->lock);
				break;
			}
			wait_until(p, mono_s() + 1); /* a poke, or a look at the directory each second */
			pthread_mutex_unlock(&p->lock);
			continue;
		}
		pthread_mutex_unlock(&p->lock);
		v = push_one(b, curl, name, &status, &retry_after);
		pthread_mutex_lock(&p->lock);
		if (v == PUSH_SENT && status != 0) {
			if (push_journal__mark(b->journal, name, JOURNAL_SENT, status))
				err_msg("push: cannot write the journal in %s: %s (%s may be sent again)", p->c.dir,
					strerror(errno), name);
			b->sent++;
			b->failures = 0;
			next_try = mono_s() + 1.0 / PUSH_MAX_RATE;
		} else if (v == PUSH_REJECTED) {
			if (push_journal__mark(b->journal, name, JOURNAL_REJECTED, status))
				err_msg("push: cannot write the journal in %s: %s", p->c.dir, strerror(errno));
			b->rejected++;
			b->failures = 0;
		} else if (v != PUSH_SENT) {
			b->retries++;
			b->failures++;
			wait = backend_wait(b, retry_after);
			next_try = mono_s() + wait;
		}
		pthread_mutex_unlock(&p->lock);
	}
	b->cpu_s = thread_cpu_s() - cpu0;
	curl_easy_cleanup(curl);
	pthread_mutex_lock(&p->lock);
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
		if (pthread_create(&p->b[i].thread, NULL, backend_main, &p->b[i])) {
			err_msg("push: cannot start a thread: %s", strerror(errno));
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
		unsent = push_journal__state(p->b[i].journal, name) == JOURNAL_UNSENT;
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
	size_t n = 0;
	struct rotation_file *v;

	memset(st, 0, sizeof(*st));
	if (!p)
		return;
	v = rotation_list(p->dirfd, &n);
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n; i++) {
		const struct backend *b = &p->b[i];

		st->sent += b->sent;
		st->rejected += b->rejected;
		st->failures += b->retries;
		st->profiles += b->profiles;
		st->bytes += b->bytes;
		st->cpu_s += b->cpu_s;
	}
	for (size_t k = 0; k < n; k++) {
		bool unsent = false;

		if (v[k].start_ns < p->c.since_ns || v[k].start_ns >= p->c.until_ns)
			continue;
		for (size_t i = 0; i < p->n && !unsent; i++)
			unsent = push_journal__state(p->b[i].journal, v[k].name) == JOURNAL_UNSENT;
		st->unsent += unsent;
	}
	pthread_mutex_unlock(&p->lock);
	rotation_list_free(v, n);
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
	}
	free(p->b);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	close(p->dirfd);
	free(p);
}
