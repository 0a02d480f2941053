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
	char *rec = recording(dir), *out = temp_path(dir, "x.folded"), *stale = temp_path(dir, ".x.folded.pyebpf-Ab12Cd");
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
