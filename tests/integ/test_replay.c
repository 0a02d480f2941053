/* The replay benchmark's two halves: PYEBPF_RAW_OUT captures the ring
 * buffer's records as they came, bench/replay feeds them to ingest again at
 * another host's rate (bench/replay.sh). */
#include "integ.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define REPLAY "bench/replay"

Test(replay, a_raw_capture_replays_at_the_rate_of_a_larger_host, .timeout = 90)
{
	const char *dir = temp_dir();
	char *raw = temp_path(dir, "busy.raw"), *out = temp_path(dir, "busy.folded");
	char *again = temp_path(dir, "replayed.pb.gz"), *folded = temp_path(dir, "replayed.folded");
	char rawenv[600], pidarg[16];
	const char *busy[] = { BUSY, "20", NULL };
	pid_t pid = spawn(busy);
	struct run_result r;
	struct folded f;

	sleep_s(0.2);
	snprintf(pidarg, sizeof(pidarg), "%d", pid);
	snprintf(rawenv, sizeof(rawenv), "PYEBPF_RAW_OUT=%s", raw);
	run((const char *const[]){ "env", rawenv, PYEBPF, "record", "-p", pidarg, "-d", "1", "-o", out, NULL }, 30, &r);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	run_result_free(&r);

	/* 8 CPUs x 99 Hz for 10 s of virtual time: 7920 samples, all named as busy's. */
	run((const char *const[]){ REPLAY, "--virtual", "--cpus", "8", "--hz", "99", "--seconds", "10", "--warmup", "0",
				   "--out", again, raw, NULL },
	    60, &r);
	kill_wait(pid);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	cr_assert(strstr(r.out, " samples=7920 bad=0 "), "replay: %s", r.out);
	cr_assert(strstr(r.out, "keeps_up=yes"), "replay: %s", r.out);
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "report", again, "-o", folded, NULL }, 30, &r);
	cr_assert_eq(r.status, 0, "stderr: %s", r.err);
	folded_load(folded, &f);
	cr_assert_eq(f.total, 7920);
	cr_assert_geq(folded_count(&f, "busy", "main;outer;inner") * 100, f.total * 80, "replayed stacks: %llu of %llu",
		      (unsigned long long)folded_count(&f, "busy", "main;outer;inner"), (unsigned long long)f.total);
	folded_free(&f);
	run_result_free(&r);
}

Test(replay, the_raw_capture_never_replaces_a_file, .timeout = 30)
{
	const char *dir = temp_dir();
	char *raw = temp_path(dir, "exists.raw"), *out = temp_path(dir, "p.folded");
	char rawenv[600];
	struct run_result r;
	struct stat st;
	FILE *f = fopen(raw, "w");

	cr_assert(f && fputs("keep me\n", f) >= 0 && !fclose(f));
	snprintf(rawenv, sizeof(rawenv), "PYEBPF_RAW_OUT=%s", raw);
	run((const char *const[]){ "env", rawenv, PYEBPF, "record", "-a", "-d", "0.2", "-o", out, NULL }, 20, &r);
	cr_assert_neq(r.status, 0);
	cr_assert(strstr(r.err, "PYEBPF_RAW_OUT"), "stderr: %s", r.err);
	cr_assert_eq(occurrences(r.err, "\n"), 1, "one error line: %s", r.err);
	cr_assert_eq(stat(raw, &st), 0);
	cr_assert_eq(st.st_size, 8, "the file was written into");
	cr_assert_neq(stat(out, &st), 0, "no output after an error");
	run_result_free(&r);
}
