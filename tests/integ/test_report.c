/*
 * pyebpf report over a real recording: pprof in, every format out with the
 * same samples, filters after the fact, the top table, bad input; the SVG
 * flame graph clicked and searched in headless Chromium.
 */
#include "integ.h"

#include <limits.h>
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PY "/usr/bin/python3"

struct recording {
	const char *dir;
	char *pb;         /* the recording */
	uint64_t samples; /* as record's summary counted them */
};

/* Record pywork.py's named threads for 1.5 s into a .pb.gz. */
static void record_threads(struct recording *rec)
{
	struct run_result r;

	if (access(PY, X_OK)) {
		fprintf(stderr, "[SKIP] no " PY "\n");
		cr_skip_test("no python3");
	}
	rec->dir = temp_dir();
	rec->pb = temp_path(rec->dir, "rec.pb.gz");
	const char *argv[] = { PYEBPF,    "record", "-F", "499", "-o", rec->pb, "--", PY, "../tests/fixtures/pywork.py",
			       "threads", "1.5",    NULL };
	run(argv, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	const char *s = strstr(r.err, "\npyebpf: ");
	unsigned long long n = 0;
	cr_assert(s && sscanf(s, "\npyebpf: %llu samples from ", &n) == 1, "%s", r.err);
	rec->samples = n;
	run_result_free(&r);
}

/* pyebpf report IN [args...]: exit status 0 asserted; stdout returned (malloc'd). */
static char *report(const char *in, const char *const args[])
{
	const char *argv[32] = { PYEBPF, "report", in };
	struct run_result r;
	int n = 3;
	char *out;

	for (int i = 0; args && args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	run(argv, 60, &r);
	cr_assert_eq(r.status, 0, "report %s: %s", args && args[0] ? args[0] : "", r.err);
	out = r.out;
	r.out = NULL;
	run_result_free(&r);
	return out;
}

static void report_to(const struct recording *rec, const char *out, const char *const more[])
{
	const char *args[16] = { "-o", out };
	int n = 2;

	for (int i = 0; more && more[i]; i++)
		args[n++] = more[i];
	args[n] = NULL;
	free(report(rec->pb, args));
}

/* Run a Python check script with arguments; it exits non-zero on failure. */
static void py_check(const char *script, const char *a, const char *b)
{
	char path[] = "/tmp/pyebpf-check-XXXXXX";
	int fd = mkstemp(path);
	char cmd[4096];
	FILE *f;

	cr_assert(fd >= 0);
	f = fdopen(fd, "w");
	fputs(script, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), PY " %s '%s' '%s'", path, a, b ? b : "");
	int status = system(cmd);
	unlink(path);
	cr_assert_eq(status, 0, "check failed on %s", a);
}

Test(report, every_format_keeps_every_sample, .timeout = 180)
{
	struct recording rec;
	char total[32];

	record_threads(&rec);
	cr_assert_gt(rec.samples, 100);
	snprintf(total, sizeof(total), "%llu", (unsigned long long)rec.samples);

	/* pprof → pprof is byte for byte the same file: nothing lost on the way. */
	char *again = temp_path(rec.dir, "again.pb.gz");
	report_to(&rec, again, NULL);
	char cmp[1024];
	snprintf(cmp, sizeof(cmp), "cmp -s '%s' '%s'", rec.pb, again);
	cr_assert_eq(system(cmp), 0, "report -o .pb.gz changed the recording");

	char *folded = temp_path(rec.dir, "a.folded");
	const char *threads[] = { "--threads", NULL };
	report_to(&rec, folded, threads);
	struct folded f;
	folded_load(folded, &f);
	cr_assert_eq(f.total, rec.samples, "folded has %llu of %llu samples", (unsigned long long)f.total,
		     (unsigned long long)rec.samples);
	for (const char *const *t = (const char *const[]){ "MainThread [tid ", "worker-0 [tid ", "worker-1 [tid ",
							   "monitor [tid ", NULL };
	     *t; t++)
		cr_assert_gt(folded_count(&f, "python3", *t), 0, "no %s in the folded report", *t);
	uint64_t spin = count_all(&f, ";spin (", NULL);
	folded_free(&f);

	/* The Firefox Profiler's format: valid as its importer reads it, a track
	 * per named thread, every sample, spin() in as many as the folded says. */
	char *gecko = temp_path(rec.dir, "a.gecko.json"), cmd[PATH_MAX + 256];
	report_to(&rec, gecko, NULL);
	snprintf(cmd, sizeof(cmd),
		 PY " ../tests/gecko_check.py '%s' --samples %s --threads MainThread,worker-0,worker-1,monitor "
		    "--function spin=%llu",
		 gecko, total, (unsigned long long)spin);
	cr_assert_gt(spin, 0);
	cr_assert_eq(system(cmd), 0, "%s", cmd);

	/* The source heatmap: pywork.py's own lines, spin()'s shaded. */
	char *heat = temp_path(rec.dir, "a.heatmap.html");
	report_to(&rec, heat, NULL);
	py_check("import sys, re\n"
		 "h = open(sys.argv[1]).read()\n"
		 "assert '<p>%s samples;' % sys.argv[2] in h, h[:600]\n"
		 "sec = h[h.index('pywork.py</h2>'):]\n"
		 "sec = sec[:sec.index('</section>')]\n"
		 "assert 'source not shown' not in sec, sec[:300]\n"
		 "assert re.search(r'<tr id=f\\d+-l\\d+ style=\"--t:0\\.[0-9]+;--s:[01]\\.[0-9]+\"><td class=n>\\d+<td "
		 "class=c>\\d+"
		 "<td class=c>\\d+<td><pre>', sec), 'no shaded line'\n"
		 "assert '<pre>def spin(' in sec, 'no source'\n",
		 heat, total);
	free(heat);

	char *svg = temp_path(rec.dir, "a.svg");
	report_to(&rec, svg, NULL);
	py_check("import sys, xml.dom.minidom as m\n"
		 "d = m.parse(sys.argv[1])\n"
		 "titles = [t.firstChild.data for t in d.getElementsByTagName('title')]\n"
		 "assert titles[0] == 'all (%s samples, 100.00%%)' % sys.argv[2], titles[0]\n"
		 "assert any(t.startswith('spin (') for t in titles)\n",
		 svg, total);

	char *speedscope = temp_path(rec.dir, "a.speedscope.json");
	report_to(&rec, speedscope, NULL);
	py_check("import sys, json\n"
		 "d = json.load(open(sys.argv[1]))\n"
		 "w = sum(sum(p['weights']) for p in d['profiles'])\n"
		 "assert w == int(sys.argv[2]) * (10**9 // 499), (w, sys.argv[2])\n",
		 speedscope, total);

	/* The trace: one named track per thread, balanced slices, gzip or not. */
	static const char trace_check[] =
		"import sys, json, gzip\n"
		"f = gzip.open(sys.argv[1]) if sys.argv[1].endswith('.gz') else open(sys.argv[1])\n"
		"ev = json.load(f)['traceEvents']\n"
		"names = {e['tid']: e['args']['name'] for e in ev if e['name'] == 'thread_name'}\n"
		"assert {n.split(' [tid')[0] for n in names.values()} >= {'MainThread', 'worker-0', 'worker-1', "
		"'monitor'}, names\n"
		"assert sum(1 for e in ev if e['name'] == 'process_name') == 1\n"
		"depth = {}\n"
		"for e in ev:\n"
		"    if e['ph'] == 'B': depth[e['tid']] = depth.get(e['tid'], 0) + 1\n"
		"    if e['ph'] == 'E': depth[e['tid']] -= 1; assert depth[e['tid']] >= 0\n"
		"    if e['ph'] in 'BE': assert e['tid'] in names, e\n"
		"assert set(depth.values()) == {0}, depth\n"
		"assert sum(1 for e in ev if e['ph'] == 'B' and e['name'].startswith('spin (')) >= 4\n";
	char *trace = temp_path(rec.dir, "a.json"), *trace_gz = temp_path(rec.dir, "a.json.gz");
	report_to(&rec, trace, NULL);
	report_to(&rec, trace_gz, NULL);
	py_check(trace_check, trace, NULL);
	py_check(trace_check, trace_gz, NULL);
	free(again);
	free(folded);
	free(svg);
	free(speedscope);
	free(gecko);
	free(trace);
	free(trace_gz);
	free(rec.pb);
}

Test(report, filters_after_the_fact, .timeout = 180)
{
	struct recording rec;
	struct folded all, no_monitor, early, late, one;

	record_threads(&rec);
	char *a = temp_path(rec.dir, "all.folded"), *b = temp_path(rec.dir, "b.folded");
	char *c = temp_path(rec.dir, "c.folded"), *d = temp_path(rec.dir, "d.folded"),
	     *e = temp_path(rec.dir, "e.folded");
	const char *threads[] = { "--threads", NULL };
	const char *exclude[] = { "--threads", "--exclude-thread", "monitor", NULL };
	const char *until[] = { "--until", "0.75", NULL }, *since[] = { "--since", "0.75", NULL };
	const char *only[] = { "--threads", "--thread", "worker-1", "--python-only", NULL };

	report_to(&rec, a, threads);
	report_to(&rec, b, exclude);
	report_to(&rec, c, until);
	report_to(&rec, d, since);
	report_to(&rec, e, only);
	folded_load(a, &all);
	folded_load(b, &no_monitor);
	folded_load(c, &early);
	folded_load(d, &late);
	folded_load(e, &one);

	uint64_t monitor = folded_count(&all, "python3", "monitor [tid ");
	cr_assert_gt(monitor, 0);
	cr_assert_eq(folded_count(&no_monitor, "python3", "monitor [tid "), 0);
	cr_assert_eq(no_monitor.total, all.total - monitor, "only monitor's samples went");
	/* Time splits the recording without losing or doubling a sample. */
	cr_assert_gt(early.total, 0);
	cr_assert_gt(late.total, 0);
	cr_assert_eq(early.total + late.total, all.total);
	/* One thread, its Python frames only. */
	/* Samples without a Python frame go too (a thread starting, still in C). */
	uint64_t w1 = folded_count(&all, "python3", "worker-1 [tid "), w1_py = 0;
	for (size_t i = 0; i < all.n; i++)
		if (strstr(all.lines[i].stack, "worker-1 [tid ") && strstr(all.lines[i].stack, "pywork.py:"))
			w1_py += all.lines[i].count;
	cr_assert(one.total >= w1_py && one.total <= w1, "worker-1 only: %llu, not in [%llu, %llu]",
		  (unsigned long long)one.total, (unsigned long long)w1_py, (unsigned long long)w1);
	for (size_t i = 0; i < one.n; i++) {
		cr_assert(strstr(one.lines[i].stack, "worker-1 [tid "), "%s", one.lines[i].stack);
		cr_assert_null(strstr(one.lines[i].stack, "_[k]"), "kernel frame: %s", one.lines[i].stack);
	}
	folded_free(&all);
	folded_free(&no_monitor);
	folded_free(&early);
	folded_free(&late);
	folded_free(&one);
	free(a);
	free(b);
	free(c);
	free(d);
	free(e);
	free(rec.pb);
}

Test(report, top_table, .timeout = 120)
{
	struct recording rec;

	record_threads(&rec);
	const char *args[] = { "--top", "3", NULL };
	char *out = report(rec.pb, args);
	cr_assert(!strncmp(out, "  SELF%  TOTAL%      SELF     TOTAL  FUNCTION\n", 46), "%s", out);
	/* spin() calls work() which does the arithmetic: work is first by self. */
	const char *row = strchr(out, '\n') + 1;
	cr_assert(strstr(row, "  work (") && strstr(row, "pywork.py:"), "first row: %s", row);
	cr_assert(strstr(out, "more functions; --top N shows more)\n"), "%s", out);
	free(out);
	free(rec.pb);
}

static void expect_failure(const char *const argv[], int status, const char *err, const char *no_file)
{
	struct run_result r;

	run(argv, 30, &r);
	cr_assert_eq(r.status, status, "exit %d: %s", r.status, r.err);
	cr_assert_str_eq(r.err, err);
	if (no_file)
		cr_assert_neq(access(no_file, F_OK), 0, "%s was written", no_file);
	run_result_free(&r);
}

Test(report, bad_input_is_one_line)
{
	const char *dir = temp_dir();
	char *text = temp_path(dir, "notes.pb.gz"), *cut = temp_path(dir, "cut.pb.gz"), *out = temp_path(dir, "o.svg");
	char *missing = temp_path(dir, "missing.pb.gz"), err[2048];
	FILE *f = fopen(text, "w");

	fputs("hello, world\n", f);
	fclose(f);
	/* The first half of a real pprof file. */
	f = fopen(cut, "wb");
	fwrite("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xed\xbd", 1, 12, f);
	fclose(f);

	snprintf(err, sizeof(err), "pyebpf: cannot read '%s': not a pprof profile (the protobuf does not parse)\n",
		 text);
	expect_failure((const char *const[]){ PYEBPF, "report", text, "-o", out, NULL }, 1, err, out);
	snprintf(err, sizeof(err), "pyebpf: cannot read '%s': truncated gzip data\n", cut);
	expect_failure((const char *const[]){ PYEBPF, "report", cut, "-o", out, NULL }, 1, err, out);
	snprintf(err, sizeof(err), "pyebpf: cannot read '%s': No such file or directory\n", missing);
	expect_failure((const char *const[]){ PYEBPF, "report", missing, NULL }, 1, err, NULL);
	expect_failure((const char *const[]){ PYEBPF, "report", NULL }, 2,
		       "pyebpf: report needs a recording: pyebpf report RECORDING.pb.gz|DIR... [-o OUTPUT]\n", NULL);
	expect_failure(
		(const char *const[]){ PYEBPF, "report", text, "-o", "x.png", NULL }, 2,
		"pyebpf: cannot tell the output format of 'x.png' (known extensions: .folded, .txt, .pb.gz, "
		".pprof, .speedscope.json, .gecko.json, .heatmap.html, .svg, .json, .json.gz; or give --format)\n",
		"x.png");
	expect_failure((const char *const[]){ PYEBPF, "report", text, "--top", "3", "-o", out, NULL }, 2,
		       "pyebpf: --top sets the rows of the table report prints without -o: it does not apply to -o\n",
		       out);
	/* An empty file and a FIFO: said as such, and a FIFO is not waited on. */
	char *empty = temp_path(dir, "empty.pb.gz"), *fifo = temp_path(dir, "in.fifo");
	f = fopen(empty, "w");
	fclose(f);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	snprintf(err, sizeof(err), "pyebpf: cannot read '%s': empty file\n", empty);
	expect_failure((const char *const[]){ PYEBPF, "report", empty, NULL }, 1, err, NULL);
	snprintf(err, sizeof(err), "pyebpf: cannot read '%s': not a regular file\n", fifo);
	expect_failure((const char *const[]){ PYEBPF, "report", fifo, NULL }, 1, err, NULL);
	free(empty);
	free(fifo);
	expect_failure((const char *const[]){ PYEBPF, "report", text, "--since", "later", NULL }, 2,
		       "pyebpf: invalid time 'later' for --since (seconds into the recording, or a time: 14:20, "
		       "2026-11-23T14:00:05, with Z for UTC)\n",
		       NULL);
	free(text);
	free(cut);
	free(out);
	free(missing);
}

Test(report, unwritable_output_leaves_nothing, .timeout = 120)
{
	struct recording rec;
	char err[1024];

	record_threads(&rec);
	snprintf(err, sizeof(err), "pyebpf: cannot write '/proc/flame.svg': ");
	struct run_result r;
	run((const char *const[]){ PYEBPF, "report", rec.pb, "-o", "/proc/flame.svg", NULL }, 30, &r);
	cr_assert_eq(r.status, 1, "%s", r.err);
	cr_assert(!strncmp(r.err, err, strlen(err)) || strstr(r.err, "/proc/flame.svg"), "%s", r.err);
	cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line: %s", r.err);
	run_result_free(&r);
	free(rec.pb);
}

/* The flame graph in a real browser: frames render, a click zooms, ?s= searches. */
Test(report, flame_graph_in_chromium, .timeout = 180)
{
	struct recording rec;

	if (system("command -v chromium >/dev/null 2>&1") != 0) {
		fprintf(stderr, "[SKIP] chromium not installed: the flame graph is not opened in a browser\n");
		cr_skip_test("no chromium");
	}
	record_threads(&rec);
	char *svg = temp_path(rec.dir, "flame.svg"), *html = temp_path(rec.dir, "check.html");
	report_to(&rec, svg, NULL);
	FILE *f = fopen(html, "w");
	cr_assert(f);
	fputs("<html><body><pre id=\"out\">not run</pre>\n"
	      "<iframe id=\"zoom\" src=\"flame.svg\" width=\"1200\" height=\"800\"></iframe>\n"
	      "<iframe id=\"search\" src=\"flame.svg?s=%5Ework%20\" width=\"1200\" height=\"800\"></iframe>\n"
	      "<script>\n"
	      "window.onload = function () {\n"
	      "  var out = document.getElementById('out'), d = document.getElementById('zoom').contentDocument;\n"
	      "  var gs = d.getElementById('frames').children, target = null;\n"
	      "  for (var i = 0; i < gs.length; i++)\n"
	      "    if (/^spin \\(/.test(gs[i].querySelector('title').textContent) &&\n"
	      "        (!target || +gs[i].querySelector('rect').getAttribute('width') <\n"
	      "                    +target.querySelector('rect').getAttribute('width'))) target = gs[i];\n"
	      "  var before = +target.querySelector('rect').getAttribute('width');\n"
	      "  target.querySelector('rect').dispatchEvent(new MouseEvent('click', {bubbles: true}));\n"
	      "  var after = +target.querySelector('rect').getAttribute('width');\n"
	      "  var s = document.getElementById('search').contentDocument;\n"
	      "  out.textContent = 'frames=' + gs.length + ' before=' + before + ' after=' + after +\n"
	      "    ' hidden=' + d.querySelectorAll('#frames > g.hide').length +\n"
	      "    ' unzoom=' + d.getElementById('unzoom').getAttribute('class') +\n"
	      "    ' matched=' + s.getElementById('matched').textContent + ' end';\n"
	      "};\n"
	      "</script></body></html>\n",
	      f);
	fclose(f);
	char url[1024];
	snprintf(url, sizeof(url), "file://%s", html);
	struct run_result r;
	run((const char *const[]){ "chromium", "--headless", "--no-sandbox", "--disable-gpu",
				   "--allow-file-access-from-files", "--virtual-time-budget=10000", "--dump-dom", url,
				   NULL },
	    120, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	const char *o = strstr(r.out, "<pre id=\"out\">frames=");
	cr_assert(o, "the page did not run: %.3000s", r.out);
	int frames, hidden;
	double before, after, matched;
	char unzoom[32];
	cr_assert_eq(
		sscanf(o, "<pre id=\"out\">frames=%d before=%lf after=%lf hidden=%d unzoom=%31s matched=Matched: %lf%%",
		       &frames, &before, &after, &hidden, unzoom, &matched),
		6, "%.300s", o);
	cr_assert_gt(frames, 10, "%.300s", o);
	cr_assert_lt(before, 1180, "%.300s", o);
	cr_assert_eq(after, 1180, "the clicked frame fills the width: %.300s", o);
	cr_assert_gt(hidden, 0, "frames outside the zoomed one are hidden: %.300s", o);
	cr_assert_str_eq(unzoom, "button", "Reset Zoom shows");
	cr_assert(matched > 50 && matched <= 100, "work() is most of the samples: %.300s", o);
	run_result_free(&r);
	free(svg);
	free(html);
	free(rec.pb);
}
