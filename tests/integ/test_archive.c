/* An archive of intervals asked questions: report over a continuous
 * directory, wall-clock windows, before/after diffs (also through go tool
 * pprof -diff_base), and pyebpf serve in headless Chromium and under hostile
 * requests. */
#include "integ.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PY "/usr/bin/python3"

/* alpha() alone for ~1.6 s, then alpha() and beta() in turns. */
static const char workload[] = "import time\n"
			       "def alpha(n):\n"
			       "    return sum(i * i for i in range(n))\n"
			       "def beta(n):\n"
			       "    return sum(i * 3 for i in range(n))\n"
			       "t0 = time.time()\n"
			       "while time.time() - t0 < 1.6:\n"
			       "    alpha(20000)\n"
			       "while time.time() - t0 < 4.5:\n"
			       "    alpha(20000)\n"
			       "    beta(20000)\n";

struct archive_run {
	const char *dir;
	char *out; /* the continuous directory */
	char names[16][128];
	int n;
};

static int list(const char *dir, char names[][128], int max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert(d);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "pyebpf-", 7) && n < max)
			snprintf(names[n++], 128, "%.127s", e->d_name);
	closedir(d);
	qsort(names, (size_t)n, 128, (int (*)(const void *, const void *))strcmp);
	return n;
}

/* Record the workload in 1-second intervals. */
static void record_intervals(struct archive_run *a)
{
	char *script;
	struct run_result r;
	FILE *f;

	a->dir = temp_dir();
	a->out = temp_path(a->dir, "archive");
	script = temp_path(a->dir, "work.py");
	f = fopen(script, "w");
	cr_assert(f);
	fputs(workload, f);
	fclose(f);
	run((const char *const[]){ PYEBPF, "record", "-F", "499", "--continuous", a->out, "--interval", "1s", "--", PY,
				   script, NULL },
	    60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	a->n = list(a->out, a->names, 16);
	cr_assert_geq(a->n, 4, "%d intervals", a->n);
	free(script);
}

/* "pyebpf-20261124T060734.289Z-000001.pb.gz" → "2026-11-24T06:07:34.289Z" */
static void name_time(const char *name, char *buf, size_t size)
{
	const char *s = name + 7;

	snprintf(buf, size, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2s.%.3sZ", s, s + 4, s + 6, s + 9, s + 11, s + 13, s + 16);
}

static void report(const char *const argv[], struct run_result *r)
{
	run(argv, 60, r);
	cr_assert_eq(r->status, 0, "%s", r->err);
}

static void report_folded(const char *const argv[], struct folded *f)
{
	struct run_result r;

	report(argv, &r);
	run_result_free(&r);
	for (int i = 0; argv[i]; i++)
		if (!strcmp(argv[i], "-o"))
			folded_load(argv[i + 1], f);
}

Test(archive, report_merges_windows_and_diffs, .timeout = 240)
{
	struct archive_run a;
	struct folded all, each, window, one;
	char path[1024], t1[40], t2[40], *o = NULL;
	uint64_t sum = 0;

	record_intervals(&a);
	o = temp_path(a.dir, "x.folded");
	/* The directory is the sum of its files. */
	report_folded((const char *const[]){ PYEBPF, "report", a.out, "-o", o, NULL }, &all);
	for (int i = 0; i < a.n; i++) {
		snprintf(path, sizeof(path), "%s/%s", a.out, a.names[i]);
		report_folded((const char *const[]){ PYEBPF, "report", path, "-o", o, NULL }, &each);
		sum += each.total;
		folded_free(&each);
	}
	cr_assert_gt(all.total, 1000);
	cr_assert_eq(all.total, sum, "merged %llu, files %llu", (unsigned long long)all.total, (unsigned long long)sum);
	/* A window named by two intervals' names is exactly the first of them. */
	name_time(a.names[1], t1, sizeof(t1));
	name_time(a.names[2], t2, sizeof(t2));
	snprintf(path, sizeof(path), "%s/%s", a.out, a.names[1]);
	report_folded((const char *const[]){ PYEBPF, "report", path, "-o", o, NULL }, &one);
	struct run_result r;
	run((const char *const[]){ PYEBPF, "report", a.out, "--since", t1, "--until", t2, "-o", o, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	folded_load(o, &window);
	cr_assert_eq(window.total, one.total, "window %llu, interval %llu: %s", (unsigned long long)window.total,
		     (unsigned long long)one.total, r.err);
	cr_assert_eq(window.n, one.n);
	char want[256];
	snprintf(want, sizeof(want), "pyebpf: read 2 of %d recordings (from ", a.n);
	cr_assert(strstr(r.err, want), "only the window's files are read: %s", r.err);
	run_result_free(&r);

	/* Before (the first interval: alpha alone) and after (the last ones). */
	char *top_err = NULL;
	report((const char *const[]){ PYEBPF, "report", a.out, "--since", t2, "--diff-base", a.out, "--base-until", t1,
				      "--top", "5", NULL },
	       &r);
	const char *beta = strstr(r.out, "beta (");
	cr_assert(beta, "%s", r.out);
	/* beta's row: 0.0% before, a positive share after, grew. */
	const char *row = beta;
	while (row > r.out && row[-1] != '\n')
		row--;
	double b, af, ch;
	cr_assert_eq(sscanf(row, "%lf%% %lf%% %lf", &b, &af, &ch), 3, "%.200s", row);
	cr_assert_eq(b, 0.0, "%.200s", row);
	cr_assert_gt(af, 20.0, "%.200s", row);
	cr_assert_gt(ch, 20.0, "%.200s", row);
	top_err = r.err;
	r.err = NULL;
	run_result_free(&r);
	free(top_err);
	/* A diff of the directory against itself changes nothing. */
	report((const char *const[]){ PYEBPF, "report", a.out, "--diff-base", a.out, NULL }, &r);
	cr_assert(strstr(r.out, "(no change: every function has the same share before and after)"), "%s", r.out);
	run_result_free(&r);
	/* difffolded lines: "stack BEFORE AFTER". */
	char *d = temp_path(a.dir, "diff.folded"), *svg = temp_path(a.dir, "diff.svg");
	report((const char *const[]){ PYEBPF, "report", a.out, "--since", t2, "--diff-base", a.out, "--base-until", t1,
				      "-o", d, NULL },
	       &r);
	run_result_free(&r);
	FILE *f = fopen(d, "r");
	char line[8192];
	int beta_lines = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long x, y;
		char *sp = strrchr(line, ' ');
		cr_assert(sp);
		*sp = '\0';
		char *sp2 = strrchr(line, ' ');
		cr_assert(sp2 && sscanf(sp2, " %llu", &x) == 1 && sscanf(sp + 1, "%llu", &y) == 1, "%s", line);
		if (strstr(line, "beta (")) {
			cr_assert_eq(x, 0, "beta ran only after: %s", line);
			beta_lines++;
		}
	}
	fclose(f);
	cr_assert_gt(beta_lines, 0);
	report((const char *const[]){ PYEBPF, "report", a.out, "--since", t2, "--diff-base", a.out, "--base-until", t1,
				      "-o", svg, NULL },
	       &r);
	run_result_free(&r);
	/* A pprof diff is go tool pprof's: both sides written, it reads them. */
	if (system("command -v go >/dev/null 2>&1") == 0) {
		char *base = temp_path(a.dir, "base.pb.gz"), *now = temp_path(a.dir, "new.pb.gz");

		report((const char *const[]){ PYEBPF, "report", a.out, "--until", t1, "-o", base, NULL }, &r);
		run_result_free(&r);
		report((const char *const[]){ PYEBPF, "report", a.out, "--since", t2, "-o", now, NULL }, &r);
		run_result_free(&r);
		run((const char *const[]){ "go", "tool", "pprof", "-top", "-diff_base", base, now, NULL }, 120, &r);
		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_assert(strstr(r.out, "beta"), "%s", r.out);
		run_result_free(&r);
		free(base);
		free(now);
	} else {
		fprintf(stderr, "[SKIP] go not installed: go tool pprof -diff_base not tried\n");
	}
	/* A diff is .svg, .folded or the table: pprof says how instead. */
	run((const char *const[]){ PYEBPF, "report", a.out, "--diff-base", a.out, "-o", "x.pb.gz", NULL }, 30, &r);
	cr_assert_eq(r.status, 2);
	cr_assert_str_eq(r.err, "pyebpf: a diff is written as .svg or .folded (or printed as a table without -o); "
				"for pprof, write each side and run: go tool pprof -diff_base BASE.pb.gz NEW.pb.gz\n");
	cr_assert_neq(access("x.pb.gz", F_OK), 0);
	run_result_free(&r);
	folded_free(&all);
	folded_free(&window);
	folded_free(&one);
	free(d);
	free(svg);
	free(o);
	free(a.out);
}

Test(serve, browser_and_hostile_requests, .timeout = 300)
{
	struct archive_run a;
	char *err, url[256], u[4096], *body = NULL;

	if (system("command -v curl >/dev/null 2>&1") != 0)
		cr_skip_test("no curl");
	record_intervals(&a);
	err = temp_path(a.dir, "serve.err");
	pid_t srv = spawn_capture((const char *const[]){ PYEBPF, "serve", a.out, "--listen", "127.0.0.1:0", NULL },
				  err);
	wait_for_text(err, "pyebpf: serving ", 20);
	FILE *f = fopen(err, "r");
	char line[512];
	cr_assert(f && fgets(line, sizeof(line), f));
	fclose(f);
	cr_assert_eq(sscanf(line, "pyebpf: serving %*s at %255s", url), 1, "%s", line);

	/* Answers. */
	snprintf(u, sizeof(u), "%sapi/intervals", url);
	cr_assert_eq(http(u, NULL, &body, NULL), 200);
	cr_assert_eq(occurrences(body, "\"samples\":"), a.n, "%s", body);
	free(body);
	/* Hostile requests: errors, never a file. */
	static const char *const bad[] = { "..%2f..%2f..%2fetc%2fpasswd",
					   "%2e%2e/%2e%2e/etc/passwd",
					   "../../etc/passwd",
					   "api/../../etc/passwd",
					   "api/flame?from=0&to=999999999999",
					   "api/flame?from=-1&to=2",
					   "api/flame?from=0&to=1&pid=1;rm",
					   "archive/pyebpf-x.pb.gz" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(u, sizeof(u), "%s%s", url, bad[i]);
		int st = http(u, (const char *const[]){ "--path-as-is", NULL }, &body, NULL);
		cr_assert(st == 400 || st == 404, "%s: %d", bad[i], st);
		cr_assert_null(strstr(body, "root:"), "%s", bad[i]);
		free(body);
	}
	snprintf(u, sizeof(u), "%sapi/intervals", url);
	cr_assert_eq(http(u, (const char *const[]){ "-X", "POST", "-d", "x=1", NULL }, NULL, NULL), 405);
	/* A URL longer than the server takes: refused, the server lives on. */
	int len = snprintf(u, sizeof(u), "%sapi/flame?from=0&to=1&comm=", url);
	memset(u + len, 'A', sizeof(u) - (size_t)len - 1);
	u[sizeof(u) - 1] = '\0';
	char huge[80000];
	snprintf(huge, sizeof(huge), "%s", u);
	for (size_t k = strlen(huge); k < sizeof(huge) - 1; k++)
		huge[k] = 'A';
	huge[sizeof(huge) - 1] = '\0';
	int st = http(huge, NULL, NULL, NULL);
	cr_assert(st >= 400 || st == 0, "a huge URL: %d", st);
	/* Many clients at once: every one answered or turned away within the timeout. */
	char cmd[1024];
	snprintf(cmd, sizeof(cmd),
		 "for i in $(seq 60); do curl -s -o /dev/null --max-time 20 '%sapi/flame?from=0&to=%d' & done; wait",
		 url, a.n - 1);
	cr_assert_eq(system(cmd), 0);
	snprintf(u, sizeof(u), "%sapi/intervals", url);
	cr_assert_eq(http(u, NULL, NULL, NULL), 200, "the server answers after the crowd");

	/* The page in a browser: drag a range and a base range, search. */
	if (system("command -v chromium >/dev/null 2>&1") == 0) {
		struct run_result r;
		char *png = temp_path(a.dir, "serve.png"), shot[1100];

		snprintf(u, sizeof(u), "%s#drag=2-%d&dragbase=0-0&s=beta", url, a.n - 1);
		run((const char *const[]){ "chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
					   "--window-size=1300,1000", "--virtual-time-budget=15000", "--dump-dom", u,
					   NULL },
		    120, &r);
		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_assert_eq(occurrences(r.out, "class=\"bar"), a.n, "one bar per interval");
		cr_assert_eq(occurrences(r.out, "class=\"bar after\""), a.n - 2, "the dragged range");
		cr_assert_eq(occurrences(r.out, "class=\"bar before\""), 1, "the base range");
		char want[128];
		snprintf(want, sizeof(want), "<div id=\"status\" class=\"\">intervals 2-%d (from ", a.n - 1);
		cr_assert(strstr(r.out, want), "%.3000s", strstr(r.out, "id=\"status\"") ?: r.out);
		cr_assert(strstr(r.out, "against interval 0 ("), "a diff");
		cr_assert(strstr(r.out, "; before 0 samples, 0.00%; +"), "beta's frame grew from nothing");
		const char *m = strstr(r.out, ">Matched: ");
		cr_assert(m, "the search ran");
		cr_assert_gt(atof(m + 10), 10.0, "beta is a good part of the after side: %.40s", m);
		cr_assert(strstr(r.out, "BEFORE   AFTER   CHANGE"), "the table of changes");
		/* The line under the timeline says the range dragged, and the base. */
		snprintf(want, sizeof(want), "<div id=\"selection\">Showing intervals 2-%d (", a.n - 1);
		cr_assert(strstr(r.out, want), "%.600s", strstr(r.out, "id=\"selection\"") ?: r.out);
		cr_assert(strstr(r.out, ", as dragged, against the base interval 0 ("), "%.600s",
			  strstr(r.out, "id=\"selection\""));
		/* A CPU recording: one colour, no off-CPU boxes in the legend. */
		cr_assert(strstr(r.out, "<span id=\"parts\"><span class=\"swatch\" style=\"background:#4a78c8\"></span>"
					"on the CPU</span>"),
			  "%.600s", strstr(r.out, "id=\"parts\"") ?: r.out);
		run_result_free(&r);
		/* No range in the URL: the newest 10 are shown, and the page says so. */
		run((const char *const[]){ "chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
					   "--window-size=1300,1000", "--virtual-time-budget=15000", "--dump-dom", url,
					   NULL },
		    120, &r);
		cr_assert_eq(r.status, 0, "%s", r.err);
		int shown = a.n < 10 ? a.n : 10;
		snprintf(want, sizeof(want), "<div id=\"selection\">Showing intervals %d-%d (", a.n - shown, a.n - 1);
		cr_assert(strstr(r.out, want), "%.600s", strstr(r.out, "id=\"selection\"") ?: r.out);
		if (a.n > 10)
			snprintf(want, sizeof(want), "the newest 10 intervals, the default");
		else
			snprintf(want, sizeof(want), "all %d intervals (the default is the newest 10)", a.n);
		cr_assert(strstr(r.out, want), "%.600s", strstr(r.out, "id=\"selection\""));
		cr_assert_eq(occurrences(r.out, "class=\"bar after\""), shown, "the default range is drawn");
		run_result_free(&r);
		snprintf(shot, sizeof(shot), "--screenshot=%s", png);
		run((const char *const[]){ "chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
					   "--window-size=1300,1000", "--virtual-time-budget=15000",
					   "--hide-scrollbars", shot, u, NULL },
		    120, &r);
		run_result_free(&r);
		f = fopen(png, "rb");
		cr_assert(f, "no screenshot");
		unsigned char magic[8];
		cr_assert_eq(fread(magic, 1, 8, f), 8);
		cr_assert_eq(memcmp(magic, "\x89PNG\r\n\x1a\n", 8), 0);
		fseek(f, 0, SEEK_END);
		cr_assert_gt(ftell(f), 20000, "a screenshot with something on it");
		fclose(f);
		free(png);
	} else {
		fprintf(stderr, "[SKIP] chromium not installed: the page is not opened\n");
	}
	kill(srv, SIGTERM);
	cr_assert_eq(wait_exit(srv, 20), 0, "serve stops on SIGTERM");

	/* Beyond loopback only when asked, and said. */
	struct run_result r;
	run((const char *const[]){ PYEBPF, "serve", a.out, "--listen", "0.0.0.0:0", NULL }, 10, &r);
	cr_assert_eq(r.status, 2);
	cr_assert_str_eq(r.err, "pyebpf: --listen 0.0.0.0:0 is not a loopback address: serve has no "
				"authentication, so add --public to let anyone who can reach it read the profiles\n");
	run_result_free(&r);
	free(err);
	free(a.out);
}
