/*
 * Hostile and clumsy use: outputs that are not regular files, files that
 * belong to others, directories shared with files pyebpf did not write.
 * Each of these damaged the system or lost data before.
 */
#include "integ.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A small recording to convert: `report` writes outputs without BPF. */
static char *recording(const char *dir)
{
	char *rec = temp_path(dir, "rec.pb.gz");
	const char *argv[] = { PYEBPF, "record", "-o", rec, "--", BUSY, "0.5", NULL };
	struct run_result r;

	run(argv, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	return rec;
}

static mode_t kind_of(const char *path)
{
	struct stat st;

	cr_assert_eq(lstat(path, &st), 0, "%s: %s", path, strerror(errno));
	return st.st_mode & S_IFMT;
}

Test(hostile, device_outputs_are_written_into_not_replaced, .timeout = 60)
{
	const char *dir = temp_dir();
	char *rec = recording(dir);
	const char *to_null[] = { PYEBPF, "record", "-d", "0.5", "-o", "/dev/null", NULL };
	const char *to_stdout[] = { PYEBPF, "report", rec, "-o", "/dev/stdout", NULL };
	const char *to_dash[] = { PYEBPF, "report", rec, "-o", "-", NULL };
	const char *to_full[] = { PYEBPF, "report", rec, "-o", "/dev/full", NULL };
	struct run_result r;

	run(to_null, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(kind_of("/dev/null"), S_IFCHR, "/dev/null is no longer a device");
	run_result_free(&r);

	run(to_stdout, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "busy;"), "folded stacks on stdout: %s", r.out);
	run_result_free(&r);

	run(to_dash, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "busy;"), "folded stacks on stdout: %s", r.out);
	cr_assert_neq(access("-", F_OK), 0, "a file named '-' was written");
	run_result_free(&r);

	/* A device that fails every write: one error line, non-zero, the device intact. */
	run(to_full, 30, &r);
	cr_assert_eq(r.status, 1);
	cr_assert_str_eq(r.err, "pyebpf: cannot write '/dev/full': No space left on device\n");
	cr_assert_eq(kind_of("/dev/full"), S_IFCHR);
	run_result_free(&r);
	cr_assert_eq(dot_files(dir), 0);
}

Test(hostile, fifo_output_is_written_into, .timeout = 60)
{
	const char *dir = temp_dir();
	char *rec = recording(dir), *fifo = temp_path(dir, "out.fifo"), *copy = temp_path(dir, "copy.folded");
	char cmd[PATH_MAX * 3];
	const char *argv[] = { PYEBPF, "report", rec, "-o", fifo, NULL };
	struct run_result r;
	struct folded f;

	cr_assert_eq(mkfifo(fifo, 0600), 0);
	snprintf(cmd, sizeof(cmd), "cat %s > %s", fifo, copy);
	pid_t reader = spawn((const char *const[]){ "sh", "-c", cmd, NULL });
	run(argv, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(wait_exit(reader, 10), 0);
	cr_assert_eq(kind_of(fifo), S_IFIFO);
	folded_load(copy, &f);
	cr_assert_gt(folded_comm_total(&f, "busy"), 10);
	folded_free(&f);
	run_result_free(&r);
}

Test(hostile, symlink_is_written_through, .timeout = 60)
{
	const char *dir = temp_dir();
	char *rec = recording(dir), *target = temp_path(dir, "target.folded"), *link = temp_path(dir, "link.folded");
	const char *argv[] = { PYEBPF, "report", rec, "-o", link, NULL };
	char *dangling = temp_path(dir, "dangling.folded");
	const char *argv2[] = { PYEBPF, "report", rec, "-o", dangling, NULL };
	struct run_result r;
	struct folded f;
	FILE *t = fopen(target, "w");

	fputs("old contents\n", t);
	fclose(t);
	cr_assert_eq(symlink("target.folded", link), 0);
	run(argv, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(kind_of(link), S_IFLNK, "the link was replaced by a file");
	folded_load(target, &f);
	cr_assert_gt(folded_comm_total(&f, "busy"), 10);
	folded_free(&f);
	run_result_free(&r);

	cr_assert_eq(symlink("missing/nothing.folded", dangling), 0);
	run(argv2, 30, &r);
	cr_assert_eq(r.status, 1);
	cr_assert(strstr(r.err, "it is a symbolic link to a missing file"), "%s", r.err);
	cr_assert_eq(kind_of(dangling), S_IFLNK);
	run_result_free(&r);
}

Test(hostile, replaced_file_keeps_owner_and_mode_and_umask_is_respected, .timeout = 60)
{
	const char *dir = temp_dir();
	char *rec = recording(dir), *theirs = temp_path(dir, "theirs.folded"), *linked = temp_path(dir, "a.folded");
	char *other = temp_path(dir, "b.folded"), *fresh = temp_path(dir, "fresh.folded");
	const char *over[] = { PYEBPF, "report", rec, "-o", theirs, NULL };
	const char *hard[] = { PYEBPF, "report", rec, "-o", linked, NULL };
	char cmd[PATH_MAX + 64];
	struct run_result r;
	struct stat st;
	FILE *t = fopen(theirs, "w");

	fclose(t);
	cr_assert_eq(chown(theirs, 65534, 65534), 0);
	cr_assert_eq(chmod(theirs, 0600), 0);
	run(over, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(stat(theirs, &st), 0);
	cr_assert_eq(st.st_uid, 65534);
	cr_assert_eq(st.st_gid, 65534);
	cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
	cr_assert_gt(st.st_size, 0);
	run_result_free(&r);

	/* A file with another hard link: replacing it would cut the link. */
	t = fopen(linked, "w");
	fputs("kept\n", t);
	fclose(t);
	cr_assert_eq(link(linked, other), 0);
	run(hard, 30, &r);
	cr_assert_eq(r.status, 1);
	cr_assert(strstr(r.err, "it has 2 hard links, which replacing it would cut"), "%s", r.err);
	run_result_free(&r);

	/* A new file: 0666 less the umask, as any tool makes it. */
	snprintf(cmd, sizeof(cmd), "umask 027 && " PYEBPF " report %s -o %s", rec, fresh);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(stat(fresh, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0640, "mode %o", st.st_mode & 07777);
	cr_assert_eq(dot_files(dir), 0);
}

/* A pyebpf killed while writing leaves its temporary file; the next write removes it. */
Test(hostile, stale_temporary_file_is_removed_by_the_next_run, .timeout = 60)
{
	const char *dir = temp_dir();
	char *rec = recording(dir), *out = temp_path(dir, "x.folded"),
	     *stale = temp_path(dir, ".x.folded.pyebpf-Ab12Cd");
	char *foreign = temp_path(dir, ".x.folded.keepme");
	const char *argv[] = { PYEBPF, "report", rec, "-o", out, NULL };
	struct run_result r;
	FILE *t = fopen(stale, "w");

	fclose(t);
	t = fopen(foreign, "w");
	fclose(t);
	run(argv, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_neq(access(stale, F_OK), 0, "the stale temporary file is still there");
	cr_assert_eq(access(foreign, F_OK), 0, "a file pyebpf did not write was deleted");
	run_result_free(&r);
}

#include "../pythons.h"

/* An interpreter without co_qualname (<= 3.10): pyebpf reads its sources. */
static bool old_python(struct python *py)
{
	struct python all[32];
	int n = find_pythons(all, 32);

	for (int i = 0; i < n; i++)
		if (all[i].major == 3 && all[i].minor <= 10 && all[i].lib[0]) {
			*py = all[i];
			return true;
		}
	return false;
}

/* Code "from" a FIFO and from /dev/stdin: pyebpf must not wait on either. */
Test(hostile, code_named_by_a_fifo_or_stdin_does_not_block, .timeout = 90)
{
	const char *dir = temp_dir();
	char *fifo = temp_path(dir, "src.fifo"), *out = temp_path(dir, "f.folded"), want[PATH_MAX + 64];
	char cmd[PATH_MAX * 3];
	struct python py;
	struct run_result r;
	struct folded f;

	if (!old_python(&py)) {
		fprintf(stderr, "[SKIP] no pyenv Python 3.6-3.10\n");
		cr_skip_test("no Python <= 3.10");
	}
	run((const char *const[]){ PYEBPF, "record", "-o", out, "--", py.path, "../tests/fixtures/hostile_code.py",
				   "fifo", fifo, "2", NULL },
	    60, &r);
	cr_assert_eq(r.status, 0, "exit %d after %.1f s: %s", r.status, r.seconds, r.err);
	folded_load(out, &f);
	snprintf(want, sizeof(want), "spin (%s:3)", fifo);
	cr_assert_gt(count_all(&f, want, NULL) * 2, f.total, "%s in %llu of %llu", want,
		     (unsigned long long)count_all(&f, want, NULL), (unsigned long long)f.total);
	folded_free(&f);
	run_result_free(&r);

	/* /dev/stdin through /proc/PID/root is pyebpf's own stdin: here a FIFO
	 * that stays open (O_RDWR) and never has data. */
	char *stdin_fifo = temp_path(dir, "stdin.fifo");
	cr_assert_eq(mkfifo(stdin_fifo, 0600), 0);
	snprintf(cmd, sizeof(cmd),
		 "exec 3<>%s; exec " PYEBPF
		 " record -o %s -- %s ../tests/fixtures/hostile_code.py name /dev/stdin 2 <&3",
		 stdin_fifo, out, py.path);
	run((const char *const[]){ "sh", "-c", cmd, NULL }, 60, &r);
	cr_assert_lt(r.seconds, 30, "pyebpf waited on its stdin: %.1f s", r.seconds);
	folded_load(out, &f);
	cr_assert_gt(count_all(&f, "spin (/dev/stdin:3)", NULL) * 2, f.total);
	folded_free(&f);
	run_result_free(&r);
}

/*
 * A "container" (its own root by chroot, nobody's uid) whose code is named
 * /app/x.py, an absolute symlink to a path that exists only on the host, in
 * a file root alone may read. Its class name must never reach the profile.
 */
Test(hostile, container_symlink_never_reads_a_host_file, .timeout = 90)
{
	const char *dir = temp_dir();
	char root[1024], secret[1024], cmd[PATH_MAX * 16], pyroot[1024], *out = temp_path(dir, "c.folded");
	struct python py;
	struct run_result r;
	struct folded f;
	FILE *s;

	if (!old_python(&py) || system("command -v unshare chroot >/dev/null 2>&1")) {
		fprintf(stderr, "[SKIP] needs a pyenv Python 3.6-3.10, unshare and chroot\n");
		cr_skip_test("no Python <= 3.10 or no unshare");
	}
	/* The host file: line 3 is inside a class only it names. */
	snprintf(secret, sizeof(secret), "%s/host-secret.py", dir);
	s = fopen(secret, "w");
	fputs("class HostOnlySecretClass:\n    x = 1\n    def spin(self):\n        pass\n", s);
	fclose(s);
	chmod(secret, 0600);
	chmod(dir, 0755);
	snprintf(root, sizeof(root), "%s/root", dir);
	/* The interpreter's tree: .../versions/3.x.y (bin/python -> ../..). */
	snprintf(pyroot, sizeof(pyroot), "%s", py.path);
	*strrchr(pyroot, '/') = '\0';
	*strrchr(pyroot, '/') = '\0';
	snprintf(cmd, sizeof(cmd),
		 "set -e; mkdir -p %s/usr %s/app %s/tmp %s%s %s/proc; ln -s usr/lib %s/lib; ln -s usr/lib64 %s/lib64; "
		 "ln -s usr/bin %s/bin; ln -s %s %s/app/x.py; cp ../tests/fixtures/hostile_code.py %s/tmp/",
		 root, root, root, root, pyroot, root, root, root, root, secret, root, root);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(cmd, sizeof(cmd),
		 "exec unshare --mount --fork sh -c 'mount --bind /usr %s/usr && mount --bind %s %s%s && "
		 "exec chroot --userspec=65534:65534 %s %s /tmp/hostile_code.py name /app/x.py 8'",
		 root, pyroot, root, pyroot, root, py.path);
	pid_t ctr = spawn((const char *const[]){ "sh", "-c", cmd, NULL });
	sleep_s(1.5);
	run((const char *const[]){ PYEBPF, "record", "-a", "-d", "2", "-o", out, NULL }, 60, &r);
	kill_wait(ctr);
	cr_assert_eq(r.status, 0, "%s", r.err);
	folded_load(out, &f);
	cr_assert_gt(count_all(&f, "spin (/app/x.py:3)", NULL), 20, "the container's code was not sampled");
	cr_assert_eq(count_all(&f, "HostOnlySecretClass", NULL), 0, "a host file's contents reached the profile");
	folded_free(&f);
	run_result_free(&r);
}

/* Above the cap: refused. At the cap, with every CPU busy: -d and SIGTERM
 * still end the recording promptly (the drain is bounded), nothing hangs. */
Test(hostile, high_rates_are_capped_and_stop_promptly, .timeout = 90)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "h.folded");
	pid_t b1 = spawn((const char *const[]){ BUSY, "30", NULL }),
	      b2 = spawn((const char *const[]){ BUSY, "30", NULL });
	struct run_result r;

	run((const char *const[]){ PYEBPF, "record", "-a", "-F", "100000", "-d", "2", "-o", out, NULL }, 30, &r);
	cr_assert_eq(r.status, 2);
	cr_assert_str_eq(r.err, "pyebpf: invalid frequency '100000' for -F (1 to 10000 Hz: each sample costs the "
				"profiled CPU 3-30 us)\n");
	run_result_free(&r);

	run((const char *const[]){ PYEBPF, "record", "-a", "-F", "10000", "-d", "2", "-o", out, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_lt(r.seconds, 15, "-d 2 took %.1f s", r.seconds);
	run_result_free(&r);

	char *err = temp_path(dir, "err");
	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "-a", "-F", "10000", "-o", out, NULL }, err);
	wait_for_text(err, SAMPLING, 30);
	sleep_s(2);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kill(rec, SIGTERM);
	cr_assert_eq(wait_exit(rec, 30), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	cr_assert_lt(took, 10, "SIGTERM to exit took %.1f s", took);
	kill_wait(b1);
	kill_wait(b2);
}

/* The command's end is reported and passed on; it is never left running. */
Test(hostile, command_status_and_no_orphans, .timeout = 90)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "c.folded"), *err = temp_path(dir, "err"), *pidfile = temp_path(dir, "pid");
	char cmd[PATH_MAX + 128];
	struct run_result r;

	run((const char *const[]){ PYEBPF, "record", "-o", out, "--", "false", NULL }, 30, &r);
	cr_assert_eq(r.status, 1, "%s", r.err);
	cr_assert(strstr(r.err, "pyebpf: 'false' exited with status 1\n"), "%s", r.err);
	cr_assert_eq(access(out, F_OK), 0, "the recording was not written");
	run_result_free(&r);
	unlink(out);

	run((const char *const[]){ PYEBPF, "record", "-o", out, "--", "sh", "-c", "kill -SEGV $$", NULL }, 30, &r);
	cr_assert_eq(r.status, 128 + SIGSEGV, "%s", r.err);
	cr_assert(strstr(r.err, "pyebpf: 'sh' was killed by signal 11 (Segmentation fault)"), "%s", r.err);
	cr_assert_eq(access(out, F_OK), 0, "the recording was not written");
	run_result_free(&r);

	/* A command that ignores SIGTERM, and pyebpf stopped by SIGTERM alone. */
	snprintf(cmd, sizeof(cmd), "trap '' TERM INT; echo $$ > %s; exec " BUSY " 60", pidfile);
	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "-o", out, "--", "sh", "-c", cmd, NULL },
				  err);
	wait_for_text(err, SAMPLING, 30);
	sleep_s(1);
	FILE *f = fopen(pidfile, "r");
	int child = 0;
	cr_assert(f && fscanf(f, "%d", &child) == 1);
	fclose(f);
	kill(rec, SIGTERM);
	cr_assert_eq(wait_exit(rec, 30), 0);
	cr_assert_neq(kill(child, 0), 0, "the command (pid %d) was left running", child);
	wait_for_text(err, "pyebpf: stopped 'sh' with SIGKILL (it ignored SIGTERM) when the recording ended", 1);
	cr_assert_eq(dot_files(dir), 0);
}

/* SIGHUP (the terminal went away) stops a one-shot recording and writes it. */
Test(hostile, sighup_writes_a_one_shot_recording, .timeout = 60)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "h.folded"), *err = temp_path(dir, "err");
	pid_t busy = spawn((const char *const[]){ BUSY, "20", NULL });
	pid_t rec = spawn_capture((const char *const[]){ PYEBPF, "record", "-a", "-o", out, NULL }, err);
	struct folded f;

	wait_for_text(err, SAMPLING, 30);
	sleep_s(1);
	kill(rec, SIGHUP);
	cr_assert_eq(wait_exit(rec, 30), 0);
	kill_wait(busy);
	folded_load(out, &f);
	cr_assert_gt(folded_comm_total(&f, "busy"), 20);
	folded_free(&f);
	cr_assert_eq(dot_files(dir), 0);
}

/* A file name with CR and ESC must not rewrite the terminal: report --top
 * and folded output show them escaped. */
Test(hostile, control_characters_in_names_are_escaped, .timeout = 60)
{
	const char *dir = temp_dir();
	char *pb = temp_path(dir, "t.pb.gz"), *folded = temp_path(dir, "t.folded");
	const char *name = "evil.py\r\x1b[2K  99.9%  99.9%  totally_innocent";
	struct run_result r;

	run((const char *const[]){ PYEBPF, "record", "-o", pb, "--", "/usr/bin/python3",
				   "../tests/fixtures/hostile_code.py", "name", name, "1.5", NULL },
	    60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "report", pb, "--top", "5", NULL }, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_null(strchr(r.out, '\x1b'), "ESC reached the terminal: %s", r.out);
	cr_assert_null(strchr(r.out, '\r'), "CR reached the terminal: %s", r.out);
	cr_assert(strstr(r.out, "spin (evil.py\\x0d\\x1b[2K  99.9%  99.9%  totally_innocent:1)"), "%s", r.out);
	run_result_free(&r);
	run((const char *const[]){ PYEBPF, "report", pb, "-o", folded, NULL }, 30, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	struct folded f;
	folded_load(folded, &f); /* every line "STACK COUNT": no line broken */
	cr_assert_gt(count_all(&f, "spin (evil.py\\x0d\\x1b[2K", NULL), 50);
	folded_free(&f);
}

/* A frame chain made circular (f_back rewritten with ctypes) is cut and
 * marked once, not reported as a 1024-deep stack of alternating frames. */
Test(hostile, circular_frame_chain_is_marked, .timeout = 60)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "l.folded");
	struct python py;
	struct run_result r;
	struct folded f;

	if (!old_python(&py)) {
		fprintf(stderr, "[SKIP] no pyenv Python 3.6-3.10\n");
		cr_skip_test("no Python <= 3.10");
	}
	run((const char *const[]){ PYEBPF, "record", "-o", out, "--", py.path, "../tests/fixtures/hostile_code.py",
				   "loop", "-", "2", NULL },
	    60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, "Python frame chains that looped back into themselves"), "%s", r.err);
	folded_load(out, &f);
	uint64_t looped = count_all(&f, "[frame loop];", "inner (");
	cr_assert_gt(looped * 2, f.total, "[frame loop] in %llu of %llu", (unsigned long long)looped,
		     (unsigned long long)f.total);
	for (size_t i = 0; i < f.n; i++)
		cr_assert_leq(occurrences(f.lines[i].stack, "inner ("), 3, "%s", f.lines[i].stack);
	folded_free(&f);
	run_result_free(&r);
}

/* One process that execs a shell into Python and Python into itself again
 * is one process and one Python, not two. */
Test(hostile, exec_chain_counts_once, .timeout = 60)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "e.folded"), cmd[1024];
	struct run_result r;

	snprintf(cmd, sizeof(cmd),
		 "exec /usr/bin/python3 -c 'import os; os.execv(\"/usr/bin/python3\", [\"python3\", "
		 "\"../tests/fixtures/hostile_code.py\", \"name\", \"x.py\", \"1\"])'");
	run((const char *const[]){ PYEBPF, "record", "-o", out, "--", "sh", "-c", cmd, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, " from 1 process (1 Python) "), "%s", r.err);
	run_result_free(&r);
}

/* A name longer than pyebpf reads (1024 characters) ends in an ellipsis. */
Test(hostile, long_names_are_marked_cut, .timeout = 60)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "n.folded"), want[1100];
	struct run_result r;
	struct folded f;

	run((const char *const[]){ PYEBPF, "record", "-o", out, "--", "/usr/bin/python3",
				   "../tests/fixtures/hostile_code.py", "long", "-", "1", NULL },
	    60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	memset(want, 'n', 1024);
	snprintf(want + 1024, sizeof(want) - 1024, "\xe2\x80\xa6 (long.py:");
	folded_load(out, &f);
	cr_assert_gt(count_all(&f, want, NULL) * 2, f.total, "no cut name in %llu samples",
		     (unsigned long long)f.total);
	folded_free(&f);
	run_result_free(&r);
}

/* One thread with thread states in two interpreters (3.12, 3.13): each
 * sample shows the interpreter the thread runs in at that moment. Before,
 * 3.12 lost every Python frame once the subinterpreter existed, and gave
 * the main interpreter's later work to the subinterpreter's function. */
Test(hostile, subinterpreter_thread_states, .timeout = 120)
{
	struct python all[32];
	int n = find_pythons(all, 32), tested = 0;

	for (int i = 0; i < n; i++) {
		const char *dir = temp_dir();
		char *out = temp_path(dir, "s.folded");
		struct run_result r;
		struct folded f;

		if (all[i].major != 3 || all[i].minor < 12)
			continue;
		tested++;
		run((const char *const[]){ PYEBPF, "record", "-o", out, "--", all[i].path,
					   "../tests/fixtures/subinterp.py", "1.5", NULL },
		    60, &r);
		cr_assert_eq(r.status, 0, "%s: %s", all[i].path, r.err);
		folded_load(out, &f);
		uint64_t before = count_all(&f, "before (", NULL), sub = count_all(&f, "in_subinterpreter (", NULL);
		uint64_t after = count_all(&f, "after (", NULL);
		cr_log_info("%s: before %llu, in the subinterpreter %llu, after %llu of %llu\n", all[i].path,
			    (unsigned long long)before, (unsigned long long)sub, (unsigned long long)after,
			    (unsigned long long)f.total);
		/* 1.5 s each at 99 Hz: about 148 samples per phase. */
		cr_assert_geq(before, 110, "%s: before() in %llu samples", all[i].path, (unsigned long long)before);
		cr_assert_geq(sub, 110, "%s: in_subinterpreter() in %llu samples", all[i].path,
			      (unsigned long long)sub);
		cr_assert_geq(after, 110, "%s: after() in %llu samples", all[i].path, (unsigned long long)after);
		cr_assert_leq(sub, 180, "%s: the subinterpreter's function got %llu samples", all[i].path,
			      (unsigned long long)sub);
		folded_free(&f);
		run_result_free(&r);
	}
	if (!tested) {
		fprintf(stderr, "[SKIP] no Python 3.12+\n");
		cr_skip_test("no Python 3.12+");
	}
}
