/*
 * Which request a sample belongs to (docs/requests.md), read from outside
 * the process: the current OpenTelemetry span of a real Flask service traced
 * by the real SDK (the venvs of tests/backends/otel-python.sh), and a
 * context variable named by --context-label, on every interpreter with
 * contextvars (3.7+).
 */
#include "integ.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../pythons.h"

#define CTXVAR "../tests/fixtures/ctxvar.py"
#define SHOP "../tests/fixtures/otel/shop.py"
#define CLIENT "../tests/fixtures/otel/client.py"
#define HOSTILE "../tests/fixtures/otel/hostile_spans.py"
#define ASGI_SHOP "../tests/fixtures/otel/asgi_shop.py"
#define ASGI_CLIENT "../tests/fixtures/otel/asgi_client.py"

static char script[PATH_MAX];
static struct python pys[32];
static int npys;

static void setup(void)
{
	npys = setup_pythons(CTXVAR, script, pys, 32);
}

TestSuite(requests, .init = setup, .timeout = 900);

/* Samples whose stack holds a and not b. */
static uint64_t count_without(const struct folded *f, const char *a, const char *b)
{
	return count_all(f, a, NULL) - count_all(f, a, b);
}

/* The "[KEY=VALUE]" frames' values of a folded file, each checked by ok(); returns how many were not. */
static uint64_t bad_values(const struct folded *f, const char *key, bool (*ok)(const char *v, size_t n, void *ctx),
			   void *ctx, char *first_bad, size_t size)
{
	char open[80];
	uint64_t bad = 0;

	snprintf(open, sizeof(open), ";[%s=", key);
	for (size_t i = 0; i < f->n; i++) {
		const char *at = strstr(f->lines[i].stack, open), *end;

		if (!at)
			continue;
		at += strlen(open);
		end = strstr(at, "];");
		if (!end)
			end = at + strlen(at);
		if (!ok(at, (size_t)(end - at), ctx)) {
			if (!bad)
				snprintf(first_bad, size, "%.*s", (int)(end - at), at);
			bad += f->lines[i].count;
		}
	}
	return bad;
}

static bool is_request_id(const char *v, size_t n, void *ctx)
{
	const char *kind = ctx;

	if (!strcmp(kind, "int")) /* 1000000 + N */
		return n == 7 && v[0] == '1' && strspn(v, "0123456789") == 7;
	if (!strcmp(kind, "huge")) { /* "req-N" ESC "[2J" and 1 MiB of x: escaped, cut with "…" */
		static const char cut[] = "\xe2\x80\xa6";
		size_t xs = n > 9 + 7 + 3 ? strspn(v + 16, "x") : 0;

		return xs > 8 && 16 + xs + 3 == n && !strncmp(v, "req-", 4) && strspn(v + 4, "0123456789") == 5 &&
		       !strncmp(v + 9, "\\x1b[2J", 7) && !memcmp(v + 16 + xs, cut, 3);
	}
	return n == 9 && !strncmp(v, "req-", 4) && strspn(v + 4, "0123456789") == 5;
}

/* Each request's id on its samples, in one interpreter's recording. */
static void context_label_check(const struct python *py, struct folded *f, const char *mode, const char *kind)
{
	uint64_t handle = count_all(f, "handle (", NULL), labelled = count_all(f, "[request_id=", "handle (");
	char bad_one[64] = "";
	uint64_t bad = bad_values(f, "request_id", is_request_id, (void *)kind, bad_one, sizeof(bad_one));

	cr_log_info("%s %s %s: %llu of %llu samples of handle() carry their request's id\n", py->path, mode, kind,
		    (unsigned long long)labelled, (unsigned long long)handle);
	cr_assert_gt(handle, 200, "%s: %llu samples in handle()", py->path, (unsigned long long)handle);
	cr_assert_geq(labelled * 100, handle * 90, "%s %s %s: %llu of %llu samples of handle() labelled", py->path,
		      mode, kind, (unsigned long long)labelled, (unsigned long long)handle);
	cr_assert_eq(bad, 0, "%s %s %s: %llu samples labelled '%s'", py->path, mode, kind, (unsigned long long)bad,
		     bad_one);
}

/*
 * record --context-label request_id on ctxvar.py for the interpreters of
 * list[0..n) that `want` keeps, several side by side in one recording:
 * each request's id on its samples. The number it checked.
 */
static int context_label_cases(bool (*want)(const struct python *), const char *mode, const char *kind, int most)
{
	/* From 1 s in: before BPF is told where the variable is (the reader
	 * finds it in the first samples that hold it, and may lag a loaded
	 * machine by most of a second), samples carry no id. */
	const char *opts[] = { "--context-label", "request_id", "--by", "request_id", "--since", "1", NULL };
	const char *args[] = { mode, "4", kind, NULL };
	struct python list[32];
	struct folded f[32];
	int n = 0;

	for (int i = 0; i < npys && n < most; i++)
		if (want(&pys[i]))
			list[n++] = pys[i];
	if (!n)
		return 0;
	record_pythons(opts, list, n, AT_ONCE_CPU, script, args, 120, f, NULL);
	for (int i = 0; i < n; i++) {
		context_label_check(&list[i], &f[i], mode, kind);
		folded_free(&f[i]);
	}
	return n;
}

static bool has_contextvars(const struct python *py)
{
	return py->major == 3 && py->minor >= 7;
}

static bool asyncio_reads_tasks(const struct python *py)
{
	return py->major == 3 && py->minor >= 11;
}

/* Ints on odd minors, bytes on even: both kinds on the 3.11+ list. */
static bool takes_ints(const struct python *py)
{
	return asyncio_reads_tasks(py) && py->minor % 2;
}

static bool takes_bytes(const struct python *py)
{
	return asyncio_reads_tasks(py) && !(py->minor % 2);
}

Test(requests, a_context_variable_labels_each_requests_samples)
{
	for (int i = 0; i < npys; i++)
		if (!has_contextvars(&pys[i]))
			cr_log_info("%s: skipped: no contextvars before 3.7\n", pys[i].path);
	cr_assert_gt(context_label_cases(has_contextvars, "sync", "str", 32), 0, "no interpreter with contextvars");
}

/* Tasks interleaving on one event loop: each task's own id; ints and bytes too. */
Test(requests, each_asyncio_tasks_context_variable_and_its_kinds)
{
	context_label_cases(asyncio_reads_tasks, "async", "str", 32);
	context_label_cases(takes_ints, "sync", "int", 32);
	context_label_cases(takes_bytes, "sync", "bytes", 32);
	/* Once: a 1 MiB value, a control character in it. */
	context_label_cases(asyncio_reads_tasks, "sync", "huge", 1);
}

Test(requests, a_bad_context_label_name_is_one_line)
{
	struct run_result r;
	const char *dir = temp_dir();
	char *out = temp_path(dir, "out.folded");

	run((const char *const[]){ PYEBPF, "record", "--context-label", "request id", "-o", out, "--", BUSY, "0.1",
				   NULL },
	    30, &r);
	cr_assert_eq(r.status, 2, "status %d: %s", r.status, r.err);
	cr_assert_str_eq(r.err, "pyebpf: --context-label wants a context variable's name (letters, digits and _, at "
				"most 64), not 'request id'\n");
	cr_assert_eq(access(out, F_OK), -1, "an output was written");
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "record", "--context-label", "endpoint", "-o", out, "--", BUSY, "0.1",
				   NULL },
	    30, &r);
	cr_assert_eq(r.status, 2);
	cr_assert_str_eq(r.err, "pyebpf: --context-label endpoint: pyebpf writes a label of that name itself\n");
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "report", "--label", "endpoint", "x.pb.gz", NULL }, 30, &r);
	cr_assert_eq(r.status, 2);
	cr_assert_str_eq(r.err, "pyebpf: --label wants KEY=VALUE (endpoint=/checkout), not 'endpoint'\n");
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "report", "--trace-id", "4bf92f3577b34da6a3ce929d0e0e473", "x.pb.gz", NULL },
	    30, &r);
	cr_assert_eq(r.status, 2);
	cr_assert_str_eq(r.err,
			 "pyebpf: --trace-id wants a trace's 32 hex digits, not '4bf92f3577b34da6a3ce929d0e0e473'\n");
	run_result_free(&r);
}

/* ---- OpenTelemetry ------------------------------------------------------ */

struct venv {
	char tag[32], python[PATH_MAX];
};

/* The venvs of kind (flask, asgi) made by make otel-python: "TAG PYTHON" lines. */
static int otel_venvs_of(const char *kind, struct venv *v, int max)
{
	struct run_result r;
	int n = 0;

	run((const char *const[]){ "bash", "../tests/backends/otel-python.sh", "list", kind, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "otel-python.sh list: %s", r.err);
	for (char *line = strtok(r.out, "\n"); line && n < max; line = strtok(NULL, "\n"))
		if (sscanf(line, "%31s %4095s", v[n].tag, v[n].python) == 2)
			n++;
	run_result_free(&r);
	return n;
}

static int otel_venvs(struct venv *v, int max)
{
	return otel_venvs_of("flask", v, max);
}

struct span_file {
	char *text;
};

/* Is v one of the ids (trace_id or span_id, by key) the service exported? */
static bool exported(const char *v, size_t n, void *ctx)
{
	const char *spans = ctx;
	char want[80];

	if (n != 32 && n != 16)
		return false;
	snprintf(want, sizeof(want), "\"%s\": \"%.*s\"", n == 32 ? "trace_id" : "span_id", (int)n, v);
	return strstr(spans, want) != NULL;
}

static void report_by(const char *rec, const char *key, const char *out, struct folded *f)
{
	struct run_result r;

	run((const char *const[]){ PYEBPF, "report", rec, "--by", key, "-o", out, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "report --by %s: %s", key, r.err);
	run_result_free(&r);
	folded_load(out, f);
}

/* /checkout's share of the two routes' samples in a --by endpoint table (text, changed). */
static double table_share(char *text, const char *checkout, const char *browse)
{
	double co = 0, br = 0;
	size_t nco = strlen(checkout), nbr = strlen(browse);

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long long samples;

		if (!strncmp(line, checkout, nco) && line[nco] == ' ')
			cr_assert_eq(sscanf(line + nco, "%llu %lf%%", &samples, &co), 2, "%s", line);
		else if (!strncmp(line, browse, nbr) && line[nbr] == ' ')
			cr_assert_eq(sscanf(line + nbr, "%llu %lf%%", &samples, &br), 2, "%s", line);
	}
	return co + br > 0 ? 100 * co / (co + br) : 0;
}

/* /checkout's share of the two routes' samples in report --by endpoint's table. */
static double checkout_share(const char *rec, const char *tag, const char *checkout, const char *browse)
{
	struct run_result r;
	double share;

	run((const char *const[]){ PYEBPF, "report", rec, "--by", "endpoint", NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s: report --by endpoint: %s", tag, r.err);
	share = table_share(r.out, checkout, browse);
	run_result_free(&r);
	return share;
}

static void flask_case(const struct venv *v, int port)
{
	const char *dir = temp_dir();
	char *spans = temp_path(dir, "spans.jsonl"), *ready = temp_path(dir, "ready"), *err = temp_path(dir, "err");
	char *rec = temp_path(dir, "shop.pb.gz"), *by = temp_path(dir, "by.folded");
	char cmd[3 * PATH_MAX], portarg[16], pidarg[16], bad_one[64] = "";
	struct run_result r;
	struct folded f;

	snprintf(portarg, sizeof(portarg), "%d", port);
	snprintf(cmd, sizeof(cmd), "exec %s %s %d %s > %s", v->python, SHOP, port, spans, ready);
	pid_t shop = spawn((const char *const[]){ "sh", "-c", cmd, NULL });
	wait_for_text(ready, "ready", 120);
	snprintf(pidarg, sizeof(pidarg), "%d", shop);
	pid_t recorder = spawn_capture((const char *const[]){ PYEBPF, "record", "-F", "299", "-p", pidarg, "-o", rec,
							      NULL },
				       err);
	wait_for_text(err, SAMPLING, 120);
	run((const char *const[]){ v->python, CLIENT, portarg, "4", NULL }, 120, &r);
	cr_assert_eq(r.status, 0, "%s: the client: %s%s", v->tag, r.out, r.err);
	cr_log_info("%s: %s", v->tag, r.out);
	double n_co = 0, n_br = 0, ms_co = 0, ms_br = 0;

	cr_assert_eq(sscanf(r.out, "checkout %lf browse %lf failed %*d checkout_cpu_ms %lf browse_cpu_ms %lf", &n_co,
			    &n_br, &ms_co, &ms_br),
		     4, "%s: the client said %s", v->tag, r.out);
	run_result_free(&r);
	kill(recorder, SIGINT);
	cr_assert_eq(wait_exit(recorder, 120), 0, "%s: record: %s", v->tag, last_line(file_text(err)));
	kill(shop, SIGTERM); /* the exporter flushes the spans it holds */
	cr_assert_eq(wait_exit(shop, 60), 0, "%s: the shop did not stop cleanly", v->tag);

	/* Each route's work under its request's endpoint: the local root span's name. */
	report_by(rec, "endpoint", by, &f);
	uint64_t browse = count_all(&f, "browse_work (", NULL);
	uint64_t browse_ok = count_all(&f, "[endpoint=GET /browse/<item>]", "browse_work (");
	uint64_t checkout = count_without(&f, "checkout_work (", "price_work (");
	uint64_t checkout_ok = count_all(&f, "[endpoint=GET /checkout]", "checkout_work (") -
			       count_all(&f, "[endpoint=GET /checkout]", "price_work (");
	uint64_t price = count_all(&f, "price_work (", NULL);
	uint64_t price_root = count_all(&f, "[endpoint=GET /checkout]", "price_work (");
	uint64_t price_own = count_all(&f, "[endpoint=price]", "price_work (");
	uint64_t cross = count_all(&f, "[endpoint=GET /checkout]", "browse_work (") +
			 count_all(&f, "[endpoint=GET /browse/<item>]", "checkout_work (");

	cr_log_info("%s: browse_work %llu of %llu, checkout_work %llu of %llu under their endpoint; price_work %llu "
		    "under /checkout, %llu under its own span of %llu; %llu crossed\n",
		    v->tag, (unsigned long long)browse_ok, (unsigned long long)browse, (unsigned long long)checkout_ok,
		    (unsigned long long)checkout, (unsigned long long)price_root, (unsigned long long)price_own,
		    (unsigned long long)price, (unsigned long long)cross);
	cr_assert_gt(browse, 50, "%s: %llu samples of browse_work", v->tag, (unsigned long long)browse);
	cr_assert_gt(checkout, 50, "%s: %llu samples of checkout_work", v->tag, (unsigned long long)checkout);
	cr_assert_geq(browse_ok * 100, browse * 90, "%s: browse_work under its endpoint %llu of %llu", v->tag,
		      (unsigned long long)browse_ok, (unsigned long long)browse);
	cr_assert_geq(checkout_ok * 100, checkout * 90, "%s: checkout_work under its endpoint %llu of %llu", v->tag,
		      (unsigned long long)checkout_ok, (unsigned long long)checkout);
	/* An inner span's samples name the request's root where a sample showed
	 * it current in the same trace, else the inner span (docs/requests.md). */
	cr_assert_geq((price_root + price_own) * 100, price * 90, "%s: price_work labelled %llu of %llu", v->tag,
		      (unsigned long long)(price_root + price_own), (unsigned long long)price);
	cr_assert_leq(cross * 100, (browse + checkout + price) * 2, "%s: %llu samples under the other route's endpoint",
		      v->tag, (unsigned long long)cross);
	folded_free(&f);

	/* report --by endpoint's table: the two routes split the CPU as their
	 * work did, as the shop measured it (thread time of each view's work). */
	double want = 100 * n_co * ms_co / (n_co * ms_co + n_br * ms_br),
	       got = checkout_share(rec, v->tag, "GET /checkout", "GET /browse/<item>");

	cr_log_info("%s: /checkout %.1f%% of the two routes' samples, %.1f%% of their work's CPU\n", v->tag, got, want);
	cr_assert_leq(fabs(got - want), 3.0,
		      "%s: /checkout %.1f%% of the routes' samples, its work %.1f%% of their CPU", v->tag, got, want);

	/* Every id sampled is a span the service exported, with its trace. */
	char *text = file_text(spans);
	cr_assert(strstr(text, "\"name\": \"GET /checkout\""), "%s: no server span exported: %.300s", v->tag, text);
	for (int k = 0; k < 2; k++) {
		const char *key = k ? "trace_id" : "span_id";

		report_by(rec, key, by, &f);
		uint64_t labelled = count_all(&f, k ? "[trace_id=" : "[span_id=", NULL);
		uint64_t bad = bad_values(&f, key, exported, text, bad_one, sizeof(bad_one));

		cr_log_info("%s: %llu samples with a %s\n", v->tag, (unsigned long long)labelled, key);
		cr_assert_geq(labelled * 100, (browse + checkout + price) * 90, "%s: %llu samples with a %s", v->tag,
			      (unsigned long long)labelled, key);
		cr_assert_eq(bad, 0, "%s: %llu samples with a %s the service never exported (%s)", v->tag,
			     (unsigned long long)bad, key, bad_one);
		folded_free(&f);
	}
	free(text);
}

Test(requests, a_flask_shops_samples_carry_their_request)
{
	struct venv v[8];
	int n = otel_venvs(v, 8);

	cr_assert_gt(n, 0, "no OpenTelemetry venv: make otel-python");
	for (int i = 0; i < n; i++)
		flask_case(&v[i], 18460 + i);
}

/* The local root spans of one name the service exported: their span ids, comma-separated. */
static char *root_spans(const char *spans, const char *name, int *n)
{
	char want[128], *out = calloc(1, strlen(spans) + 1);
	size_t at = 0;

	snprintf(want, sizeof(want), "\"name\": \"%s\"", name);
	cr_assert(out);
	*n = 0;
	for (const char *line = spans; line && *line;) {
		const char *end = strchr(line, '\n'), *id;
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char *one = strndup(line, len);

		cr_assert(one);

		if (strstr(one, want) && strstr(one, "\"parent_span_id\": null") &&
		    (id = strstr(one, "\"span_id\": \"")) && strlen(id) > 12 + 16) {
			at += (size_t)sprintf(out + at, "%s%.16s", *n ? "," : "", id + 12);
			(*n)++;
		}
		free(one);
		line = end ? end + 1 : NULL;
	}
	return out;
}

#define SHOP_CPU "process_cpu:cpu:nanoseconds:cpu:nanoseconds"

/* What the Pyroscope stub holds of the shop's CPU under these spans' ids. */
static char *span_totals(int port, const char *spans)
{
	size_t size = strlen(spans) + 256;
	char *url = malloc(size), *body = NULL;

	cr_assert(url);
	snprintf(url, size,
		 "http://127.0.0.1:%d/stub/totals?type=" SHOP_CPU
		 "&selector=%%7Bservice_name=%%22shop%%22%%7D&spans=%s",
		 port, spans);
	cr_assert_eq(http(url, NULL, &body, NULL), 200, "%s: %s", url, body ? body : "");
	free(url);
	return body;
}

/*
 * The shop recorded with live pushes: Pyroscope's span-profile query finds
 * each request's samples by its local root span (Grafana's "profiles for
 * this span"); the collector gets each sample's link to its trace and span.
 */
Test(requests, a_flask_shops_requests_are_span_profiles_and_trace_links, .timeout = 300, .fini = stop_started)
{
	struct venv vs[8], *v;
	int n = otel_venvs(vs, 8), nco = 0, nbr = 0;
	const char *dir = temp_dir();
	char *spans_path = temp_path(dir, "spans.jsonl"), *ready = temp_path(dir, "ready"),
	     *err = temp_path(dir, "err");
	char *spool = temp_path(dir, "spool"), *py = temp_path(dir, "py"), *oc = temp_path(dir, "oc");
	char *json = temp_path(dir, "oc/profiles.json"), *req = temp_path(dir, "span-request.json");
	char cmd[3 * PATH_MAX], pidarg[16];
	struct run_result r;

	cr_assert_gt(n, 0, "no OpenTelemetry venv: make otel-python");
	v = &vs[n - 1]; /* the newest CPython */
	backend_start("pyroscope", py, 24071, NULL);
	backend_start("otelcol", oc, 24072, NULL);
	snprintf(cmd, sizeof(cmd), "exec %s %s 18479 %s > %s", v->python, SHOP, spans_path, ready);
	pid_t shop = spawn((const char *const[]){ "sh", "-c", cmd, NULL });
	wait_for_text(ready, "ready", 120);
	snprintf(pidarg, sizeof(pidarg), "%d", shop);
	pid_t recorder = spawn_capture((const char *const[]){ PYEBPF, "record", "-F", "299", "-p", pidarg,
							      "--continuous", spool, "--interval", "2s",
							      "--service-name", "shop", "--push",
							      "http://127.0.0.1:24071", "--otlp",
							      "http://127.0.0.1:24072", NULL },
				       err);
	wait_for_text(err, SAMPLING, 120);
	run((const char *const[]){ v->python, CLIENT, "18479", "4", NULL }, 120, &r);
	cr_assert_eq(r.status, 0, "%s: the client: %s%s", v->tag, r.out, r.err);
	run_result_free(&r);
	kill(recorder, SIGINT); /* the last interval is pushed before it exits */
	cr_assert_eq(wait_exit(recorder, 120), 0, "%s: record: %s", v->tag, last_line(file_text(err)));
	kill(shop, SIGTERM);
	cr_assert_eq(wait_exit(shop, 60), 0, "%s: the shop did not stop cleanly", v->tag);

	char *spans = file_text(spans_path), *co = root_spans(spans, "GET /checkout", &nco),
	     *br = root_spans(spans, "GET /browse/<item>", &nbr);

	cr_assert_gt(nco, 20, "%s: %d /checkout requests exported", v->tag, nco);
	cr_assert_gt(nbr, 20, "%s: %d /browse requests exported", v->tag, nbr);

	/* Each route's root spans select that route's work, inner span included. */
	char *t = span_totals(24071, co);
	long long co_work = stub_func_total(t, "checkout_work") + stub_func_total(t, "price_work"),
		  co_cross = stub_func_total(t, "browse_work");

	cr_assert_gt(stub_func_total(t, "price_work"), 0, "%s: the inner span's samples under its root: %s", v->tag, t);
	cr_assert_null(strstr(t, "trace_id"), "%s: a series per trace: %s", v->tag, t);
	cr_assert(strstr(t, "\"span_name\":\"GET /checkout\""), "%s: span_name is the root's: %s", v->tag, t);
	free(t);
	t = span_totals(24071, br);
	long long br_work = stub_func_total(t, "browse_work"),
		  br_cross = stub_func_total(t, "checkout_work") + stub_func_total(t, "price_work");
	free(t);
	cr_log_info("%s: pyroscope span profiles: /checkout's %d roots %lld ms of their work, %lld of browse's; "
		    "/browse's %d roots %lld ms, %lld of checkout's\n",
		    v->tag, nco, co_work / 1000000, co_cross / 1000000, nbr, br_work / 1000000, br_cross / 1000000);
	cr_assert_gt(co_work, 50 * 3344481LL, "%s: under 50 samples of /checkout's work", v->tag);
	cr_assert_gt(br_work, 15 * 3344481LL, "%s: under 15 samples of /browse's work", v->tag);
	cr_assert_leq(co_cross * 100, (co_work + co_cross) * 2, "%s: /checkout's spans hold browse_work", v->tag);
	cr_assert_leq(br_cross * 100, (br_work + br_cross) * 2, "%s: /browse's spans hold checkout_work", v->tag);

	/* Grafana's own call: SelectMergeSpanProfile's flame graph. */
	FILE *f = fopen(req, "w");
	char *body = NULL, *ids = strdup(co), data[PATH_MAX + 1];

	cr_assert(f && ids);
	fprintf(f,
		"{\"profileTypeID\":\"" SHOP_CPU "\",\"labelSelector\":\"{service_name=\\\"shop\\\"}\","
		"\"start\":\"0\",\"end\":\"%lld\",\"spanSelector\":[",
		(long long)time(NULL) * 1000 + 60000);
	for (char *id = strtok(ids, ","), *sep = ""; id; id = strtok(NULL, ","), sep = ",")
		fprintf(f, "%s\"%s\"", sep, id);
	fprintf(f, "]}");
	fclose(f);
	free(ids);
	snprintf(data, sizeof(data), "@%s", req);

	cr_assert_eq(http("http://127.0.0.1:24071/querier.v1.QuerierService/SelectMergeSpanProfile",
			  (const char *const[]){ "-X", "POST", "-H", "Content-Type: application/json", "--data-binary",
						 data, NULL },
			  &body, NULL),
		     200, "%s", body);
	cr_assert(strstr(body, "\"checkout_work\"") && strstr(body, "\"price_work\""), "%s: %.400s", v->tag, body);
	free(body);

	/* The collector: every linked sample's trace and span were exported, together. */
	sleep_s(0.5); /* the file exporter flushes every 100 ms */
	snprintf(cmd, sizeof(cmd), "python3 ../tests/backends/otlp_links.py %s cpu", json);
	run((const char *const[]){ "sh", "-c", cmd, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	long long linked = 0, routed = 0, unknown = 0, unlinked = 0;
	char bad[128] = "";

	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
		char trace[40], span[20], endpoint[64] = "", pair[128];
		long long count;

		if (sscanf(line, "unlinked %lld", &count) == 1) {
			unlinked = count;
			continue;
		}
		cr_assert_eq(sscanf(line, "%39s %19s %lld %63[^\n]", trace, span, &count, endpoint), 4, "%s", line);
		snprintf(pair, sizeof(pair), "\"trace_id\": \"%s\", \"span_id\": \"%s\"", trace, span);
		linked += count;
		routed += !strcmp(endpoint, "GET /checkout") || !strcmp(endpoint, "GET /browse/<item>") ? count : 0;
		if (!strstr(spans, pair)) {
			unknown += count;
			snprintf(bad, sizeof(bad), "%s %s", trace, span);
		}
	}
	run_result_free(&r);
	cr_log_info("%s: collector: %lld samples linked (%lld under a route), %lld not\n", v->tag, linked, routed,
		    unlinked);
	cr_assert_gt(linked, 100, "%s: %lld linked samples in the collector", v->tag, linked);
	cr_assert_eq(unknown, 0, "%s: %lld samples linked to a span never exported (%s)", v->tag, unknown, bad);
	cr_assert_geq(routed * 100, linked * 90, "%s: %lld of %lld linked samples with their route", v->tag, routed,
		      linked);
	free(co);
	free(br);
	free(spans);
}

/* Memory mode: which endpoint grew the memory. The shop keeps 64 KiB per
 * /keep request for good; what is held at the end is under that endpoint. */
Test(requests, memory_held_is_under_the_endpoint_that_kept_it, .timeout = 240)
{
	struct venv vs[8], *v;
	int n = otel_venvs(vs, 8);
	const char *dir = temp_dir();
	char *spans = temp_path(dir, "spans.jsonl"), *ready = temp_path(dir, "ready"), *err = temp_path(dir, "err");
	char *rec = temp_path(dir, "mem.pb.gz"), *by = temp_path(dir, "by.folded");
	char cmd[3 * PATH_MAX], pidarg[16];
	struct run_result r;
	struct folded f;

	cr_assert_gt(n, 0, "no OpenTelemetry venv: make otel-python");
	v = &vs[n - 1];
	snprintf(cmd, sizeof(cmd), "exec %s %s 18478 %s > %s", v->python, SHOP, spans, ready);
	pid_t shop = spawn((const char *const[]){ "sh", "-c", cmd, NULL });
	wait_for_text(ready, "ready", 120);
	snprintf(pidarg, sizeof(pidarg), "%d", shop);
	pid_t recorder = spawn_capture((const char *const[]){ PYEBPF, "record", "--mode", "memory", "-p", pidarg, "-o",
							      rec, NULL },
				       err);
	wait_for_text(err, SAMPLING, 120);
	run((const char *const[]){ v->python, CLIENT, "18478", "4", "keep", NULL }, 120, &r);
	cr_assert_eq(r.status, 0, "%s: the client: %s%s", v->tag, r.out, r.err);
	cr_log_info("%s: %s", v->tag, r.out);
	run_result_free(&r);
	kill(recorder, SIGINT);
	cr_assert_eq(wait_exit(recorder, 120), 0, "%s: record: %s", v->tag, last_line(file_text(err)));
	kill(shop, SIGTERM);
	cr_assert_eq(wait_exit(shop, 60), 0, "%s: the shop did not stop cleanly", v->tag);

	run((const char *const[]){ PYEBPF, "report", rec, "--by", "endpoint", "--sample-type", "inuse_space", NULL },
	    60, &r);
	cr_assert_eq(r.status, 0, "%s: report: %s", v->tag, r.err);
	double share = 0;

	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n"))
		if (!strncmp(line, "GET /keep/<int:kib> ", 20))
			cr_assert_eq(sscanf(line + 20, "%*s %*s %lf%%", &share), 1, "%s", line);
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "report", rec, "--by", "endpoint", "--sample-type", "inuse_space", "-o", by,
				   NULL },
	    60, &r);
	cr_assert_eq(r.status, 0, "%s: report -o: %s", v->tag, r.err);
	run_result_free(&r);
	folded_load(by, &f);
	uint64_t kept = count_all(&f, "keep_work (", NULL),
		 kept_ok = count_all(&f, "[endpoint=GET /keep/<int:kib>]", "keep_work (");

	cr_log_info("%s: memory held: %.1f%% under GET /keep/<int:kib>; keep_work's %llu of %llu\n", v->tag, share,
		    (unsigned long long)kept_ok, (unsigned long long)kept);
	cr_assert_gt(kept, 0, "%s: no held memory under keep_work", v->tag);
	cr_assert_geq(kept_ok * 100, kept * 90, "%s: keep_work's held memory under its endpoint: %llu of %llu", v->tag,
		      (unsigned long long)kept_ok, (unsigned long long)kept);
	cr_assert_geq(share, 60.0, "%s: %.1f%% of the memory held under GET /keep/<int:kib>", v->tag, share);
	folded_free(&f);
}

/* Is v a trace id the hostile script noted ("TRACE SPAN" lines)? */
static bool noted_trace(const char *v, size_t n, void *ctx)
{
	char want[40];

	if (n != 32)
		return false;
	snprintf(want, sizeof(want), "%.32s ", v);
	return strstr(ctx, want) != NULL;
}

/*
 * Hostile contexts (tests/fixtures/otel/hostile_spans.py): a Context of
 * 5,000 keys, an object shaped like a span in the span's place, a span
 * named with control characters. No sample gets a trace it was not in;
 * the real spans beside them keep theirs; names reach a terminal escaped.
 */
static void hostile_case(const struct venv *v)
{
	static const char *const modes[] = { "many-keys", "fake-span", "control" };

	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		const char *dir = temp_dir();
		char *ids_path = temp_path(dir, "ids"), *rec = temp_path(dir, "r.pb.gz"),
		     *by = temp_path(dir, "t.folded");
		char bad_one[64] = "";
		struct run_result r;
		struct folded f;

		run((const char *const[]){ PYEBPF, "record", "-F", "299", "-o", rec, "--", v->python, HOSTILE, modes[m],
					   "4", ids_path, NULL },
		    120, &r);
		cr_assert_eq(r.status, 0, "%s: record: %s", modes[m], r.err);
		run_result_free(&r);
		report_by(rec, "trace_id", by, &f);
		char *ids = file_text(ids_path);
		uint64_t real = count_all(&f, "real_work (", NULL),
			 real_ok = count_all(&f, "[trace_id=", "real_work ("),
			 hostile = count_all(&f, "hostile_work (", NULL),
			 hostile_labelled = count_all(&f, "[trace_id=", "hostile_work (");
		uint64_t wrong = bad_values(&f, "trace_id", noted_trace, ids, bad_one, sizeof(bad_one));

		cr_log_info("%s %s: real_work %llu of %llu labelled, hostile_work %llu of %llu, %llu wrong\n", v->tag,
			    modes[m], (unsigned long long)real_ok, (unsigned long long)real,
			    (unsigned long long)hostile_labelled, (unsigned long long)hostile,
			    (unsigned long long)wrong);
		cr_assert_gt(real, 100, "%s: %llu samples of real_work", modes[m], (unsigned long long)real);
		cr_assert_gt(hostile, 100, "%s: %llu samples of hostile_work", modes[m], (unsigned long long)hostile);
		cr_assert_eq(wrong, 0, "%s: %llu samples with a trace they were not in (%s)", modes[m],
			     (unsigned long long)wrong, bad_one);
		/* 80%: the process's first samples, before its variables are found, have none. */
		cr_assert_geq(real_ok * 100, real * 80, "%s: real_work labelled %llu of %llu", modes[m],
			      (unsigned long long)real_ok, (unsigned long long)real);
		if (!strcmp(modes[m], "fake-span"))
			cr_assert_eq(hostile_labelled, 0, "a fake span gave %llu samples a trace",
				     (unsigned long long)hostile_labelled);
		folded_free(&f);
		free(ids);
		if (!strcmp(modes[m], "control")) {
			run((const char *const[]){ PYEBPF, "report", rec, "--by", "span_name", NULL }, 60, &r);
			cr_assert_eq(r.status, 0, "%s", r.err);
			cr_assert(strstr(r.out, "GET /a\\x1b[2J\\x07b "), "the name, escaped: %s", r.out);
			cr_assert_null(strpbrk(r.out, "\x1b\x07"), "a control character reached the terminal");
			run_result_free(&r);
		}
		free(ids_path);
		free(rec);
		free(by);
	}
}

Test(requests, hostile_contexts_give_no_wrong_label, .timeout = 300)
{
	struct venv v[8];
	int n = otel_venvs(v, 8);

	cr_assert_gt(n, 0, "no OpenTelemetry venv: make otel-python");
	for (int i = 0; i < n; i++)
		hostile_case(&v[i]);
}

/* ---- An event loop: requests interleaved on one thread ------------------ */

static bool is_correlation_id(const char *v, size_t n, void *ctx)
{
	(void)ctx; /* asgi_client.py's ROUTE-THREAD-N */
	return (n > 9 && !strncmp(v, "checkout-", 9)) || (n > 7 && !strncmp(v, "browse-", 7));
}

/*
 * FastAPI on uvicorn, 4 clients at once: requests await between bursts of
 * CPU, so each burst runs beside other requests' on the one event-loop
 * thread and only the running task's context says whose it is. The split,
 * the labels and asgi-correlation-id's id as --context-label reads it.
 */
/* The known split of the asgi shop's two routes: /checkout's share of their work's CPU. */
struct asgi_run {
	struct venv v;
	const char *spans; /* the spans it exported */
	double want;
};

/* The FastAPI shop on uvicorn, started (ready) on port 18470: its pid. */
static pid_t asgi_shop(struct asgi_run *out)
{
	struct venv v[2];
	int n = otel_venvs_of("asgi", v, 2);

	cr_assert_gt(n, 0, "no asgi venv: make otel-python");
	const char *dir = temp_dir();
	char *ready = temp_path(dir, "ready");
	char cmd[3 * PATH_MAX];

	out->v = v[0];
	out->spans = temp_path(dir, "spans.jsonl");
	/* Bursts of 150000 turns (10 ms or so): a request's own overhead in
	 * the framework and the instrumentation (about 1 ms) moves the routes'
	 * split from their work's by about a point. */
	snprintf(cmd, sizeof(cmd), "exec %s %s 18470 %s 150000 > %s", v[0].python, ASGI_SHOP, out->spans, ready);
	pid_t shop = spawn((const char *const[]){ "sh", "-c", cmd, NULL });
	wait_for_text(ready, "ready", 120);
	return shop;
}

/* The known split from what the clients said: /checkout's share of the work's CPU. */
static void asgi_want(struct asgi_run *out, const char *said)
{
	double n_co = 0, n_br = 0, ms_co = 0, ms_br = 0;

	cr_log_info("%s: %s", out->v.tag, said);
	cr_assert_eq(sscanf(said, "checkout %lf browse %lf failed %*d checkout_cpu_ms %lf browse_cpu_ms %lf", &n_co,
			    &n_br, &ms_co, &ms_br),
		     4, "%s: the client said %s", out->v.tag, said);
	out->want = 100 * n_co * ms_co / (n_co * ms_co + n_br * ms_br);
}

static void asgi_stop(const struct asgi_run *a, pid_t shop)
{
	kill(shop, SIGTERM);
	cr_assert_eq(wait_exit(shop, 60), 0, "%s: the shop did not stop cleanly", a->v.tag);
}

/* The shop recorded into rec by `record ARGS... -p SHOP` while 4 clients
 * send it requests for 6 s. */
static void asgi_record(const char *const *args, const char *rec, struct asgi_run *out)
{
	pid_t shop = asgi_shop(out);
	char *err = temp_path(temp_dir(), "err"), pidarg[16];
	const char *argv[24] = { PYEBPF, "record" };
	size_t argc = 2;
	struct run_result r;

	snprintf(pidarg, sizeof(pidarg), "%d", shop);
	while (*args && argc < sizeof(argv) / sizeof(argv[0]) - 6)
		argv[argc++] = *args++;
	argv[argc++] = "-p";
	argv[argc++] = pidarg;
	argv[argc++] = "-o";
	argv[argc++] = rec;
	pid_t recorder = spawn_capture(argv, err);
	wait_for_text(err, SAMPLING, 120);
	run((const char *const[]){ out->v.python, ASGI_CLIENT, "18470", "6", "4", NULL }, 120, &r);
	cr_assert_eq(r.status, 0, "%s: the client: %s%s", out->v.tag, r.out, r.err);
	asgi_want(out, r.out);
	run_result_free(&r);
	kill(recorder, SIGINT);
	cr_assert_eq(wait_exit(recorder, 120), 0, "%s: record: %s", out->v.tag, last_line(file_text(err)));
	asgi_stop(out, shop);
}

Test(requests, interleaved_fastapi_requests_keep_their_own_span_and_id, .timeout = 300)
{
	const char *dir = temp_dir();
	char *rec = temp_path(dir, "asgi.pb.gz"), *by = temp_path(dir, "by.folded");
	char bad_one[64] = "";
	struct asgi_run run_of;
	struct venv *v = &run_of.v;
	struct run_result r;
	struct folded f;

	asgi_record((const char *const[]){ "-F", "299", "--context-label", "correlation_id", NULL }, rec, &run_of);
	double want = run_of.want;
	double got = checkout_share(rec, v->tag, "GET /checkout", "GET /browse/{item}");

	cr_log_info("%s: /checkout %.1f%% of the two routes' samples, %.1f%% of their work's CPU\n", v->tag, got, want);
	cr_assert_leq(fabs(got - want), 3.0,
		      "%s: /checkout %.1f%% of the routes' samples, its work %.1f%% of their CPU", v->tag, got, want);

	report_by(rec, "endpoint", by, &f);
	uint64_t co = count_all(&f, "checkout_work (", NULL), br = count_all(&f, "browse_work (", NULL);
	uint64_t co_ok = count_all(&f, "[endpoint=GET /checkout]", "checkout_work (");
	uint64_t br_ok = count_all(&f, "[endpoint=GET /browse/{item}]", "browse_work (");
	uint64_t cross = count_all(&f, "[endpoint=GET /checkout]", "browse_work (") +
			 count_all(&f, "[endpoint=GET /browse/{item}]", "checkout_work (");

	cr_log_info("%s: checkout_work %llu of %llu, browse_work %llu of %llu under their endpoint, %llu crossed\n",
		    v->tag, (unsigned long long)co_ok, (unsigned long long)co, (unsigned long long)br_ok,
		    (unsigned long long)br, (unsigned long long)cross);
	cr_assert_gt(co, 300, "%s: %llu samples of checkout_work", v->tag, (unsigned long long)co);
	cr_assert_gt(br, 100, "%s: %llu samples of browse_work", v->tag, (unsigned long long)br);
	cr_assert_geq(co_ok * 100, co * 90, "%s: checkout_work under /checkout %llu of %llu", v->tag,
		      (unsigned long long)co_ok, (unsigned long long)co);
	cr_assert_geq(br_ok * 100, br * 90, "%s: browse_work under /browse/{item} %llu of %llu", v->tag,
		      (unsigned long long)br_ok, (unsigned long long)br);
	cr_assert_leq(cross * 100, (co + br) * 2, "%s: %llu samples under the other route", v->tag,
		      (unsigned long long)cross);
	folded_free(&f);

	/* Every span id sampled is one the shop exported. */
	char *text = file_text(run_of.spans);

	report_by(rec, "span_id", by, &f);
	uint64_t bad = bad_values(&f, "span_id", exported, text, bad_one, sizeof(bad_one));

	cr_assert_eq(bad, 0, "%s: %llu samples with a span id never exported (%s)", v->tag, (unsigned long long)bad,
		     bad_one);
	folded_free(&f);
	free(text);

	/* asgi-correlation-id's variable: the request's own X-Request-ID. */
	report_by(rec, "correlation_id", by, &f);
	uint64_t co_id = count_all(&f, "[correlation_id=checkout-", "checkout_work (");
	uint64_t br_id = count_all(&f, "[correlation_id=browse-", "browse_work (");
	uint64_t id_cross = count_all(&f, "[correlation_id=checkout-", "browse_work (") +
			    count_all(&f, "[correlation_id=browse-", "checkout_work (");

	bad = bad_values(&f, "correlation_id", is_correlation_id, NULL, bad_one, sizeof(bad_one));
	cr_log_info("%s: correlation_id on checkout_work %llu of %llu, on browse_work %llu of %llu, %llu crossed\n",
		    v->tag, (unsigned long long)co_id, (unsigned long long)co, (unsigned long long)br_id,
		    (unsigned long long)br, (unsigned long long)id_cross);
	cr_assert_eq(bad, 0, "%s: %llu samples with correlation_id '%s'", v->tag, (unsigned long long)bad, bad_one);
	cr_assert_geq(co_id * 100, co * 90, "%s: checkout_work's id on %llu of %llu", v->tag, (unsigned long long)co_id,
		      (unsigned long long)co);
	cr_assert_geq(br_id * 100, br * 90, "%s: browse_work's id on %llu of %llu", v->tag, (unsigned long long)br_id,
		      (unsigned long long)br);
	cr_assert_leq(id_cross * 100, (co + br) * 2, "%s: %llu samples with the other route's id", v->tag,
		      (unsigned long long)id_cross);
	folded_free(&f);

	/* --trace-id keeps one trace's samples, its id in either case. */
	report_by(rec, "trace_id", by, &f);
	char trace[40] = "", upper[40], want_frame[64];

	for (size_t i = 0; i < f.n && !trace[0]; i++) {
		const char *at = strstr(f.lines[i].stack, ";[trace_id=");

		if (at && strlen(at) > 11 + 32 && at[11 + 32] == ']')
			snprintf(trace, sizeof(trace), "%.32s", at + 11);
	}
	cr_assert(trace[0], "%s: no sample with a trace_id", v->tag);
	snprintf(want_frame, sizeof(want_frame), "[trace_id=%s]", trace);
	uint64_t in_trace = count_all(&f, want_frame, NULL);
	folded_free(&f);
	for (int i = 0; i < 33; i++)
		upper[i] = (char)toupper((unsigned char)trace[i]);
	run((const char *const[]){ PYEBPF, "report", rec, "--trace-id", upper, "--by", "trace_id", "-o", by, NULL }, 60,
	    &r);
	cr_assert_eq(r.status, 0, "%s: report --trace-id: %s", v->tag, r.err);
	run_result_free(&r);
	folded_load(by, &f);
	cr_assert_eq(count_all(&f, "", NULL), in_trace, "%s: --trace-id %s kept %llu samples, the trace has %llu",
		     v->tag, upper, (unsigned long long)count_all(&f, "", NULL), (unsigned long long)in_trace);
	cr_assert_eq(count_all(&f, want_frame, NULL), in_trace, "%s: --trace-id kept another trace's samples", v->tag);
	folded_free(&f);
}

/* Samples of stacks that hold a, b and c. */
static uint64_t count3(const struct folded *f, const char *a, const char *b, const char *c)
{
	uint64_t t = 0;

	for (size_t i = 0; i < f->n; i++)
		if (strstr(f->lines[i].stack, a) && strstr(f->lines[i].stack, b) && strstr(f->lines[i].stack, c))
			t += f->lines[i].count;
	return t;
}

/*
 * Wall mode on the FastAPI shop: the threads' time splits between the
 * routes as their CPU does, and each request's waits (its task awaiting
 * asyncio.sleep while another runs) are under its own endpoint, read from
 * the waiting task's own context, with the reason they wait.
 */
Test(requests, fastapi_waits_are_under_their_endpoint_in_wall_mode, .timeout = 300)
{
	const char *dir = temp_dir();
	char *rec = temp_path(dir, "wall.pb.gz"), *by = temp_path(dir, "by.folded");
	struct asgi_run run_of;
	const char *tag = run_of.v.tag;
	struct run_result r;
	struct folded f;

	asgi_record((const char *const[]){ "--mode", "wall", "-F", "299", NULL }, rec, &run_of);
	double got = checkout_share(rec, tag, "GET /checkout", "GET /browse/{item}");

	cr_log_info("%s: wall: /checkout %.1f%% of the two routes' thread samples, %.1f%% of their work's CPU\n", tag,
		    got, run_of.want);
	cr_assert_leq(fabs(got - run_of.want), 3.0,
		      "%s: wall: /checkout %.1f%% of the routes' samples, its work %.1f%%", tag, got, run_of.want);
	report_by(rec, "endpoint", by, &f);
	uint64_t co = count_all(&f, "checkout_work (", NULL), br = count_all(&f, "browse_work (", NULL);
	uint64_t cross = count_all(&f, "[endpoint=GET /checkout]", "browse_work (") +
			 count_all(&f, "[endpoint=GET /browse/{item}]", "checkout_work (");

	cr_log_info("%s: wall: checkout_work %llu, browse_work %llu thread samples, %llu under the other route\n", tag,
		    (unsigned long long)co, (unsigned long long)br, (unsigned long long)cross);
	cr_assert_gt(co, 300, "%s: %llu samples of checkout_work", tag, (unsigned long long)co);
	cr_assert_gt(br, 100, "%s: %llu samples of browse_work", tag, (unsigned long long)br);
	cr_assert_leq(cross * 100, (co + br) * 2, "%s: %llu samples under the other route", tag,
		      (unsigned long long)cross);
	folded_free(&f);

	/* Task time: the handlers' awaits of asyncio.sleep, by endpoint. */
	run((const char *const[]){ PYEBPF, "report", rec, "--tasks", "--by", "endpoint", "-o", by, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s: report --tasks: %s", tag, r.err);
	run_result_free(&r);
	folded_load(by, &f);
	uint64_t co_wait = count3(&f, ";checkout (", "[await: sleep]", ""),
		 br_wait = count3(&f, ";browse (", "[await: sleep]", ""),
		 co_ok = count3(&f, ";checkout (", "[await: sleep]", "[endpoint=GET /checkout]"),
		 br_ok = count3(&f, ";browse (", "[await: sleep]", "[endpoint=GET /browse/{item}]"),
		 wait_cross = count3(&f, ";checkout (", "[await: sleep]", "[endpoint=GET /browse/{item}]") +
			      count3(&f, ";browse (", "[await: sleep]", "[endpoint=GET /checkout]");

	cr_log_info("%s: task time: checkout's sleeps %llu of %llu under /checkout, browse's %llu of %llu under "
		    "/browse, %llu crossed\n",
		    tag, (unsigned long long)co_ok, (unsigned long long)co_wait, (unsigned long long)br_ok,
		    (unsigned long long)br_wait, (unsigned long long)wait_cross);
	cr_assert_gt(co_wait, 200, "%s: %llu task samples of checkout awaiting sleep", tag,
		     (unsigned long long)co_wait);
	cr_assert_gt(br_wait, 50, "%s: %llu task samples of browse awaiting sleep", tag, (unsigned long long)br_wait);
	cr_assert_geq(co_ok * 100, co_wait * 90, "%s: checkout's waits under /checkout: %llu of %llu", tag,
		      (unsigned long long)co_ok, (unsigned long long)co_wait);
	cr_assert_geq(br_ok * 100, br_wait * 90, "%s: browse's waits under /browse: %llu of %llu", tag,
		      (unsigned long long)br_ok, (unsigned long long)br_wait);
	cr_assert_eq(wait_cross, 0, "%s: %llu waits under the other route", tag, (unsigned long long)wait_cross);
	folded_free(&f);
}

/*
 * top --by endpoint on the running FastAPI shop: one table of the whole
 * run (--once) whose split is the routes' work's, each route's work its
 * top function; --by without the labels it reads is one line.
 */
Test(requests, top_by_endpoint_splits_a_running_service, .timeout = 300)
{
	struct asgi_run a;
	pid_t shop = asgi_shop(&a);
	const char *dir = temp_dir();
	char *said = temp_path(dir, "client.out"), cmd[3 * PATH_MAX], pidarg[16];
	struct run_result r;

	snprintf(cmd, sizeof(cmd), "exec %s %s 18470 7 4 > %s", a.v.python, ASGI_CLIENT, said);
	pid_t client = spawn((const char *const[]){ "sh", "-c", cmd, NULL });
	snprintf(pidarg, sizeof(pidarg), "%d", shop);
	run((const char *const[]){ PYEBPF, "top", "--once", "-d", "5", "-F", "299", "-p", pidarg, "--by", "endpoint",
				   NULL },
	    120, &r);
	cr_assert_eq(wait_exit(client, 120), 0, "%s: the client failed", a.v.tag);
	asgi_want(&a, file_text(said));
	asgi_stop(&a, shop);
	cr_assert_eq(r.status, 0, "%s: top: %s", a.v.tag, r.err);
	cr_assert(strstr(r.out, "\nENDPOINT "), "%s: no table of endpoints: %s", a.v.tag, r.out);
	cr_assert(strstr(r.out, "\nGET /checkout ") && strstr(strstr(r.out, "\nGET /checkout "), " checkout_work "),
		  "%s: /checkout's top function: %s", a.v.tag, r.out);
	char *copy = strdup(r.out);
	double got = table_share(copy, "GET /checkout", "GET /browse/{item}");

	free(copy);
	cr_log_info("%s: top --by endpoint: /checkout %.1f%% of the two routes' samples, %.1f%% of their work's "
		    "CPU\n",
		    a.v.tag, got, a.want);
	cr_assert_leq(fabs(got - a.want), 3.0, "%s: top: /checkout %.1f%%, its work %.1f%%: %s", a.v.tag, got, a.want,
		      r.out);
	run_result_free(&r);

	run((const char *const[]){ PYEBPF, "top", "--once", "-d", "1", "-a", "--by", "endpoint", "--no-requests",
				   NULL },
	    30, &r);
	cr_assert_eq(r.status, 2, "top --by --no-requests: %d", r.status);
	cr_assert_str_eq(r.err, "pyebpf: --by endpoint reads the request's labels, which --no-requests turns off\n");
	cr_assert_str_empty(r.out);
	run_result_free(&r);
}
