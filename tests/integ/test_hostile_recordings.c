/*
 * Hostile recordings and directories: files `report` did not write, built
 * to cost the most memory per byte; names planted beside continuous mode's
 * files; times and periods at the edges. Each of these took gigabytes,
 * deleted data or gave a wrong answer before. No BPF: `report` and
 * continuous mode's pruning only (record runs for the pruning test).
 */
#include "integ.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What every report of a hostile file must stay under. */
#define RSS_LIMIT_KB (512 * 1024)

struct measured {
	int status;     /* exit code, or 128 + signal */
	long maxrss_kb; /* the child's peak RSS */
	double seconds;
	char *err;
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return strdup("");
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	return buf;
}

/*
 * Run argv with its address space capped at 2 GiB (so a build without the
 * bounds fails here by running out rather than taking the machine's
 * memory), killed after timeout_s; its peak RSS from wait4.
 */
static void run_measured(const char *const argv[], double timeout_s, struct measured *m)
{
	char err[] = "/tmp/pyebpf-hostile-err-XXXXXX";
	int efd = mkstemp(err);
	double t0 = mono();
	struct rusage ru;
	pid_t pid;
	int st;

	cr_assert(efd >= 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		struct rlimit as = { 2UL << 30, 2UL << 30 };
		int null = open("/dev/null", O_RDWR);

		setrlimit(RLIMIT_AS, &as);
		dup2(null, 0);
		dup2(null, 1);
		dup2(efd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(efd);
	for (;;) {
		pid_t w = wait4(pid, &st, WNOHANG, &ru);

		if (w == pid)
			break;
		if (mono() - t0 > timeout_s) {
			kill(pid, SIGKILL);
			wait4(pid, &st, 0, &ru);
			break;
		}
		usleep(10000);
	}
	m->seconds = mono() - t0;
	m->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	m->maxrss_kb = ru.ru_maxrss;
	m->err = slurp(err);
	unlink(err);
}

/* ---- protobuf wire format, enough to build pprof files by hand ---- */

static void varint(FILE *f, uint64_t v)
{
	do {
		fputc((int)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)), f);
		v >>= 7;
	} while (v);
}

static void key(FILE *f, unsigned field, unsigned wire)
{
	varint(f, (uint64_t)field << 3 | wire);
}

/* A length-delimited field whose payload is in buf. */
static void bytes_field(FILE *f, unsigned field, const void *buf, size_t len)
{
	key(f, field, 2);
	varint(f, len);
	fwrite(buf, 1, len, f);
}

/* A message built in memory, then written as one field. */
struct msg {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *msg_open(struct msg *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	return m->f;
}

static void msg_put(FILE *to, unsigned field, struct msg *m)
{
	fclose(m->f);
	bytes_field(to, field, m->buf, m->len);
	free(m->buf);
}

static void string_table(FILE *f, const char *const *s)
{
	for (; *s; s++)
		bytes_field(f, 6, *s, strlen(*s));
}

/* sample_type { type: 1 "samples", unit: 2 "count" } */
static void samples_count(FILE *f)
{
	struct msg vt;
	FILE *m = msg_open(&vt);

	key(m, 1, 0), varint(m, 1);
	key(m, 2, 0), varint(m, 2);
	msg_put(f, 1, &vt);
}

/* A gzip file at path, written through gzip(1): the test links no zlib. */
static FILE *gz_open(const char *path)
{
	char cmd[1200];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "gzip -1 > '%s'", path);
	f = popen(cmd, "w");
	cr_assert(f);
	return f;
}

static void gz_close(FILE *f)
{
	cr_assert_eq(pclose(f), 0);
}

static off_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}

static void assert_one_line(const char *err)
{
	cr_assert(*err && strchr(err, '\n') == err + strlen(err) - 1, "not one line: %s", err);
}

/* ---- item: memory amplification ---- */

/* 61 KB of gzip: 30 million empty Samples (`0x12 0x00`), 3.6 GB of RSS before. */
Test(hostile_recordings, empty_samples_are_refused_before_unpacking, .timeout = 60)
{
	const char *dir = temp_dir();
	char *rec = temp_path(dir, "empty.pb.gz");
	static const char *const strs[] = { "", "samples", "count", NULL };
	FILE *f = gz_open(rec);
	struct measured m;

	string_table(f, strs);
	samples_count(f);
	for (long i = 0; i < 30000000; i++)
		fputs("\x12", f), fputc(0, f);
	gz_close(f);
	cr_assert_lt(size_of(rec), 512 * 1024, "%lld bytes", (long long)size_of(rec));
	run_measured((const char *const[]){ PYEBPF, "report", rec, NULL }, 30, &m);
	cr_assert_eq(m.status, 1, "%s", m.err);
	cr_assert(strstr(m.err, "pyebpf: cannot read '") && strstr(m.err, "': decoding it would take ") &&
			  strstr(m.err, "(30000000 entries of 'sample')"),
		  "%s", m.err);
	assert_one_line(m.err);
	cr_assert_lt(m.maxrss_kb, RSS_LIMIT_KB, "peak RSS %ld kB", m.maxrss_kb);
	cr_log_info("empty samples: refused in %.2f s, peak RSS %ld kB\n", m.seconds, m.maxrss_kb);
	free(m.err);
	free(rec);
}

/* 5 KB of gzip: one sample 5,000,000 frames deep (a 929 MB SVG before). */
Test(hostile_recordings, deep_stack_is_cut_to_its_leaf_end, .timeout = 60)
{
	const char *dir = temp_dir();
	char *rec = temp_path(dir, "deep.pb.gz"), *svg = temp_path(dir, "deep.svg"),
	     *folded = temp_path(dir, "deep.folded");
	static const char *const strs[] = { "", "samples", "count", "f", "comm", "deep", NULL };
	FILE *f = gz_open(rec);
	struct msg fn, loc, line, sample, ids, val, label;
	struct measured m;
	FILE *x;

	string_table(f, strs);
	samples_count(f);
	x = msg_open(&fn); /* function { id 1, name "f" } */
	key(x, 1, 0), varint(x, 1);
	key(x, 2, 0), varint(x, 3);
	msg_put(f, 5, &fn);
	x = msg_open(&loc); /* location { id 1, line { function_id 1, line 7 } } */
	key(x, 1, 0), varint(x, 1);
	FILE *y = msg_open(&line);
	key(y, 1, 0), varint(y, 1);
	key(y, 2, 0), varint(y, 7);
	msg_put(x, 4, &line);
	msg_put(f, 4, &loc);
	x = msg_open(&sample); /* sample { location_id [1 x 5e6], value [1], label comm=deep } */
	y = msg_open(&ids);
	for (int i = 0; i < 5000000; i++)
		fputc(1, y);
	msg_put(x, 1, &ids);
	y = msg_open(&val);
	varint(y, 1);
	msg_put(x, 2, &val);
	y = msg_open(&label);
	key(y, 1, 0), varint(y, 4);
	key(y, 2, 0), varint(y, 5);
	msg_put(x, 3, &label);
	msg_put(f, 2, &sample);
	gz_close(f);
	cr_assert_lt(size_of(rec), 64 * 1024);

	run_measured((const char *const[]){ PYEBPF, "report", rec, "-o", svg, NULL }, 30, &m);
	cr_assert_eq(m.status, 0, "%s", m.err);
	cr_assert_lt(m.maxrss_kb, RSS_LIMIT_KB, "peak RSS %ld kB", m.maxrss_kb);
	cr_assert_lt(size_of(svg), 4 << 20, "an SVG of %lld bytes", (long long)size_of(svg));
	cr_log_info("deep stack: SVG of %lld bytes in %.2f s, peak RSS %ld kB\n", (long long)size_of(svg), m.seconds,
		    m.maxrss_kb);
	free(m.err);

	run_measured((const char *const[]){ PYEBPF, "report", rec, "-o", folded, NULL }, 30, &m);
	cr_assert_eq(m.status, 0, "%s", m.err);
	char *text = slurp(folded);
	/* The root end goes under the mark: 4096 frames in all, then the count. */
	cr_assert(!strncmp(text, "deep;[truncated];f;f;", 21), "%.80s", text);
	cr_assert_eq(occurrences(text, ";f"), 4095);
	cr_assert(strstr(text, ";f 1\n"), "%.80s", text + strlen(text) - 40);
	free(text);
	free(m.err);
	free(rec);
	free(svg);
	free(folded);
}

/* A sparse 2 GiB file: read for 9.4 s before it was refused. */
Test(hostile_recordings, huge_file_is_refused_by_its_size, .timeout = 30)
{
	const char *dir = temp_dir();
	char *rec = temp_path(dir, "sparse.pb.gz");
	int fd = open(rec, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct measured m;

	cr_assert(fd >= 0);
	cr_assert_eq(ftruncate(fd, 2LL << 30), 0);
	close(fd);
	run_measured((const char *const[]){ PYEBPF, "report", rec, NULL }, 20, &m);
	cr_assert_eq(m.status, 1);
	cr_assert(strstr(m.err, "': larger than 256 MiB\n"), "%s", m.err);
	assert_one_line(m.err);
	cr_assert_lt(m.seconds, 1.0, "refused after %.2f s", m.seconds);
	cr_assert_lt(m.maxrss_kb, 64 * 1024);
	free(m.err);
	unlink(rec);
	free(rec);
}

/*
 * Just under the decoding budget, as many distinct samples as it allows
 * (each with its own pid label, so none merge): read and drawn within the
 * bound; a little more is refused.
 */
static void labelled_samples(const char *path, long n)
{
	static const char *const strs[] = { "", "samples", "count", "pid", NULL };
	FILE *f = gz_open(path);

	string_table(f, strs);
	samples_count(f);
	for (long i = 0; i < n; i++) {
		struct msg s, v, l;
		FILE *x = msg_open(&s), *y = msg_open(&v);

		varint(y, 1);
		msg_put(x, 2, &v);
		y = msg_open(&l);
		key(y, 1, 0), varint(y, 3);
		key(y, 3, 0), varint(y, (uint64_t)i);
		msg_put(x, 3, &l);
		msg_put(f, 2, &s);
	}
	gz_close(f);
}

Test(hostile_recordings, samples_up_to_the_budget_stay_under_512_mb, .timeout = 90)
{
	const char *dir = temp_dir();
	char *ok = temp_path(dir, "ok.pb.gz"), *over = temp_path(dir, "over.pb.gz"), *out = temp_path(dir, "o.pb.gz");
	struct measured m;

	labelled_samples(ok, 450000);
	labelled_samples(over, 600000);
	/* Written as pprof: of the writers, the one that takes the most. */
	run_measured((const char *const[]){ PYEBPF, "report", ok, "-o", out, NULL }, 60, &m);
	cr_assert_eq(m.status, 0, "%s", m.err);
	cr_assert_lt(m.maxrss_kb, RSS_LIMIT_KB, "peak RSS %ld kB", m.maxrss_kb);
	cr_log_info("450,000 samples: pprof in %.2f s, peak RSS %ld kB\n", m.seconds, m.maxrss_kb);
	free(m.err);
	run_measured((const char *const[]){ PYEBPF, "report", over, NULL }, 60, &m);
	cr_assert_eq(m.status, 1);
	cr_assert(strstr(m.err, "decoding it would take "), "%s", m.err);
	cr_assert_lt(m.maxrss_kb, RSS_LIMIT_KB, "peak RSS %ld kB", m.maxrss_kb);
	free(m.err);
	free(ok);
	free(over);
	free(out);
}

/* ---- item: names planted beside continuous mode's files ---- */

static bool exists_in(const char *dir, const char *name)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* Interval files of dir not in `skip`; returns how many. */
static int ours_in(const char *dir, const char *const *skip, int nskip)
{
	char cmd[1200];
	int n = 0;
	FILE *ls;
	char line[256];

	snprintf(cmd, sizeof(cmd), "ls '%s'", dir);
	ls = popen(cmd, "r");
	cr_assert(ls);
	while (fgets(line, sizeof(line), ls)) {
		bool skipped = false;

		line[strcspn(line, "\n")] = 0;
		for (int i = 0; i < nskip; i++)
			skipped |= !strcmp(line, skip[i]);
		n += !skipped && !strncmp(line, "pyebpf-2", 8);
	}
	pclose(ls);
	return n;
}

/* Three files named as intervals of 2199 in a writable directory: --keep 3
 * deleted every interval pyebpf wrote ("wrote 4 interval files", 0 on
 * disk) and kept them. */
Test(hostile_recordings, planted_names_never_make_pruning_delete_ours, .timeout = 60)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "out"), *err = temp_path(dir, "err.txt");
	const char *junk[] = { "pyebpf-21991231T000001.000Z-000001.pb.gz", "pyebpf-21991231T000002.000Z-000002.pb.gz",
			       "pyebpf-21991231T000003.000Z-000003.pb.gz" };

	cr_assert_eq(mkdir(out, 0755), 0);
	for (int i = 0; i < 3; i++) {
		char path[1024];

		snprintf(path, sizeof(path), "%s/%s", out, junk[i]);
		FILE *f = fopen(path, "w");
		cr_assert(f);
		fputs("junk", f);
		fclose(f);
	}
	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "-a", "-F", "19", "--continuous", out,
							 "--interval", "1s", "--keep", "3", NULL },
				  err);
	wait_for_text(err, SAMPLING, 30);
	sleep_s(4.5);
	kill(rec, SIGTERM);
	cr_assert_eq(wait_exit(rec, 30), 0);
	char *text = slurp(err);
	/* The last line counts the files ("wrote N interval files to DIR");
	 * each interval's own line names its file. */
	int written = -1;
	for (const char *w = strstr(text, "pyebpf: wrote "); w; w = strstr(w + 1, "pyebpf: wrote "))
		if (sscanf(w, "pyebpf: wrote %d interval files", &written) == 1)
			break;
	cr_assert_geq(written, 0, "no file count: %s", text);
	cr_assert_geq(written, 4, "%s", text);
	cr_assert_eq(ours_in(out, junk, 3), 3, "--keep 3 keeps 3 of pyebpf's files: %s", text);
	for (int i = 0; i < 3; i++)
		cr_assert(exists_in(out, junk[i]), "%s was deleted", junk[i]);
	cr_assert_eq(occurrences(text, "pyebpf: deleted "), written - 3, "%s", text);
	cr_assert_eq(occurrences(text, "have an interval file's name but are not pyebpf's"), 1, "%s", text);
	free(text);
	free(out);
	free(err);
}

/* Every interval failed to write: "wrote 0 interval files (4 could not be
 * written)" and exit 0 before. */
Test(hostile_recordings, continuous_mode_that_wrote_nothing_fails, .timeout = 60)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "out"), *moved = temp_path(dir, "moved"), *err = temp_path(dir, "err.txt");

	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "-a", "-F", "19", "--continuous", out,
							 "--interval", "1s", NULL },
				  err);
	wait_for_text(err, SAMPLING, 30);
	/* The directory becomes a file: every write fails. */
	cr_assert_eq(rename(out, moved), 0);
	FILE *f = fopen(out, "w");
	cr_assert(f);
	fclose(f);
	sleep_s(2.5);
	kill(rec, SIGTERM);
	cr_assert_eq(wait_exit(rec, 30), 1);
	char *text = slurp(err);
	cr_assert(strstr(text, "pyebpf: wrote 0 interval files to "), "%s", text);
	cr_assert(strstr(text, " could not be written)\n"), "%s", text);
	free(text);
	free(out);
	free(moved);
	free(err);
}

/* ---- item: outputs over inputs, diffs of different kinds ---- */

/* A small recording: `n` samples of one stack, CPU or wall-clock time. */
static void tiny_recording(const char *path, int n, bool wall)
{
	static const char *const strs[] = { "", "samples", "count", "f", "comm", "app", "wall", "nanoseconds", NULL };
	FILE *f = gz_open(path);
	struct msg vt, fn, loc, line, s, v, l;
	FILE *x, *y;

	string_table(f, strs);
	samples_count(f);
	if (wall) { /* sample_type { wall, nanoseconds } */
		x = msg_open(&vt);
		key(x, 1, 0), varint(x, 6);
		key(x, 2, 0), varint(x, 7);
		msg_put(f, 1, &vt);
	}
	x = msg_open(&fn);
	key(x, 1, 0), varint(x, 1);
	key(x, 2, 0), varint(x, 3);
	msg_put(f, 5, &fn);
	x = msg_open(&loc);
	key(x, 1, 0), varint(x, 1);
	y = msg_open(&line);
	key(y, 1, 0), varint(y, 1);
	msg_put(x, 4, &line);
	msg_put(f, 4, &loc);
	x = msg_open(&s);
	key(x, 1, 0), varint(x, 1); /* location_id 1 */
	y = msg_open(&v);
	varint(y, (uint64_t)n);
	if (wall)
		varint(y, (uint64_t)n * 10000000);
	msg_put(x, 2, &v);
	y = msg_open(&l);
	key(y, 1, 0), varint(y, 4);
	key(y, 2, 0), varint(y, 5);
	msg_put(x, 3, &l);
	msg_put(f, 2, &s);
	gz_close(f);
}

/* `report DIR -o DIR/pyebpf-<interval>` replaced one of its inputs with the merge. */
Test(hostile_recordings, output_over_an_input_is_refused, .timeout = 30)
{
	const char *dir = temp_dir();
	char *a = temp_path(dir, "pyebpf-20261101T000000.000Z-000000.pb.gz"),
	     *b = temp_path(dir, "pyebpf-20261101T000100.000Z-000001.pb.gz"), *link = temp_path(dir, "link.pb.gz");
	struct run_result r;
	struct stat before, after;

	tiny_recording(a, 3, false);
	tiny_recording(b, 4, false);
	cr_assert_eq(symlink(b, link), 0);
	cr_assert_eq(stat(b, &before), 0);
	const char *const outs[] = { a, b, link };
	for (int i = 0; i < 3; i++) {
		run((const char *const[]){ PYEBPF, "report", dir, "-o", outs[i], NULL }, 30, &r);
		cr_assert_eq(r.status, 1, "%s", r.err);
		cr_assert(strstr(r.err, "', one of the recordings read\n"), "%s", r.err);
		assert_one_line(r.err);
		run_result_free(&r);
	}
	/* One file, read and written as itself. */
	run((const char *const[]){ PYEBPF, "report", a, "-o", a, NULL }, 30, &r);
	cr_assert_eq(r.status, 1, "%s", r.err);
	run_result_free(&r);
	/* As a base of a diff too. */
	run((const char *const[]){ PYEBPF, "report", a, "--diff-base", b, "-o", b, "--format", "folded", NULL }, 30,
	    &r);
	cr_assert_eq(r.status, 1, "%s", r.err);
	run_result_free(&r);
	cr_assert_eq(stat(b, &after), 0);
	cr_assert(before.st_ino == after.st_ino && before.st_size == after.st_size, "an input was replaced");
	cr_assert_eq(dot_files(dir), 0);
	/* A new file beside them is written as before. */
	char *out = temp_path(dir, "merged.pb.gz");
	run((const char *const[]){ PYEBPF, "report", dir, "-o", out, NULL }, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	free(out);
	free(a);
	free(b);
	free(link);
}

/* A CPU recording diffed against a wall-clock one compared nothing, silently. */
Test(hostile_recordings, diff_of_cpu_against_wall_is_refused, .timeout = 30)
{
	const char *dir = temp_dir();
	char *cpu = temp_path(dir, "cpu.pb.gz"), *wall = temp_path(dir, "wall.pb.gz");
	struct run_result r;

	tiny_recording(cpu, 5, false);
	tiny_recording(wall, 5, true);
	run((const char *const[]){ PYEBPF, "report", cpu, "--diff-base", wall, NULL }, 30, &r);
	cr_assert_eq(r.status, 1, "%s", r.err);
	char want[2048];
	snprintf(want, sizeof(want),
		 "pyebpf: cannot diff '%s' against '%s': it records CPU time, the base wall-clock time (--mode wall "
		 "or off-cpu)\n",
		 cpu, wall);
	cr_assert_str_eq(r.err, want);
	cr_assert_str_eq(r.out, "");
	run_result_free(&r);
	/* Each kind against itself is a diff. */
	run((const char *const[]){ PYEBPF, "report", wall, "--diff-base", wall, NULL }, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	free(cpu);
	free(wall);
}

/*
 * The costliest file found within the bounds: 2040 distinct stacks 4096
 * frames deep (the frame bound) and as many labelled samples as the rest of
 * the decoding budget allows, written back as pprof (the costliest writer).
 */
Test(hostile_recordings, deep_distinct_stacks_and_samples_together_stay_under_512_mb, .timeout = 90)
{
	enum {
		STACKS = 2040,
		DEPTH = 4095,
		SAMPLES = 460000
	};
	static const char *const strs[] = { "", "samples", "count", "f", "comm", "x", "pid", NULL };
	const char *dir = temp_dir();
	char *rec = temp_path(dir, "worst.pb.gz"), *out = temp_path(dir, "out.pb.gz");
	FILE *f = gz_open(rec), *x, *y;
	struct msg fn, loc, line, s, v, l, ids;
	struct measured m;

	string_table(f, strs);
	samples_count(f);
	x = msg_open(&fn); /* f in file x: every line a frame of its own */
	key(x, 1, 0), varint(x, 1);
	key(x, 2, 0), varint(x, 3);
	key(x, 4, 0), varint(x, 5);
	msg_put(f, 5, &fn);
	x = msg_open(&loc); /* location 1: 4095 lines */
	key(x, 1, 0), varint(x, 1);
	for (int k = 0; k < DEPTH; k++) {
		y = msg_open(&line);
		key(y, 1, 0), varint(y, 1);
		key(y, 2, 0), varint(y, (uint64_t)k + 1);
		msg_put(x, 4, &line);
	}
	msg_put(f, 4, &loc);
	for (int i = 0; i < STACKS; i++) { /* a leaf of its own for each stack */
		x = msg_open(&loc);
		key(x, 1, 0), varint(x, (uint64_t)i + 2);
		y = msg_open(&line);
		key(y, 1, 0), varint(y, 1);
		key(y, 2, 0), varint(y, 100000 + (uint64_t)i);
		msg_put(x, 4, &line);
		msg_put(f, 4, &loc);
	}
	for (int i = 0; i < STACKS + SAMPLES; i++) {
		x = msg_open(&s);
		if (i < STACKS) {
			y = msg_open(&ids);
			varint(y, (uint64_t)i + 2);
			varint(y, 1);
			msg_put(x, 1, &ids);
		}
		y = msg_open(&v);
		varint(y, 1);
		msg_put(x, 2, &v);
		y = msg_open(&l);
		key(y, 1, 0), varint(y, i < STACKS ? 4 : 6);
		key(y, i < STACKS ? 2 : 3, 0), varint(y, i < STACKS ? 5 : (uint64_t)i);
		msg_put(x, 3, &l);
		msg_put(f, 2, &s);
	}
	gz_close(f);
	run_measured((const char *const[]){ PYEBPF, "report", rec, "-o", out, NULL }, 60, &m);
	cr_assert_eq(m.status, 0, "%s", m.err);
	cr_assert_lt(m.maxrss_kb, RSS_LIMIT_KB, "peak RSS %ld kB", m.maxrss_kb);
	cr_log_info("deep stacks and samples: pprof in %.2f s, peak RSS %ld kB\n", m.seconds, m.maxrss_kb);
	free(m.err);
	free(rec);
	free(out);
}
