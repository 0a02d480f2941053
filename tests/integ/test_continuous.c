/*
 * Continuous mode: one pprof per interval, SIGHUP and SIGTERM, pruning; and
 * the soak test: hours of production compressed into PYEBPF_SOAK_SECONDS
 * (default 240: CI's whole run must stay under an hour; 600 and more for a
 * longer look) of short-lived Python processes, with bounded memory and no
 * interval lost.
 */
#include "integ.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PY "/usr/bin/python3"

/* Interval files in dir, sorted by name (they sort by time); returns how many. */
static int interval_files(const char *dir, char names[][128], int max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert(d, "no %s", dir);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "pyebpf-", 7) && strstr(e->d_name, ".pb.gz") && n < max)
			snprintf(names[n++], 128, "%.127s", e->d_name);
	closedir(d);
	qsort(names, (size_t)n, 128, (int (*)(const void *, const void *))strcmp);
	return n;
}

static int seq_of(const char *name)
{
	const char *dash = strrchr(name, '-');

	return dash ? atoi(dash + 1) : -1;
}

/* Every file reads back as a profile with at least `min_samples`. */
static void check_readable(const char *dir, char names[][128], int n, uint64_t min_samples)
{
	for (int i = 0; i < n; i++) {
		char path[1024], *folded = NULL;
		struct run_result r;
		struct folded f;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (asprintf(&folded, "%s/check.folded", dir) < 0)
			cr_assert_fail("oom");
		run((const char *const[]){ PYEBPF, "report", path, "-o", folded, NULL }, 60, &r);
		cr_assert_eq(r.status, 0, "%s: %s", names[i], r.err);
		run_result_free(&r);
		folded_load(folded, &f);
		cr_assert_geq(f.total, min_samples, "%s has %llu samples", names[i], (unsigned long long)f.total);
		folded_free(&f);
		unlink(folded);
		free(folded);
	}
}

static uint64_t rss_kb(pid_t pid)
{
	char path[64], line[256];
	uint64_t kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

Test(continuous, intervals_sighup_sigterm_and_keep, .timeout = 120)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "out"), *err = temp_path(dir, "err.txt"), names[16][128];
	pid_t busy = spawn((const char *const[]){ BUSY, "20", NULL });
	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "-a", "-F", "199", "--continuous", out,
							 "--interval", "1s", "--keep", "3", NULL },
				  err);

	wait_for_text(err, SAMPLING, 30);
	sleep_s(4.5);
	kill(rec, SIGHUP);
	sleep_s(0.5);
	kill(rec, SIGTERM);
	cr_assert_eq(wait_exit(rec, 30), 0, "SIGTERM writes the last interval and exits 0");
	kill_wait(busy);

	int n = interval_files(out, names, 16);
	cr_assert_eq(n, 3, "--keep 3 keeps %d files", n);
	/* The newest three, in a row: four or more intervals were written. */
	cr_assert_geq(seq_of(names[0]), 3, "%s", names[0]);
	for (int i = 1; i < n; i++)
		cr_assert_eq(seq_of(names[i]), seq_of(names[i - 1]) + 1, "%s after %s", names[i], names[i - 1]);
	check_readable(out, names, n, 1);
	char *text = NULL;
	FILE *f = fopen(err, "r");
	size_t len = 0;
	cr_assert(f);
	cr_assert_gt(getdelim(&text, &len, '\0', f), 0);
	fclose(f);
	cr_assert(strstr(text, "interval files to "), "%s", text);
	free(text);
	free(out);
	free(err);
}

Test(continuous, bad_options)
{
	struct run_result r;

	run((const char *const[]){ PYEBPF, "record", "--keep", "3", NULL }, 30, &r);
	cr_assert_eq(r.status, 2);
	cr_assert_str_eq(r.err, "pyebpf: --interval, --keep, --max-disk and --rate-limit need --continuous DIR\n");
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "record", "--continuous", "/tmp/x", "-o", "a.svg", NULL }, 30, &r);
	cr_assert_eq(r.status, 2);
	cr_assert_str_eq(r.err, "pyebpf: --continuous writes pprof files into its directory: -o and --format do not "
				"apply\n");
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "record", "--continuous", "/proc/nope", NULL }, 30, &r);
	cr_assert_eq(r.status, 1);
	cr_assert(strstr(r.err, "pyebpf: cannot create the directory '/proc/nope': "), "%s", r.err);
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "record", "--continuous", "/tmp/x", "--interval", "0.1s", NULL }, 30, &r);
	cr_assert_eq(r.status, 2);
	cr_assert_str_eq(r.err, "pyebpf: invalid interval '0.1s' for --interval (e.g. 60s, 5m, 1h; at least 1 s)\n");
	run_result_free(&r);
}

/*
 * Hundreds of short Python processes a minute while recording -a in
 * continuous mode: RSS after the first interval and at the end differ by
 * under 10 MB, and every interval file is there and readable.
 */
Test(continuous, soak_with_process_churn, .timeout = 3600)
{
	const char *env = getenv("PYEBPF_SOAK_SECONDS");
	int seconds = env && atoi(env) > 0 ? atoi(env) : 120, interval = seconds >= 300 ? 60 : 10;
	const char *dir = temp_dir();
	char *out = temp_path(dir, "out"), *err = temp_path(dir, "err.txt"), names[256][128], ival[16], churn[512];

	if (access(PY, X_OK)) {
		fprintf(stderr, "[SKIP] no " PY "\n");
		cr_skip_test("no python3");
	}
	snprintf(ival, sizeof(ival), "%ds", interval);
	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "-a", "-F", "99", "--continuous", out,
							 "--interval", ival, NULL },
				  err);
	wait_for_text(err, SAMPLING, 30);
	/* Five Pythons at a time, each ~0.1 s of work: several hundred a minute. */
	snprintf(churn, sizeof(churn),
		 "end=$(( $(date +%%s) + %d )); n=0; while [ $(date +%%s) -lt $end ]; do "
		 "for i in 1 2 3 4 5; do " PY " -c 'sum(i * i for i in range(300000))' & done; wait; n=$((n+5)); "
		 "done; echo $n > %s/churned",
		 seconds, dir);
	pid_t load = spawn((const char *const[]){ "sh", "-c", churn, NULL });

	/* The first interval is written: the baseline. */
	double t0 = 0;
	while (interval_files(out, names, 256) < 1) {
		sleep_s(0.5);
		t0 += 0.5;
		cr_assert_lt(t0, interval * 3, "no interval file after %.0f s", t0);
	}
	uint64_t first = rss_kb(rec);
	cr_assert_eq(wait_exit(load, seconds + 120), 0);
	uint64_t last = rss_kb(rec);
	kill(rec, SIGTERM);
	cr_assert_eq(wait_exit(rec, 60), 0);

	char *path = temp_path(dir, "churned");
	FILE *f = fopen(path, "r");
	int churned = 0;
	cr_assert(f && fscanf(f, "%d", &churned) == 1);
	fclose(f);
	free(path);
	cr_log_info("soak: %d s, %d Python processes, RSS %lu kB after the first interval, %lu kB at the end\n",
		    seconds, churned, (unsigned long)first, (unsigned long)last);
	fprintf(stderr,
		"soak: %d s, %d Python processes (%.0f a minute), RSS %lu kB after the first interval, "
		"%lu kB at the end\n",
		seconds, churned, churned * 60.0 / seconds, (unsigned long)first, (unsigned long)last);
	cr_assert_gt(churned * 60 / seconds, 100, "only %d processes", churned);
	cr_assert_lt(last, first + 10 * 1024, "RSS grew from %lu to %lu kB", (unsigned long)first, (unsigned long)last);

	int n = interval_files(out, names, 256);
	cr_assert_geq(n, seconds / interval, "%d interval files for %d s", n, seconds);
	for (int i = 0; i < n; i++)
		cr_assert_eq(seq_of(names[i]), i, "interval %d missing (found %s)", i, names[i]);
	check_readable(out, names, n, 1);
	free(out);
	free(err);
}
