/*
 * Pushing to real backends started on loopback by the tests: an OpenTelemetry
 * Collector built from the Go module proxy (tests/backends/otelcol.sh), and a
 * Pyroscope stand-in that speaks Pyroscope's push and query protocol through
 * Pyroscope's own API module (tests/backends/pyroscope.sh: Pyroscope itself
 * cannot be had from the module proxy). What arrived is read back and
 * compared with the local interval files: the same samples per function,
 * exactly the same total.
 */
#include "integ.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PY "/usr/bin/python3"
#define WORK "../tests/fixtures/pywork.py"
#define CPU_TYPE "process_cpu:cpu:nanoseconds:cpu:nanoseconds"
#define PERIOD_NS 10101010LL /* 99 Hz */

static pid_t backend_pid(const char *dir)
{
	char path[512];
	FILE *f;
	int pid = 0;

	snprintf(path, sizeof(path), "%s/pid", dir);
	f = fopen(path, "r");
	cr_assert(f, "no %s", path);
	cr_assert_eq(fscanf(f, "%d", &pid), 1);
	fclose(f);
	return pid;
}

/* A number of the stub's JSON answer: "key":N. */
static long long json_num(const char *json, const char *key)
{
	char pat[128];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	cr_assert(p, "no %s in %s", key, json);
	return atoll(p + strlen(pat));
}

__attribute__((noinline)) static char *stub_get(int port, const char *path)
{
	char url[1024], *body = NULL;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	cr_assert_eq(http(url, NULL, &body, NULL), 200, "%s: %s", url, body ? body : "");
	return body;
}

static void stub_post(int port, const char *path)
{
	char url[512], *body = NULL;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	cr_assert_eq(http(url, (const char *const[]){ "-X", "POST", NULL }, &body, NULL), 200, "%s: %s", url, body);
	free(body);
}

/* The local files of dir as folded stacks. */
static void local_folded(const char *dir, struct folded *f)
{
	char *out = temp_path(dir, "local.folded");
	char *spool = temp_path(dir, "spool");
	struct run_result r;

	run((const char *const[]){ PYEBPF, "report", spool, "-o", out, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	folded_load(out, f);
	free(out);
	free(spool);
}

/* What the Pyroscope stand-in holds of CPU time, merged, as folded stacks (pyebpf report reads its pprof). */
static void pyroscope_folded(const char *dir, int port, const char *selector, struct folded *f)
{
	char *pprof = temp_path(dir, "merged.pb.gz"), *out = temp_path(dir, "remote.folded"), url[1024], cmd[2048];
	struct run_result r;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/stub/pprof?type=" CPU_TYPE "&selector=%s", port, selector);
	snprintf(cmd, sizeof(cmd), "curl -sf -g -o %s '%s'", pprof, url);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	run((const char *const[]){ PYEBPF, "report", pprof, "-o", out, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	folded_load(out, f);
	free(pprof);
	free(out);
}

static void record_split(const char *spool, const char *seconds, const char *const push[], struct run_result *r,
			 double timeout)
{
	const char *argv[32] = { PYEBPF, "record", "--continuous", spool, "--interval", "1s" };
	int n = 6;

	for (int i = 0; push[i]; i++)
		argv[n++] = push[i];
	argv[n++] = "--";
	argv[n++] = PY;
	argv[n++] = WORK;
	argv[n++] = "split";
	argv[n++] = seconds;
	argv[n] = NULL;
	run(argv, timeout, r);
}

/* alpha and beta of pywork's split in a folded profile. */
static void split_of(const struct folded *f, uint64_t *alpha, uint64_t *beta)
{
	*alpha = count_all(f, "alpha (", NULL);
	*beta = count_all(f, "beta (", NULL);
}

Test(push, otlp_lands_the_same_functions_and_total_in_a_collector, .timeout = 240, .fini = stop_started)
{
	const char *dir = temp_dir();
	char *oc = temp_path(dir, "oc"), *spool = temp_path(dir, "spool"), *json = temp_path(dir, "oc/profiles.json");
	char *remote = temp_path(dir, "remote.folded"), cmd[2048];
	struct run_result r;
	struct folded local, got;
	uint64_t la, lb, ga, gb;

	backend_start("otelcol", oc, 24318, NULL);
	record_split(spool, "4", (const char *const[]){ "--otlp", "http://127.0.0.1:24318", NULL }, &r, 90);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "pyebpf: pushed "), "%s", r.err);
	cr_assert_null(strstr(r.err, "not sent yet"), "%s", r.err);
	run_result_free(&r);
	sleep_s(0.5); /* the file exporter flushes every 100 ms */
	snprintf(cmd, sizeof(cmd), "python3 ../tests/backends/otlp_folded.py %s cpu > %s", json, remote);
	cr_assert_eq(system(cmd), 0);
	backend_stop("otelcol", oc);
	local_folded(dir, &local);
	folded_load(remote, &got);
	split_of(&local, &la, &lb);
	split_of(&got, &ga, &gb);
	cr_assert_gt(la, 200, "alpha: %llu", (unsigned long long)la);
	cr_assert_eq(ga, la, "alpha: %llu in the collector, %llu here", (unsigned long long)ga, (unsigned long long)la);
	cr_assert_eq(gb, lb, "beta: %llu in the collector, %llu here", (unsigned long long)gb, (unsigned long long)lb);
	cr_assert_eq(got.total, local.total, "every CPU sample: %llu there, %llu here", (unsigned long long)got.total,
		     (unsigned long long)local.total);
	/* Running push again sends nothing: it all went while recording. */
	run((const char *const[]){ PYEBPF, "push", spool, "--otlp", "http://127.0.0.1:24318", NULL }, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "pushed 0 intervals"), "%s", r.err);
	run_result_free(&r);
	folded_free(&local);
	folded_free(&got);
}

/*
 * The acceptance path: Pyroscope away when recording starts, there for a
 * while, frozen (SIGSTOP: connections accepted, no answer) while the
 * recording ends; then thawed and `pyebpf push` sends what it lacks.
 * Exactly the local total arrives, nothing twice, whichever way Pyroscope
 * treats a push whose client left before the answer: not stored (its
 * current write path), or stored anyway (store_cancelled: its older one);
 * then pyebpf asks before sending that interval again.
 */
static void frozen_then_backfilled(int port, bool store_cancelled)
{
	const char *dir = temp_dir();
	char *py = temp_path(dir, "py"), *spool = temp_path(dir, "spool"), *err = temp_path(dir, "err.txt"), url[64];
	char *stats;
	struct folded local, got;
	uint64_t la, lb, ga, gb;
	struct run_result r;
	pid_t rec, pid;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	rec = spawn_capture((const char *const[]){ PYEBPF, "record", "--continuous", spool, "--interval", "1s",
						   "--push", url, "--push-timeout", "3s", "--", PY, WORK, "split", "9",
						   NULL },
			    err);
	wait_for_text(err, "intervals are kept in", 30); /* away at start: one warning, recording goes on */
	backend_start("pyroscope", py, port,
		      (const char *const[]){ store_cancelled ? "-store-cancelled" : NULL, NULL });
	wait_for_text(err, "it answers again", 30);
	sleep_s(2);
	pid = backend_pid(py);
	kill(pid, SIGSTOP);
	cr_assert_eq(wait_exit(rec, 60), 0, "the recording ends with its command");
	kill(pid, SIGCONT);
	sleep_s(1);
	run((const char *const[]){ PYEBPF, "push", spool, "--push", url, NULL }, 120, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	if (store_cancelled)
		cr_assert(strstr(r.err, "arrived before its answer was lost: not sent again"), "%s", r.err);
	run_result_free(&r);
	/* Twice sends nothing twice. */
	run((const char *const[]){ PYEBPF, "push", spool, "--push", url, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "pushed 0 intervals"), "%s", r.err);
	run_result_free(&r);
	stats = stub_get(port, "/stub/stats");
	cr_assert_eq(json_num(stats, "duplicate_stored_ids"), 0, "no profile stored twice: %s", stats);
	local_folded(dir, &local);
	pyroscope_folded(dir, port, "{service_name=\"python3\"}", &got);
	backend_stop("pyroscope", py);
	split_of(&local, &la, &lb);
	split_of(&got, &ga, &gb);
	cr_assert_gt(la, 400, "alpha: %llu", (unsigned long long)la);
	cr_assert_eq(ga, la, "alpha: %llu in Pyroscope, %llu here", (unsigned long long)ga, (unsigned long long)la);
	cr_assert_eq(gb, lb, "beta: %llu in Pyroscope, %llu here", (unsigned long long)gb, (unsigned long long)lb);
	cr_assert_eq(got.total, folded_comm_total(&local, "python3"),
		     "every CPU sample of the service: %llu there, %llu here", (unsigned long long)got.total,
		     (unsigned long long)folded_comm_total(&local, "python3"));
	free(stats);
	folded_free(&local);
	folded_free(&got);
}

Test(push, pyroscope_absent_then_frozen_then_backfilled_gets_exactly_the_local_total, .timeout = 300,
     .fini = stop_started)
{
	frozen_then_backfilled(24040, false);
}

Test(push, a_push_pyroscope_stored_after_its_client_left_is_not_sent_again, .timeout = 300, .fini = stop_started)
{
	frozen_then_backfilled(24050, true);
}

/* A spool of `seconds` of pywork's split recorded with no backend at all. */
static char *spool_of(const char *dir, const char *seconds)
{
	char *spool = temp_path(dir, "spool");
	struct run_result r;

	record_split(spool, seconds, (const char *const[]){ NULL }, &r, 90);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	return spool;
}

static void forget_pushes(const char *spool)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "rm -f %s/.pyebpf-push-*.journal", spool);
	cr_assert_eq(system(cmd), 0);
}

/* The CPU total the stand-in holds of python3, in samples. */
static long long pyroscope_samples(int port)
{
	char *t = stub_get(port, "/stub/totals?type=" CPU_TYPE "&selector=%7Bservice_name=%22python3%22%7D");
	long long v = json_num(t, "total") / PERIOD_NS;

	free(t);
	return v;
}

static long long local_samples(const char *dir)
{
	struct folded f;
	long long v;

	local_folded(dir, &f);
	v = (long long)folded_comm_total(&f, "python3");
	folded_free(&f);
	return v;
}

Test(push, failures_then_success_and_retry_after, .timeout = 240, .fini = stop_started)
{
	const char *dir = temp_dir();
	char *py = temp_path(dir, "py"), *spool = spool_of(dir, "3"), *stats;
	long long want = local_samples(dir);
	struct run_result r;

	backend_start("pyroscope", py, 24041, NULL);
	/* 500s, then 200: every interval arrives once, oldest first. */
	stub_post(24041, "/stub/fail?status=500&count=3");
	run((const char *const[]){ PYEBPF, "push", spool, "--push", "http://127.0.0.1:24041", NULL }, 120, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(occurrences(r.err, "24041: HTTP 500"), 1, "one line while it fails, not one per try: %s", r.err);
	cr_assert(strstr(r.err, "it answers again"), "%s", r.err);
	run_result_free(&r);
	stats = stub_get(24041, "/stub/stats");
	cr_assert_eq(json_num(stats, "injected_failures"), 3, "%s", stats);
	cr_assert_eq(json_num(stats, "duplicate_stored_ids"), 0, "%s", stats);
	free(stats);
	cr_assert_eq(pyroscope_samples(24041), want);
	/* 429 with Retry-After: 2 s is waited, though the backoff would retry sooner. */
	stub_post(24041, "/stub/reset");
	forget_pushes(spool);
	stub_post(24041, "/stub/fail?status=429&count=1&retry_after=2");
	run((const char *const[]){ PYEBPF, "push", spool, "--push", "http://127.0.0.1:24041", NULL }, 120, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "HTTP 429, retry after the time it asked"), "%s", r.err);
	cr_assert_geq(r.seconds, 2.0, "Retry-After honoured: %.2f s", r.seconds);
	run_result_free(&r);
	cr_assert_eq(pyroscope_samples(24041), want);
	backend_stop("pyroscope", py);
}

Test(push, refused_for_good_is_one_line_kept_and_not_retried, .timeout = 240, .fini = stop_started)
{
	const char *dir = temp_dir();
	char *py = temp_path(dir, "py"), *spool = spool_of(dir, "2"), *stats;
	int files = count_files(spool, "pyebpf-");
	struct run_result r;
	long long pushes;

	/* Older than the backend's window: Pyroscope answers 400 for each. */
	backend_start("pyroscope", py, 24042, (const char *const[]){ "-reject-older-than", "1s", NULL });
	sleep_s(2);
	run((const char *const[]){ PYEBPF, "push", spool, "--push", "http://127.0.0.1:24042", NULL }, 120, &r);
	cr_assert_eq(r.status, 1, "%s", r.err);
	/* An interval with no samples (the command's last moments) has nothing to refuse. */
	int empty = 0;
	const char *summary = strstr(r.err, "pyebpf: pushed ");

	cr_assert(summary && sscanf(summary, "pyebpf: pushed %d intervals (0 profiles", &empty) == 1, "%s", r.err);
	cr_assert_eq(occurrences(r.err, "refused for good (HTTP 400") + empty, files, "one line per interval: %s",
		     r.err);
	cr_assert(strstr(r.err, "outside of ingestion window"), "the backend's reason: %s", r.err);
	run_result_free(&r);
	cr_assert_eq(count_files(spool, "pyebpf-"), files, "kept on disk");
	stats = stub_get(24042, "/stub/stats");
	pushes = json_num(stats, "pushes");
	free(stats);
	run((const char *const[]){ PYEBPF, "push", spool, "--push", "http://127.0.0.1:24042", NULL }, 60, &r);
	cr_assert(strstr(r.err, "pushed 0 intervals"), "%s", r.err);
	run_result_free(&r);
	stats = stub_get(24042, "/stub/stats");
	cr_assert_eq(json_num(stats, "pushes"), pushes, "not tried again: %s", stats);
	free(stats);
	backend_stop("pyroscope", py);
}

static char *secret(const char *dir, const char *name, const char *text, mode_t mode)
{
	char *path = temp_path(dir, name);
	FILE *f = fopen(path, "w");

	cr_assert(f);
	fputs(text, f);
	fclose(f);
	cr_assert_eq(chmod(path, mode), 0);
	return path;
}

Test(push, credentials_tenant_and_labels, .timeout = 240, .fini = stop_started)
{
	const char *dir = temp_dir();
	char *py = temp_path(dir, "py"), *spool = spool_of(dir, "2"), *stats, *t;
	char *good = secret(dir, "good", "pyebpf:s3cret\n", 0600), *bad = secret(dir, "bad", "pyebpf:nope\n", 0600);
	long long want = local_samples(dir);
	struct run_result r;

	backend_start("pyroscope", py, 24043,
		      (const char *const[]){ "-basic-auth-file", good, "-require-tenant", NULL });
	/* Wrong credentials: one line, nothing marked sent, nothing deleted. */
	run((const char *const[]){ PYEBPF, "push", spool, "--push", "http://127.0.0.1:24043", "--basic-auth-file", bad,
				   "--tenant", "team-a", "--give-up", "3s", NULL },
	    60, &r);
	cr_assert_eq(r.status, 1, "%s", r.err);
	cr_assert_eq(occurrences(r.err, "HTTP 401"), 1, "%s", r.err);
	cr_assert(strstr(r.err, "check the URL and credentials"), "%s", r.err);
	cr_assert_null(strstr(r.err, "nope"), "no secret in a message");
	cr_assert(strstr(r.err, "not sent (kept"), "%s", r.err);
	run_result_free(&r);
	/* The right ones: everything, with the tenant and the labels asked for. */
	run((const char *const[]){ PYEBPF, "push", spool, "--push", "http://127.0.0.1:24043", "--basic-auth-file", good,
				   "--tenant", "team-a", "--label", "env=prod", NULL },
	    60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	stats = stub_get(24043, "/stub/stats");
	cr_assert(strstr(stats, "\"team-a\""), "the X-Scope-OrgID: %s", stats);
	free(stats);
	t = stub_get(24043, "/stub/totals?tenant=team-a&type=" CPU_TYPE
			    "&selector=%7Bservice_name=%22python3%22,env=%22prod%22,thread_name=%22MainThread%22%7D");
	cr_assert_eq(json_num(t, "total") / PERIOD_NS, want,
		     "every sample, filtered by a series and a sample label: %s", t);
	cr_assert(strstr(t, "\"host\""), "the host label: %s", t);
	free(t);
	backend_stop("pyroscope", py);
}

/* The CPU samples the stand-in holds under selector (URL-encoded), and that every series of them has `label`. */
static long long pyroscope_samples_of(int port, const char *selector, const char *label)
{
	char path[1024], *t;
	long long v;

	snprintf(path, sizeof(path), "/stub/totals?type=" CPU_TYPE "&selector=%s", selector);
	t = stub_get(port, path);
	v = json_num(t, "total") / PERIOD_NS;
	if (v && label)
		cr_assert(strstr(t, label), "every series has %s: %s", label, t);
	free(t);
	return v;
}

/* Every resource the collector wrote has service.name `service` and `key`=`value`: 0, else 1 and why on stdout. */
static const char otlp_resources_py[] =
	"import json, sys\n"
	"path, service, key, value = sys.argv[1:]\n"
	"n = 0\n"
	"for line in open(path, encoding='utf-8'):\n"
	"    if not line.strip():\n"
	"        continue\n"
	"    d = json.loads(line)\n"
	"    strings = d.get('dictionary', {}).get('stringTable', [''])\n"
	"    for rp in d.get('resourceProfiles', []):\n"
	"        a = {}\n"
	"        for kv in rp.get('resource', {}).get('attributes', []):\n"
	"            k = strings[kv['keyStrindex']] if 'keyStrindex' in kv else kv.get('key')\n"
	"            v = kv.get('value', {})\n"
	"            a[k] = strings[v['stringValueStrindex']] if 'stringValueStrindex' in v else v.get('stringValue')\n"
	"        n += 1\n"
	"        if a.get('service.name') != service or a.get(key) != value:\n"
	"            print('a resource filed elsewhere:', a)\n"
	"            sys.exit(1)\n"
	"print(n, 'resources')\n"
	"sys.exit(0 if n else 1)\n";

static void otlp_resources_are(const char *dir, const char *json, const char *service, const char *key,
			       const char *value)
{
	char *script = temp_path(dir, "resources.py");
	FILE *f = fopen(script, "w");
	struct run_result r;

	cr_assert(f);
	fputs(otlp_resources_py, f);
	fclose(f);
	run((const char *const[]){ "python3", script, json, service, key, value, NULL }, 30, &r);
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	run_result_free(&r);
	free(script);
}

/*
 * Issue 48: a live push that could not send (its backend away the whole
 * run), then `pyebpf push DIR` without --service-name and --label: each
 * interval file kept them, so Pyroscope and the collector file the
 * intervals under service_name=api with team=x, where the live push would
 * have, not under the command's name. A flag given to push still wins.
 */
Test(push, a_backfill_files_intervals_where_the_live_push_would_have, .timeout = 300, .fini = stop_started)
{
	const char *dir = temp_dir();
	char *py = temp_path(dir, "py"), *oc = temp_path(dir, "oc"), *spool = temp_path(dir, "spool");
	char *json = temp_path(dir, "oc/profiles.json"), *remote = temp_path(dir, "remote.folded"), cmd[4096];
	struct folded local, got;
	struct run_result r;

	record_split(spool, "3",
		     (const char *const[]){ "--push", "http://127.0.0.1:24053", "--service-name", "api", "--label",
					    "team=x", NULL },
		     &r, 90);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "not sent yet"), "nothing sent: %s", r.err);
	run_result_free(&r);
	local_folded(dir, &local);
	cr_assert_gt(local.total, 100);
	backend_start("pyroscope", py, 24052, NULL);
	backend_start("otelcol", oc, 24320, NULL);
	run((const char *const[]){ PYEBPF, "push", spool, "--push", "http://127.0.0.1:24052", NULL }, 120, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	cr_assert_eq(pyroscope_samples_of(24052, "%7Bservice_name=%22api%22,team=%22x%22%7D", "\"host\""),
		     (long long)local.total, "every sample under the recording's service and label");
	cr_assert_eq(pyroscope_samples_of(24052, "%7Bservice_name=%22python3%22%7D", NULL), 0,
		     "none under the command's name");
	run((const char *const[]){ PYEBPF, "push", spool, "--otlp", "http://127.0.0.1:24320", NULL }, 120, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	sleep_s(0.5); /* the file exporter flushes every 100 ms */
	otlp_resources_are(dir, json, "api", "team", "x");
	snprintf(cmd, sizeof(cmd), "python3 ../tests/backends/otlp_folded.py %s cpu > %s", json, remote);
	cr_assert_eq(system(cmd), 0);
	folded_load(remote, &got);
	cr_assert_eq(got.total, local.total, "every CPU sample: %llu there, %llu here", (unsigned long long)got.total,
		     (unsigned long long)local.total);
	folded_free(&got);
	/* Given to push, --service-name wins over the stored one; the stored label stays. */
	stub_post(24052, "/stub/reset");
	forget_pushes(spool);
	run((const char *const[]){ PYEBPF, "push", spool, "--push", "http://127.0.0.1:24052", "--service-name", "other",
				   NULL },
	    120, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	cr_assert_eq(pyroscope_samples_of(24052, "%7Bservice_name=%22other%22,team=%22x%22%7D", NULL),
		     (long long)local.total, "every sample under the service push was given");
	cr_assert_eq(pyroscope_samples_of(24052, "%7Bservice_name=%22api%22%7D", NULL), 0);
	backend_stop("otelcol", oc);
	backend_stop("pyroscope", py);
	free(remote);
	folded_free(&local);
}

Test(push, tls_with_the_right_ca_and_a_wrong_one, .timeout = 240, .fini = stop_started)
{
	const char *dir = temp_dir();
	char *py = temp_path(dir, "py"), *tls = temp_path(dir, "tls"), *spool = spool_of(dir, "2");
	char *ca = temp_path(dir, "tls/ca.pem"), *other = temp_path(dir, "tls/other-ca.pem");
	int files = count_files(spool, "pyebpf-");
	long long want = local_samples(dir);
	struct run_result r;

	backend_start("pyroscope", py, 24044, NULL);
	backend_start("tls", tls, 24444, (const char *const[]){ "24044", NULL });
	run((const char *const[]){ PYEBPF, "push", spool, "--push", "https://127.0.0.1:24444", "--ca-file", other,
				   "--give-up", "2s", NULL },
	    60, &r);
	cr_assert_eq(r.status, 1, "%s", r.err);
	cr_assert_eq(occurrences(r.err, "SSL certificate problem"), 1, "one line naming the certificate problem: %s",
		     r.err);
	run_result_free(&r);
	cr_assert_eq(count_files(spool, "pyebpf-"), files, "nothing deleted");
	run((const char *const[]){ PYEBPF, "push", spool, "--push", "https://127.0.0.1:24444", "--ca-file", ca, NULL },
	    60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	cr_assert_eq(pyroscope_samples(24044), want);
	backend_stop("tls", tls);
	backend_stop("pyroscope", py);
}

Test(push, spool_filled_to_its_bound_while_the_backend_is_away, .timeout = 240, .fini = stop_started)
{
	const char *dir = temp_dir();
	char *spool = temp_path(dir, "spool");
	struct run_result r;
	struct stat st;

	/* Nothing listens on the port: every interval stays, until the disk bound.
	 * An interval of this workload is 0.8-1.2 KB: 9 of them pass 6K, and
	 * what 6K keeps is more than --keep's 2 (6 intervals once wrote 5,934
	 * bytes, under the bound). */
	record_split(spool, "9",
		     (const char *const[]){ "--push", "http://127.0.0.1:24049", "--max-disk", "6K", "--keep", "2",
					    NULL },
		     &r, 90);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(occurrences(r.err, "intervals are kept in"), 1, "one warning: %s", r.err);
	cr_assert_geq(occurrences(r.err, "before it was pushed (beyond --max-disk"), 1, "%s", r.err);
	cr_assert_eq(occurrences(r.err, "(beyond --keep"), 0, "--keep never deletes an unsent file: %s", r.err);
	cr_assert(strstr(r.err, "deleted unsent (--max-disk)"), "counted in the summary: %s", r.err);
	run_result_free(&r);
	cr_assert_gt(count_files(spool, "pyebpf-"), 2, "more than --keep: they are unsent");
	cr_assert_eq(stat(spool, &st), 0);
}

Test(push, bad_push_options_are_one_line_before_sampling)
{
	const char *dir = temp_dir();
	char *spool = temp_path(dir, "spool"), *open_file = secret(dir, "open", "tok\n", 0644);
	static const struct {
		const char *opt, *value, *want;
	} cases[] = {
		{ "--push", "localhost:4040", "invalid URL for --push: not a URL" },
		{ "--otlp", "ftp://c:4318", "invalid URL for --otlp: unknown scheme 'ftp'" },
		{ "--push", "http://u:hunter2@h:4040", "credentials in the URL are refused" },
		{ "--bearer-token-file", "/nonexistent/token", "cannot read --bearer-token-file '/nonexistent/token'" },
		{ "--bearer-token-file", NULL, "can be read or written by other users (mode 644)" },
		{ "--tenant", "a\nb", "invalid tenant" },
		{ "--label", "__name__=x", "backend's own" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run_result r;
		const char *v = cases[i].value ? cases[i].value : open_file;
		bool url = !strcmp(cases[i].opt, "--push") || !strcmp(cases[i].opt, "--otlp");

		run((const char *const[]){ PYEBPF, "record", "--continuous", spool, url ? "-v" : "--push",
					   url ? "-v" : "http://127.0.0.1:1", cases[i].opt, v, "-d", "1", NULL },
		    30, &r);
		cr_assert_eq(r.status, 2, "%s %s: %s", cases[i].opt, v, r.err);
		cr_assert(strstr(r.err, cases[i].want), "%s %s: %s", cases[i].opt, v, r.err);
		cr_assert_eq(occurrences(r.err, "\n"), 1, "one line: %s", r.err);
		cr_assert_null(strstr(r.err, "hunter2"), "%s", r.err);
		cr_assert_null(strstr(r.err, SAMPLING), "before sampling");
		run_result_free(&r);
	}
	{
		struct run_result r;

		run((const char *const[]){ PYEBPF, "record", "--push", "http://127.0.0.1:1", "-d", "1", NULL }, 30, &r);
		cr_assert_eq(r.status, 2);
		cr_assert(strstr(r.err, "--push and --otlp need --continuous DIR"), "%s", r.err);
		run_result_free(&r);
	}
}

Test(push, systemd_unit_verifies)
{
	char cmd[1024];
	char *unit = temp_path(temp_dir(), "pyebpf.service");

	snprintf(cmd, sizeof(cmd),
		 "sed \"s#/usr/local/bin/pyebpf#$(realpath pyebpf)#\" ../deploy/pyebpf.service > %s && "
		 "systemd-analyze verify %s",
		 unit, unit);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/*
 * A Kubernetes pod without Kubernetes: a cgroup named as kubelet's systemd
 * driver names a burstable pod's containerd container, kubelet's log
 * directory of the pod (/var/log/pods/NAMESPACE_NAME_UID), and a Python in
 * its own mount namespace that claims another name and namespace in its own
 * files (a pod can write those): the node's side wins. kubelet's link of
 * the container's log (/var/log/containers/POD_NAMESPACE_CONTAINER-ID.log)
 * names the container. No API server is asked.
 */
#define POD_UID "3f2e1a0b_1c2d_4e5f_8a9b_0c1d2e3f4a5b"
#define POD_UID_DASHED "3f2e1a0b-1c2d-4e5f-8a9b-0c1d2e3f4a5b"
#define K8S_LOGS "/var/log/pods"
#define POD_CID "c0ffee00a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8"

static void cgroup2_mount(char *out, size_t size)
{
	FILE *f = fopen("/proc/mounts", "r");
	char dev[256], dir[1024], type[64], line[4096];

	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%255s %1023s %63s", dev, dir, type) == 3 && !strcmp(type, "cgroup2")) {
			snprintf(out, size, "%s", dir);
			break;
		}
	if (f)
		fclose(f);
}

Test(push, kubernetes_pod_labels_from_cgroup_and_the_pod_itself, .timeout = 240, .fini = stop_started)
{
	const char *dir = temp_dir();
	char *py = temp_path(dir, "py"), *spool = temp_path(dir, "spool"), *host = temp_path(dir, "hostname");
	char mnt[1024], cg[4096], cmd[16384], cmd2[1024], logs[512], link[512], *t;
	FILE *f;
	pid_t pod;

	cgroup2_mount(mnt, sizeof(mnt));
	cr_assert(mnt[0], "no cgroup2 mount");
	snprintf(cg, sizeof(cg),
		 "%s/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" POD_UID
		 ".slice/cri-containerd-" POD_CID ".scope",
		 mnt);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", cg);
	cr_assert_eq(system(cmd), 0);
	f = fopen(host, "w");
	cr_assert(f);
	fputs("kube-apiserver-fake\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "echo $$ > %s/cgroup.procs && exec unshare --mount --fork --kill-child sh -c '"
		 "mount --bind %s /etc/hostname && mount -t tmpfs tmpfs /run && "
		 "mkdir -p /run/secrets/kubernetes.io/serviceaccount && "
		 "echo kube-system > /run/secrets/kubernetes.io/serviceaccount/namespace && "
		 "exec " PY " " WORK " split 6'",
		 cg, host);
	snprintf(logs, sizeof(logs), K8S_LOGS "/shop_web-7d9f8b6c5-x2x9z_%s", POD_UID_DASHED);
	snprintf(cmd2, sizeof(cmd2), "mkdir -p %s", logs);
	cr_assert_eq(system(cmd2), 0);
	snprintf(link, sizeof(link), "/var/log/containers/web-7d9f8b6c5-x2x9z_shop_app-%s.log", POD_CID);
	mkdir("/var/log/containers", 0755);
	unlink(link);
	pod = spawn((const char *const[]){ "sh", "-c", cmd, NULL });
	backend_start("pyroscope", py, 24045, NULL);
	sleep_s(1);
	/* kubelet makes the log link once the container runs: here, after the recording saw it unnamed. */
	char *err = temp_path(dir, "err");
	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "--continuous", spool, "--interval", "1s",
							 "--container", POD_CID, "--push", "http://127.0.0.1:24045",
							 "-d", "4", NULL },
				  err);
	wait_for_text(err, SAMPLING, 10);
	sleep_s(1.2);
	cr_assert_eq(symlink(logs, link), 0, "%s: %s", link, strerror(errno));
	cr_assert_eq(wait_exit(rec, 60), 0);
	free(err);
	kill_wait(pod);
	unlink(link);
	rmdir(logs);
	for (int i = 0; i < 100 && rmdir(cg) && errno == EBUSY; i++)
		sleep_s(0.05);
	t = stub_get(24045,
		     "/stub/totals?type=" CPU_TYPE "&selector=%7Bservice_name=%22shop/web%22,namespace=%22shop%22,"
		     "pod=%22web-7d9f8b6c5-x2x9z%22%7D");
	cr_assert_gt(json_num(t, "total") / PERIOD_NS, 100, "the pod's samples under its service: %s", t);
	cr_assert(strstr(t, "\"pod_uid\":\"3f2e1a0b-1c2d-4e5f-8a9b-0c1d2e3f4a5b\""), "%s", t);
	cr_assert(strstr(t, "\"container_id\":\"" POD_CID "\""), "%s", t);
	cr_assert(strstr(t, "\"container\":\"app\""), "the container's name: %s", t);
	free(t);
}

/* Pyroscope stopped and started again while recording: what it had plus
 * what the new one got is exactly the local total. */
Test(push, pyroscope_stopped_and_restarted_mid_run, .timeout = 240, .fini = stop_started)
{
	const char *dir = temp_dir();
	char *py = temp_path(dir, "py"), *spool = temp_path(dir, "spool"), *err = temp_path(dir, "err.txt");
	long long before, after;
	struct run_result r;
	pid_t rec;

	backend_start("pyroscope", py, 24046, NULL);
	rec = spawn_capture((const char *const[]){ PYEBPF, "record", "--continuous", spool, "--interval", "1s",
						   "--push", "http://127.0.0.1:24046", "--", PY, WORK, "split", "9",
						   NULL },
			    err);
	wait_for_text(err, "pyebpf: pushed ", 30);
	sleep_s(2);
	/* Refuse from now on, so what it holds stops changing; count it; stop it. */
	stub_post(24046, "/stub/fail?status=503&count=100000");
	before = pyroscope_samples(24046);
	backend_stop("pyroscope", py);
	sleep_s(2);
	backend_start("pyroscope", py, 24046, NULL);
	cr_assert_eq(wait_exit(rec, 60), 0);
	run((const char *const[]){ PYEBPF, "push", spool, "--push", "http://127.0.0.1:24046", NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	after = pyroscope_samples(24046);
	cr_assert_gt(before, 0);
	cr_assert_gt(after, 0);
	cr_assert_eq(before + after, local_samples(dir), "%lld before the restart + %lld after", before, after);
}

/* One pusher per directory and backend; a web page is not a backend's 2xx. */
Test(push, a_second_pusher_and_a_web_page_are_refused, .timeout = 120, .fini = stop_started)
{
	const char *dir = temp_dir();
	char *spool = spool_of(dir, "2");
	struct run_result r;
	pid_t first;

	/* The first waits on a port where nothing answers. */
	first = spawn((const char *const[]){ PYEBPF, "push", spool, "--push", "http://127.0.0.1:24047", "--give-up",
					     "20s", NULL });
	sleep_s(1);
	run((const char *const[]){ PYEBPF, "push", spool, "--push", "http://127.0.0.1:24047", NULL }, 30, &r);
	cr_assert_eq(r.status, 1, "%s", r.err);
	cr_assert(strstr(r.err, "another pyebpf is pushing this directory to http://127.0.0.1:24047"), "%s", r.err);
	run_result_free(&r);
	kill_wait(first);
	/* A server that answers 200 with a web page (a UI, a captive portal): not marked sent. */
	pid_t web = spawn((const char *const[]){
		PY, "-c",
		"import http.server as h\n"
		"class H(h.BaseHTTPRequestHandler):\n"
		"    def do_POST(self):\n"
		"        self.rfile.read(int(self.headers['Content-Length']))\n"
		"        self.send_response(200); self.send_header('Content-Type', 'text/html')\n"
		"        self.end_headers(); self.wfile.write(b'<html>Grafana</html>')\n"
		"h.HTTPServer(('127.0.0.1', 24048), H).serve_forever()\n",
		NULL });
	wait_for_port(24048, 30);
	run((const char *const[]){ PYEBPF, "push", spool, "--push", "http://127.0.0.1:24048", "--give-up", "2s", NULL },
	    30, &r);
	kill_wait(web);
	cr_assert_eq(r.status, 1, "%s", r.err);
	cr_assert(strstr(r.err, "HTTP 200 as text/html, not Pyroscope's answer: is the URL the backend's?"), "%s",
		  r.err);
	cr_assert(strstr(r.err, "not sent (kept"), "%s", r.err);
	run_result_free(&r);
}

/* A leaf function's total in the stub's "functions" map: "NAME":N. */
/* The total of a folded file. */
static uint64_t folded_total(const char *path)
{
	struct folded f;
	uint64_t t;

	folded_load(path, &f);
	t = f.total;
	folded_free(&f);
	return t;
}

/*
 * --mode memory pushed: Pyroscope files it as Go's heap profiles are
 * (memory:alloc_space:bytes:space:bytes and the others), the collector
 * gets inuse_space and alloc_space in bytes; every byte of growth the
 * interval files hold arrives, and what is held is leak()'s.
 */
Test(push, memory_lands_as_heap_profiles_in_pyroscope_and_the_collector, .timeout = 240, .fini = stop_started)
{
	const char *dir = temp_dir();
	char *oc = temp_path(dir, "oc"), *py = temp_path(dir, "py"), *spool = temp_path(dir, "spool");
	char *json = temp_path(dir, "oc/profiles.json"), *err = temp_path(dir, "err");
	char *local = temp_path(dir, "alloc.folded"), *points = temp_path(dir, "points.folded");
	char *remote = temp_path(dir, "remote.folded"), script[PATH_MAX], cmd[2048];
	const char *sel = "&selector=%7Bservice_name=%22memtest%22%7D";
	struct run_result r;

	cr_assert(realpath("../tests/fixtures/memwork.py", script));
	backend_start("pyroscope", py, 24061, NULL);
	backend_start("otelcol", oc, 24062, NULL);
	pid_t rec = spawn_capture((const char *const[]){ PYEBPF,
							 "record",
							 "--mode",
							 "memory",
							 "--continuous",
							 spool,
							 "--interval",
							 "1s",
							 "--service-name",
							 "memtest",
							 "--push",
							 "http://127.0.0.1:24061",
							 "--otlp",
							 "http://127.0.0.1:24062",
							 "--",
							 PY,
							 script,
							 "leak",
							 "20",
							 "120",
							 NULL },
				  err);
	wait_for_text(err, "rss-end", 120);
	sleep_s(1.5); /* an interval with what is held at its end */
	kill(rec, SIGINT);
	cr_assert_eq(wait_exit(rec, 60), 0);
	run((const char *const[]){ PYEBPF, "report", spool, "--sample-type", "alloc_space", "-o", local, NULL }, 60,
	    &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "report", spool, "--sample-type", "alloc_objects", "-o", points, NULL }, 60,
	    &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);

	char path[512], *t;
	uint64_t grown = folded_total(local);

	snprintf(path, sizeof(path), "/stub/totals?type=memory:alloc_space:bytes:space:bytes%s", sel);
	t = stub_get(24061, path);
	cr_assert_eq((uint64_t)json_num(t, "total"), grown, "alloc_space: %s; %llu bytes here", t,
		     (unsigned long long)grown);
	cr_assert_gt(stub_func_total(t, "churn"), 0, "%s", t);
	free(t);
	snprintf(path, sizeof(path), "/stub/totals?type=memory:inuse_space:bytes:space:bytes%s", sel);
	t = stub_get(24061, path);
	long long held = json_num(t, "total"), leak = stub_func_total(t, "leak");
	cr_log_info("pyroscope: %llu bytes grew, %lld held (%lld under leak)\n", (unsigned long long)grown, held, leak);
	cr_assert_geq(leak, held * 85 / 100, "inuse_space: %s", t);
	free(t);

	sleep_s(0.5); /* the file exporter flushes every 100 ms */
	snprintf(cmd, sizeof(cmd), "python3 ../tests/backends/otlp_folded.py %s alloc_space > %s", json, remote);
	cr_assert_eq(system(cmd), 0);
	/* The collector's values over the period (the bytes a point stands for): points. */
	cr_assert_eq(folded_total(remote), folded_total(points), "alloc_space points in the collector");
	free(oc);
	free(py);
	free(spool);
	free(json);
	free(err);
	free(local);
	free(points);
	free(remote);
}
