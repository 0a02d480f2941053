/* pprof output of a real recording, read by the real reader: go tool pprof. */
#include "integ.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool have_go(void)
{
	if (system("command -v go >/dev/null 2>&1") != 0) {
		fprintf(stderr, "[SKIP] go not installed: no pprof reader to check against\n");
		return false;
	}
	return true;
}

static void go_pprof(const char *flag, const char *file, struct run_result *r)
{
	const char *argv[] = { "go", "tool", "pprof", flag, file, NULL };

	run(argv, 120, r);
	cr_assert_eq(r->status, 0, "go tool pprof %s: %s", flag, r->err);
	/* Nothing but the usual header on stderr: no warnings, no errors. */
	cr_assert_null(strstr(r->err, "arning"), "go tool pprof warned: %s", r->err);
	cr_assert_null(strstr(r->err, "rror"), "go tool pprof: %s", r->err);
}

Test(pprof, go_tool_pprof_reads_a_recording, .timeout = 180)
{
	if (!have_go())
		cr_skip_test("go not installed");
	const char *dir = temp_dir();
	char *out = temp_path(dir, "busy.pb.gz");
	const char *argv[] = { PYEBPF, "record", "-F", "499", "-o", out, "--", BUSY, "1.5", NULL };
	struct run_result r;

	run(argv, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);

	go_pprof("-traces", out, &r);
	/* Every trace is leaf first: busy's stack reads inner, outer, main. */
	const char *t = strstr(r.out, "inner\n");
	cr_assert(t, "no inner in: %.2000s", r.out);
	cr_assert(strstr(t, "outer\n") && strstr(t, "main\n"), "inner;outer;main not in a trace: %.500s", t);
	cr_assert(strstr(r.out, "comm:  busy"), "no comm label: %.500s", r.out);
	run_result_free(&r);

	go_pprof("-top", out, &r);
	cr_assert(strstr(r.out, "Type: cpu"), "%s", r.out);
	cr_assert(strstr(r.out, " inner\n"), "inner not in the top list: %s", r.out);
	run_result_free(&r);
	free(out);
}

Test(pprof, format_option_overrides_the_extension, .timeout = 60)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "profile.folded");
	const char *argv[] = { PYEBPF, "record", "--format", "pprof", "-o", out, "--", BUSY, "0.5", NULL };
	struct run_result r;
	FILE *f;
	unsigned char magic[2] = { 0 };

	run(argv, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	f = fopen(out, "rb");
	cr_assert(f);
	cr_assert_eq(fread(magic, 1, 2, f), 2);
	fclose(f);
	cr_assert(magic[0] == 0x1f && magic[1] == 0x8b, "not gzip: pprof was asked for");
	free(out);
}

/* A recording of Python threads in speedscope's format: valid JSON with the
 * format's shape, one profile per thread, the right frames. */
Test(speedscope, recording_of_threads, .timeout = 120)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "t.speedscope.json"), check[2048];
	const char *py;

	/* Any Python 3 will do: the system one is enough. */
	py = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : NULL;
	if (!py) {
		fprintf(stderr, "[SKIP] no /usr/bin/python3\n");
		cr_skip_test("no python3");
	}
	const char *argv[] = { PYEBPF,    "record", "-F", "499", "-o", out, "--", py, "../tests/fixtures/pywork.py",
			       "threads", "1.5",    NULL };
	struct run_result r;

	run(argv, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	snprintf(check, sizeof(check),
		 "%s -c 'import json,sys\n"
		 "d = json.load(open(sys.argv[1], encoding=\"utf-8\"))\n"
		 "assert d[\"$schema\"] == \"https://www.speedscope.app/file-format-schema.json\"\n"
		 "frames = d[\"shared\"][\"frames\"]\n"
		 "assert all(isinstance(f[\"name\"], str) for f in frames)\n"
		 "names = set()\n"
		 "for p in d[\"profiles\"]:\n"
		 "    assert p[\"type\"] == \"sampled\" and p[\"unit\"] == \"nanoseconds\"\n"
		 "    assert len(p[\"samples\"]) == len(p[\"weights\"])\n"
		 "    assert p[\"endValue\"] == sum(p[\"weights\"])\n"
		 "    assert all(0 <= i < len(frames) for s in p[\"samples\"] for i in s)\n"
		 "    names.add(p[\"name\"].split(\"]: \")[1].split(\" [tid\")[0])\n"
		 "assert {\"MainThread\", \"worker-0\", \"worker-1\", \"monitor\"} <= names, names\n"
		 "assert any(f[\"name\"].startswith(\"spin (\") for f in frames)\n"
		 "' %s",
		 py, out);
	cr_assert_eq(system(check), 0, "speedscope file failed the check");
	free(out);
}
