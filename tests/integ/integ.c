#include "integ.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../pythons.h"

double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* A server's start-up is seconds on a loaded machine: a fixed sleep before its first request was a flake. */
void wait_for_port(int port, double limit)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

	for (double waited = 0; waited < limit; waited += 0.05) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		int ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;

		if (fd >= 0)
			close(fd);
		if (ok)
			return;
		sleep_s(0.05);
	}
	cr_assert_fail("nothing listens on 127.0.0.1:%d after %.0f s", port, limit);
}

/* A limit that only catches a hang, stretched by INTEG_TIME_SCALE where the
 * machine is many times slower than the one the limits were set on (the
 * kernel matrix's guests run under TCG: a 2 s recording of a whole 5.10 guest
 * took 30-35 s there). Limits that measure speed are not stretched. */
static double hang_limit(double timeout_s)
{
	const char *s = getenv("INTEG_TIME_SCALE");
	double scale = s ? strtod(s, NULL) : 1;

	return scale >= 1 && scale <= 100 ? timeout_s * scale : timeout_s;
}

char *file_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, len + 1);
	if (len && fread(buf, 1, len, f) != (size_t)len)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

/*
 * The pyebpf processes this test started in the background (a test runs in
 * a process of its own, so the table is the test's). A recorder that exited
 * with an error will write nothing more, and neither will the workload it
 * ran: the waits fail at once with its last stderr line instead of waiting
 * out a timeout of minutes for a workload's output.
 */
static struct recorder {
	pid_t pid;
	char err[PATH_MAX]; /* its stderr, "" when not captured */
} recorders[32];
static int n_recorders;

static bool is_pyebpf(const char *path)
{
	const char *base = strrchr(path, '/');

	return !strcmp(base ? base + 1 : path, "pyebpf");
}

const char *last_line(const char *text)
{
	static char buf[1024];
	size_t len = strlen(text);

	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	size_t start = len;
	while (start && text[start - 1] != '\n')
		start--;
	if (start == len)
		return "(nothing)";
	snprintf(buf, sizeof(buf), "%.*s", (int)(len - start), text + start);
	return buf;
}

void recorders_check(const char *waiting_for)
{
	for (int i = 0; i < n_recorders; i++) {
		struct recorder *r = &recorders[i];
		siginfo_t si = { 0 };

		/* WNOWAIT: the exit is seen, the process stays for wait_exit. */
		if (waitid(P_PID, r->pid, &si, WEXITED | WNOHANG | WNOWAIT) || si.si_pid != r->pid)
			continue;
		if (si.si_code == CLD_EXITED && si.si_status == 0)
			continue; /* a recording that ended: what follows may not need it */
		char *err = r->err[0] ? file_text(r->err) : strdup("");

		cr_log_error("pyebpf (pid %d)'s stderr:\n%s", r->pid, err);
		cr_assert_fail("pyebpf (pid %d) %s %d while waiting for %s: %s", r->pid,
			       si.si_code == CLD_EXITED ? "exited" : "was killed by signal", si.si_status, waiting_for,
			       last_line(err));
	}
}

static void recorder_gone(pid_t pid)
{
	for (int i = 0; i < n_recorders; i++)
		if (recorders[i].pid == pid) {
			recorders[i] = recorders[--n_recorders];
			return;
		}
}

static pid_t start(const char *const argv[], const char *out, const char *err)
{
	pid_t pid = fork();

	cr_assert(pid >= 0);
	if (pid == 0) {
		int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int n = open("/dev/null", O_RDONLY);

		dup2(n, 0);
		dup2(o, 1);
		dup2(e, 2);
		setpgid(0, 0);                    /* a group of its own: the test's signals are its own */
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves nothing running */
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (is_pyebpf(argv[0]) && n_recorders < (int)(sizeof(recorders) / sizeof(recorders[0]))) {
		recorders[n_recorders].pid = pid;
		snprintf(recorders[n_recorders++].err, PATH_MAX, "%s", err ? err : "");
	}
	return pid;
}

pid_t spawn(const char *const argv[])
{
	return start(argv, NULL, NULL);
}

pid_t spawn_capture(const char *const argv[], const char *err_path)
{
	return start(argv, NULL, err_path);
}

int wait_exit(pid_t pid, double timeout_s)
{
	timeout_s = hang_limit(timeout_s);
	double end = mono() + timeout_s;
	int st;

	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid) {
			recorder_gone(pid);
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		if (mono() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			recorder_gone(pid);
			cr_assert_fail("process %d still running after %.0f s", pid, timeout_s);
		}
		sleep_s(0.02);
	}
}

void wait_for_text(const char *path, const char *text, double timeout_s)
{
	timeout_s = hang_limit(timeout_s);
	double end = mono() + timeout_s;

	char what[PATH_MAX + 256];

	snprintf(what, sizeof(what), "'%s' in %s", text, path);
	for (;;) {
		char *s = file_text(path);
		int found = strstr(s, text) != NULL;

		free(s);
		if (found)
			return;
		/* Checked after the text: a recorder's last words may be the text. */
		recorders_check(what);
		cr_assert(mono() < end, "no '%s' in %s after %.0f s", text, path, timeout_s);
		sleep_s(0.02);
	}
}

void kill_wait(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	recorder_gone(pid);
}

void run(const char *const argv[], double timeout_s, struct run_result *r)
{
	char out[] = "/tmp/pyebpf-out-XXXXXX", err[] = "/tmp/pyebpf-err-XXXXXX";
	int fo = mkstemp(out), fe = mkstemp(err);
	double t0 = mono();
	pid_t pid;

	close(fo);
	close(fe);
	pid = start(argv, out, err);
	r->status = wait_exit(pid, timeout_s);
	r->seconds = mono() - t0;
	r->out = file_text(out);
	r->err = file_text(err);
	unlink(out);
	unlink(err);
}

void run_result_free(struct run_result *r)
{
	free(r->out);
	free(r->err);
}

void folded_load(const char *path, struct folded *f)
{
	FILE *in = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, lcap = 0;

	memset(f, 0, sizeof(*f));
	cr_assert(in, "no output file %s", path);
	while (getline(&line, &lcap, in) > 0) {
		char *nl = strchr(line, '\n'), *sp, *end;

		cr_assert(nl, "line without newline: %s", line);
		*nl = '\0';
		sp = strrchr(line, ' ');
		cr_assert(sp && sp != line, "not 'STACK COUNT': %s", line);
		*sp = '\0';
		unsigned long long c = strtoull(sp + 1, &end, 10);
		cr_assert(*end == '\0' && c > 0, "bad count in: %s", line);
		if (f->n == cap) {
			cap = cap ? cap * 2 : 64;
			f->lines = realloc(f->lines, cap * sizeof(*f->lines));
		}
		f->lines[f->n].stack = strdup(line);
		f->lines[f->n++].count = c;
		f->total += c;
	}
	free(line);
	fclose(in);
}

void folded_free(struct folded *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->lines[i].stack);
	free(f->lines);
}

/* The process frame is "comm", or "comm [pid N]" when several processes of
 * one command were recorded. */
static bool of_comm(const char *stack, const char *comm)
{
	size_t n = strlen(comm);

	if (strncmp(stack, comm, n) != 0)
		return false;
	if (!strncmp(stack + n, " [pid ", 6))
		n += strcspn(stack + n, "]") + 1;
	return stack[n] == ';' || stack[n] == '\0';
}

uint64_t folded_comm_total(const struct folded *f, const char *comm)
{
	uint64_t t = 0;

	for (size_t i = 0; i < f->n; i++)
		if (of_comm(f->lines[i].stack, comm))
			t += f->lines[i].count;
	return t;
}

uint64_t folded_count(const struct folded *f, const char *comm, const char *needle)
{
	uint64_t t = 0;

	for (size_t i = 0; i < f->n; i++)
		if (of_comm(f->lines[i].stack, comm) && strstr(f->lines[i].stack, needle))
			t += f->lines[i].count;
	return t;
}

uint64_t count_all(const struct folded *f, const char *a, const char *b)
{
	uint64_t t = 0;

	for (size_t i = 0; i < f->n; i++)
		if (strstr(f->lines[i].stack, a) && (!b || strstr(f->lines[i].stack, b)))
			t += f->lines[i].count;
	return t;
}

int occurrences(const char *s, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

int script_marker(const char *script, const char *name)
{
	FILE *f = fopen(script, "r");
	char line[512], want[64];
	int n = 0;

	snprintf(want, sizeof(want), "# LINE:%s\n", name);
	cr_assert(f, "%s", script);
	while (fgets(line, sizeof(line), f)) {
		n++;
		const char *m = strstr(line, "# LINE:");
		if (m && !strcmp(m, want)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	cr_assert_fail("no marker %s in %s", name, script);
	return 0;
}

const char *script_frame(const char *script, const char *func, const char *mark)
{
	static char buf[4][PATH_MAX + 128];
	static int i;
	char *b = buf[i++ % 4];

	snprintf(b, PATH_MAX + 128, "%s (%s:%d)", func, script, script_marker(script, mark));
	return b;
}

void record_script(const char *const opts[], const char *python, const char *script, const char *const args[],
		   double timeout_s, struct folded *f, struct run_result *r)
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "record.folded"), cmd[1024] = "";
	const char *argv[48] = { PYEBPF, "record", "-F", "999", "-o", out };
	int n = 6;

	for (int i = 0; opts && opts[i] && n < 40; i++)
		argv[n++] = opts[i];
	argv[n++] = "--";
	argv[n++] = python;
	argv[n++] = script;
	for (int i = 0; args[i] && n < 47; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	for (int i = 0; i < n; i++)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), "%s%s", i ? " " : "", argv[i]);
	run(argv, timeout_s, r);
	cr_assert_eq(r->status, 0, "%s: %s", cmd, r->err);
	folded_load(out, f);
	cr_assert_gt(f->total, 200, "%s: only %llu samples", cmd, (unsigned long long)f->total);
	free(out);
}

/* s in single quotes for sh (no quote of its own: the tests' paths have none). */
static void sh_quoted(FILE *f, const char *s)
{
	cr_assert(!strchr(s, '\''), "a quote in %s", s);
	fprintf(f, " '%s'", s);
}

/* "comm [pid N];rest": N, and the stack as "comm;rest" in place; 0 when the
 * process frame has no pid. */
static long take_pid(char *stack)
{
	char *at = strstr(stack, " [pid "), *end, *semi = strchr(stack, ';');
	long pid;

	if (!at || (semi && at > semi))
		return 0;
	pid = strtol(at + 6, &end, 10);
	if (*end != ']')
		return 0;
	memmove(at, end + 1, strlen(end + 1) + 1);
	return pid;
}

void folded_split_by_pid(struct folded *all, const long pids[], int n, struct folded out[])
{
	for (int i = 0; i < n; i++)
		memset(&out[i], 0, sizeof(out[i]));
	for (size_t l = 0; l < all->n; l++) {
		long pid = take_pid(all->lines[l].stack);
		int i = 0;

		while (i < n && pids[i] != pid)
			i++;
		if (i == n) { /* a process none of them is (sh's, pyebpf's own child) */
			free(all->lines[l].stack);
			continue;
		}
		out[i].lines = realloc(out[i].lines, (out[i].n + 1) * sizeof(*out[i].lines));
		out[i].lines[out[i].n++] = all->lines[l];
		out[i].total += all->lines[l].count;
	}
	free(all->lines);
	memset(all, 0, sizeof(*all));
}

static void record_scripts(const char *const opts[], const char *const pythons[], int n, const char *script,
			   const char *const args[], double timeout_s, struct folded f[], char *outs[])
{
	const char *dir = temp_dir();
	char *out = temp_path(dir, "record.folded"), *sh = temp_path(dir, "all.sh"), path[PATH_MAX];
	const char *argv[48] = { PYEBPF, "record", "-F", "999", "-o", out, "--processes", "each" };
	long pids[64];
	int k = 8;
	FILE *w = fopen(sh, "w");
	struct folded all;
	struct run_result r;

	cr_assert(w && n > 0 && n <= 64);
	for (int i = 0; i < n; i++) {
		sh_quoted(w, pythons[i]);
		sh_quoted(w, script);
		for (int a = 0; args[a]; a++)
			sh_quoted(w, args[a]);
		fprintf(w, " > '%s/out.%d' & echo $! > '%s/pid.%d'\n", dir, i, dir, i);
	}
	fprintf(w, "wait\n");
	fclose(w);
	for (int i = 0; opts && opts[i] && k < 44; i++)
		argv[k++] = opts[i];
	argv[k++] = "--";
	argv[k++] = "sh";
	argv[k++] = sh;
	argv[k] = NULL;
	run(argv, timeout_s, &r);
	cr_assert_eq(r.status, 0, "record of %d interpreters at once: %s", n, r.err);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/pid.%d", dir, i);
		char *text = file_text(path);

		pids[i] = atol(text);
		free(text);
		if (outs) {
			snprintf(path, sizeof(path), "%s/out.%d", dir, i);
			outs[i] = file_text(path);
		}
	}
	folded_load(out, &all);
	folded_split_by_pid(&all, pids, n, f);
	for (int i = 0; i < n; i++)
		cr_assert_gt(f[i].total, 200, "%s %s: only %llu samples (%d interpreters at once)", pythons[i], script,
			     (unsigned long long)f[i].total, n);
	run_result_free(&r);
	free(out);
	free(sh);
}

void record_pythons(const char *const opts[], const struct python *pys, int n, int at_once, const char *script,
		    const char *const args[], double timeout_s, struct folded f[], char *outs[])
{
	for (int i = 0; i < n; i += at_once) {
		const char *paths[64];
		int m = n - i < at_once ? n - i : at_once;

		cr_assert(m <= 64);
		for (int k = 0; k < m; k++)
			paths[k] = pys[i + k].path;
		record_scripts(opts, paths, m, script, args, timeout_s, f + i, outs ? outs + i : NULL);
	}
}

int setup_pythons(const char *workload, char *script, struct python *pys, int max)
{
	int n;

	cr_assert(realpath(workload, script), "%s: %s", workload, strerror(errno));
	n = find_pythons(pys, max);
	if (!n)
		cr_skip_test("no Python interpreter installed");
	return n;
}

const char *temp_dir(void)
{
	static char dir[64];

	strcpy(dir, "/tmp/pyebpf-integ-XXXXXX");
	cr_assert(mkdtemp(dir));
	chmod(dir, 0777);
	return dir;
}

char *temp_path(const char *dir, const char *name)
{
	char *p = malloc(strlen(dir) + strlen(name) + 2);

	sprintf(p, "%s/%s", dir, name);
	return p;
}

int count_files(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert(d, "no %s", dir);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

int dot_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert(d);
	while ((e = readdir(d)))
		if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

int http(const char *url, const char *const extra[], char **body, double *seconds)
{
	const char *argv[32] = { "curl", "-s", "-g", "--max-time", "15", "-w", "\n%{http_code}" };
	int n = 7;
	struct run_result r;

	for (int i = 0; extra && extra[i] && n < 30; i++)
		argv[n++] = extra[i];
	argv[n++] = url;
	argv[n] = NULL;
	run(argv, 30, &r);
	char *nl = strrchr(r.out, '\n');
	int status = nl ? atoi(nl + 1) : -1;
	if (nl)
		*nl = '\0';
	if (seconds)
		*seconds = r.seconds;
	if (body) {
		*body = r.out;
		r.out = NULL;
	}
	run_result_free(&r);
	return status;
}

/* The backends a test started, stopped after it however it ended (.fini). */
static struct {
	char kind[16], dir[256];
} started[4];
static int nstarted;

void backend_stop(const char *kind, const char *dir)
{
	char script[128];
	struct run_result r;

	snprintf(script, sizeof(script), "../tests/backends/%s.sh", kind);
	run((const char *const[]){ "bash", script, "stop", dir, NULL }, 60, &r);
	run_result_free(&r);
}

void stop_started(void)
{
	while (nstarted > 0) {
		nstarted--;
		backend_stop(started[nstarted].kind, started[nstarted].dir);
	}
}

/* Start backend `kind` (pyroscope, otelcol, tls) in dir on port; extra flags after. */
void backend_start(const char *kind, const char *dir, int port, const char *const extra[])
{
	char script[128], portbuf[16];
	const char *argv[16] = { "bash", script, "start", dir, portbuf };
	int n = 5;
	struct run_result r;

	snprintf(script, sizeof(script), "../tests/backends/%s.sh", kind);
	snprintf(portbuf, sizeof(portbuf), "%d", port);
	for (int i = 0; extra && extra[i] && n < 15; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	if (nstarted < 4) {
		snprintf(started[nstarted].kind, sizeof(started[0].kind), "%s", kind);
		snprintf(started[nstarted].dir, sizeof(started[0].dir), "%s", dir);
		nstarted++;
	}
	run(argv, 120, &r);
	if (r.status)
		cr_log_error("%s start:\n%s%s", kind, r.out, r.err);
	cr_assert_eq(r.status, 0, "%s did not start (exit %d): %s", kind, r.status, last_line(r.err));
	run_result_free(&r);
}

long long stub_func_total(const char *json, const char *name)
{
	char pat[128];
	const char *p = strstr(json, "\"functions\"");

	snprintf(pat, sizeof(pat), "\"%s\":", name);
	p = p ? strstr(p, pat) : NULL;
	return p ? atoll(p + strlen(pat)) : 0;
}
