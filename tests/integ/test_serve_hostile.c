/*
 * pyebpf serve against hostile neighbours and clients: links planted in DIR
 * after it was listed, DIR moved away, a truncated interval file, another
 * Host (DNS rebinding), slow clients (slowloris), and serve started as root
 * (it drops to --user).
 */
#include "integ.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PY "/usr/bin/python3"

/* A script whose only Python function is `fn`, run for `seconds`. */
static char *script(const char *dir, const char *fn, double seconds)
{
	char *path = temp_path(dir, fn);
	FILE *f = fopen(path, "w");

	cr_assert(f);
	fprintf(f,
		"import time\n"
		"def %s(n):\n"
		"    return sum(i * i for i in range(n))\n"
		"t0 = time.time()\n"
		"while time.time() - t0 < %.1f:\n"
		"    %s(20000)\n",
		fn, seconds, fn);
	fclose(f);
	return path;
}

/* A continuous directory of 1-second intervals of alpha(), in a new temporary directory. */
static char *record_dir(const char **tmp)
{
	struct run_result r;
	char *s;

	*tmp = temp_dir();
	char *out = temp_path(*tmp, "archive");
	s = script(*tmp, "alpha", 3.5);
	run((const char *const[]){ PYEBPF, "record", "-F", "499", "--continuous", out, "--interval", "1s", "--", PY, s,
				   NULL },
	    60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	free(s);
	return out;
}

/* Servers started, stopped by stop_servers() even when a test fails. */
static pid_t servers[8];
static int nservers;

static void stop_servers(void)
{
	for (int i = 0; i < nservers; i++)
		kill_wait(servers[i]);
	nservers = 0;
}

/* `serve DIR --listen 127.0.0.1:0 [extra...]`, its URL in url (256 bytes). */
static pid_t start_serve(const char *dir, const char *const extra[], const char *err, char *url)
{
	const char *argv[16] = { PYEBPF, "serve", dir, "--listen", "127.0.0.1:0" };
	int n = 5;
	char line[512];
	FILE *f;

	for (int i = 0; extra && extra[i]; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	pid_t pid = spawn_capture(argv, err);
	if (nservers < 8)
		servers[nservers++] = pid;
	wait_for_text(err, "pyebpf: serving ", 20);
	f = fopen(err, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "pyebpf: serving %*s at %255s", url) == 1)
			break;
	fclose(f);
	cr_assert(strstr(url, "http://127.0.0.1:"), "%s", url);
	return pid;
}

static int port_of(const char *url)
{
	const char *c = strrchr(url, ':');

	cr_assert(c);
	return atoi(c + 1);
}

static void sh(const char *fmt, const char *a, const char *b)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* The name of interval `seq` in dir (static buffer). */
static const char *interval_name(const char *dir, int seq)
{
	static char name[256];
	char cmd[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls '%s' | grep -- '-%06d.pb.gz$'", dir, seq);
	p = popen(cmd, "r");
	cr_assert(p && fgets(name, sizeof(name), p), "no interval %d in %s", seq, dir);
	pclose(p);
	name[strcspn(name, "\n")] = '\0';
	return name;
}

/* The newest interval file of dir (static buffer). */
static const char *newest_name(const char *dir)
{
	static char name[256];
	char cmd[512];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls '%s' | grep -- '^pyebpf-.*\\.pb\\.gz$' | tail -1", dir);
	p = popen(cmd, "r");
	cr_assert(p && fgets(name, sizeof(name), p), "no interval in %s", dir);
	pclose(p);
	name[strcspn(name, "\n")] = '\0';
	return name;
}

Test(serve_hostile, links_planted_after_the_listing_and_a_moved_dir, .timeout = 120, .fini = stop_servers)
{
	const char *tmp;
	char *dir = record_dir(&tmp), *err = temp_path(tmp, "serve.err"), url[256], u[512], *body;
	char *vault = temp_path(tmp, "vault"), *secret = temp_path(tmp, "vault/secret.pb.gz"), *old;
	struct run_result r;

	/* A root-only recording elsewhere, and DIR's files root-only in a DIR others may write into. */
	cr_assert_eq(mkdir(vault, 0700), 0);
	char *s = script(tmp, "root_only_secret", 1.5);
	run((const char *const[]){ PYEBPF, "record", "-F", "499", "-o", secret, "--", PY, s, NULL }, 60, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_result_free(&r);
	sh("chmod 0600 '%s' '%s'/pyebpf-*", secret, dir);
	sh("chmod 0777 '%s'%s", dir, "");
	pid_t srv = start_serve(dir, (const char *const[]){ "--user", "root", NULL }, err, url);
	snprintf(u, sizeof(u), "%sapi/intervals", url);
	cr_assert_eq(http(u, NULL, NULL, NULL), 200);

	/* nobody swaps interval 1 for a link to the secret. */
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'cd %s && rm -f %s && ln -s %s %s'", dir,
		 interval_name(dir, 1), secret, interval_name(dir, 1));
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	snprintf(u, sizeof(u), "%sapi/top?from=1&to=1", url);
	int st = http(u, NULL, &body, NULL);
	cr_assert_null(strstr(body, "root_only_secret"), "%d %s", st, body);
	cr_assert_eq(st, 422, "%d %s", st, body);
	cr_assert(strstr(body, ": not a regular file"), "%s", body);
	free(body);
	snprintf(u, sizeof(u), "%sapi/top?from=0&to=2", url);
	st = http(u, NULL, &body, NULL);
	cr_assert_eq(st, 200, "%d %s", st, body);
	cr_assert(strstr(body, "alpha (") && !strstr(body, "root_only_secret"), "%s", body);
	free(body);

	/* mv DIR DIR.old; mkdir DIR: the one served stays the one listed. */
	cr_assert(asprintf(&old, "%s.old", dir) > 0);
	cr_assert_eq(rename(dir, old), 0);
	cr_assert_eq(mkdir(dir, 0777), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s/%s'", secret, dir, interval_name(old, i == 1 ? 0 : i));
		cr_assert_eq(system(cmd), 0);
	}
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/pyebpf-20991231T000000.000Z-999999.pb.gz'", secret, dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(u, sizeof(u), "%sapi/intervals", url);
	cr_assert_eq(http(u, NULL, &body, NULL), 200);
	cr_assert_null(strstr(body, "999999"), "the timeline is the listed directory's: %s", body);
	free(body);
	for (int k = 0; k < 2; k++) {
		snprintf(u, sizeof(u), "%sapi/%s?from=0&to=2", url, k ? "flame" : "top");
		st = http(u, NULL, &body, NULL);
		cr_assert_eq(st, 200, "%d %.300s", st, body);
		cr_assert(strstr(body, "alpha (") && !strstr(body, "root_only_secret"), "%.300s", body);
		free(body);
	}
	kill(srv, SIGTERM);
	cr_assert_eq(wait_exit(srv, 20), 0);
	sh("rm -rf '%s' '%s'", dir, old);
	free(old);
	free(s);
	free(err);
	free(dir);
	free(vault);
	free(secret);
}

/* Uid/Gid/Groups lines of /proc/PID/status. */
static void ids(pid_t pid, char *uid, char *gid, char *groups, size_t size)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "Uid:", 4))
			snprintf(uid, size, "%s", line);
		else if (!strncmp(line, "Gid:", 4))
			snprintf(gid, size, "%s", line);
		else if (!strncmp(line, "Groups:", 7))
			snprintf(groups, size, "%s", line);
	}
	fclose(f);
}

Test(serve_hostile, started_as_root_it_drops_to_a_user, .timeout = 120, .fini = stop_servers)
{
	const char *tmp;
	char *dir = record_dir(&tmp), *err = temp_path(tmp, "serve.err"), url[256], u[512];
	char uid[256], gid[256], groups[256];
	struct run_result r;

	/* Files as record writes them (0644): nobody reads them. */
	pid_t srv = start_serve(dir, NULL, err, url);
	ids(srv, uid, gid, groups, sizeof(uid));
	cr_assert_str_eq(uid, "Uid:\t65534\t65534\t65534\t65534");
	cr_assert_str_eq(gid, "Gid:\t65534\t65534\t65534\t65534");
	/* Supplementary groups: nobody's own (nogroup), none of root's. */
	cr_assert(!strcmp(groups, "Groups:\t") || !strcmp(groups, "Groups:\t65534 "), "%s", groups);
	snprintf(u, sizeof(u), "%sapi/top?from=0&to=1", url);
	char *body;
	cr_assert_eq(http(u, NULL, &body, NULL), 200, "%s", body);
	cr_assert(strstr(body, "alpha ("), "%s", body);
	free(body);
	kill(srv, SIGTERM);
	cr_assert_eq(wait_exit(srv, 20), 0);

	/* Root-only files: one line, no server; --user root keeps root. */
	sh("chmod 0600 '%s'/pyebpf-*%s", dir, "");
	run((const char *const[]){ PYEBPF, "serve", dir, "--listen", "127.0.0.1:0", NULL }, 20, &r);
	cr_assert_eq(r.status, 1, "%s", r.err);
	char want[1024];
	snprintf(want, sizeof(want),
		 "pyebpf: serve drops root to user 'nobody', who cannot read '%s/%s': make DIR readable to that "
		 "user, choose another with --user NAME, or keep root with --user root\n",
		 dir, newest_name(dir));
	cr_assert_str_eq(r.err, want);
	run_result_free(&r);
	char *err2 = temp_path(tmp, "serve2.err");
	srv = start_serve(dir, (const char *const[]){ "--user", "root", NULL }, err2, url);
	free(err2);
	ids(srv, uid, gid, groups, sizeof(uid));
	cr_assert_str_eq(uid, "Uid:\t0\t0\t0\t0");
	snprintf(u, sizeof(u), "%sapi/top?from=0&to=1", url);
	cr_assert_eq(http(u, NULL, NULL, NULL), 200);
	kill(srv, SIGTERM);
	cr_assert_eq(wait_exit(srv, 20), 0);

	run((const char *const[]){ PYEBPF, "serve", dir, "--user", "no-such-user-pyebpf", NULL }, 20, &r);
	cr_assert_eq(r.status, 2, "%s", r.err);
	cr_assert_str_eq(r.err, "pyebpf: --user no-such-user-pyebpf: no such user in /etc/passwd\n");
	run_result_free(&r);
	sh("rm -rf '%s'%s", dir, "");
	free(err);
	free(dir);
}

Test(serve_hostile, a_truncated_interval_file_is_skipped_and_named, .timeout = 120, .fini = stop_servers)
{
	const char *tmp;
	char *dir = record_dir(&tmp), *err = temp_path(tmp, "serve.err"), url[256], u[512], *body, path[1024];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, interval_name(dir, 1));
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(truncate(path, st.st_size / 2), 0);
	pid_t srv = start_serve(dir, NULL, err, url);
	for (int k = 0; k < 2; k++) {
		snprintf(u, sizeof(u), "%sapi/top?from=0&to=2", url);
		cr_assert_eq(http(u, NULL, &body, NULL), 200, "%s", body);
		cr_assert(strstr(body, "alpha ("), "%s", body);
		char want[512];
		snprintf(want, sizeof(want), "skipped %s: cannot read: ", interval_name(dir, 1));
		cr_assert(strstr(body, want), "%s", body);
		free(body);
	}
	snprintf(u, sizeof(u), "%sapi/intervals", url);
	cr_assert_eq(http(u, NULL, &body, NULL), 200);
	cr_assert(strstr(body, "\"skipped\":[\"") && strstr(strstr(body, "\"skipped\":["), interval_name(dir, 1)), "%s",
		  body);
	free(body);
	kill(srv, SIGTERM);
	cr_assert_eq(wait_exit(srv, 20), 0);
	/* Said once on stderr. */
	struct run_result r;
	run((const char *const[]){ "cat", err, NULL }, 5, &r);
	cr_assert_eq(occurrences(r.out, "pyebpf: serve skips '"), 1, "%s", r.out);
	run_result_free(&r);
	sh("rm -rf '%s'%s", dir, "");
	free(err);
	free(dir);
}

Test(serve_hostile, only_its_own_host_names, .timeout = 60, .fini = stop_servers)
{
	const char *tmp = temp_dir();
	char *dir = temp_path(tmp, "empty"), *err = temp_path(tmp, "serve.err"), url[256], u[512], h[128], *body;
	static const char *const good[] = { "127.0.0.1:%d", "localhost:%d", "[::1]:%d", "pyebpf.example:%d" };
	static const char *const bad[] = { "evil.example:%d", "127.0.0.1.evil.example:%d", "localhost:%d1", "127.0.0.1",
					   "localhost.:%d",   "pyebpf.example.evil:%d" };

	cr_assert_eq(mkdir(dir, 0755), 0);
	pid_t srv = start_serve(dir, (const char *const[]){ "--allow-host", "pyebpf.example", NULL }, err, url);
	int port = port_of(url);
	snprintf(u, sizeof(u), "%sapi/intervals", url);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(h, sizeof(h), "Host: ");
		snprintf(h + 6, sizeof(h) - 6, good[i], port);
		int st = http(u, (const char *const[]){ "-H", h, NULL }, &body, NULL);
		cr_assert_eq(st, 200, "%s: %d %s", h, st, body);
		free(body);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(h, sizeof(h), "Host: ");
		snprintf(h + 6, sizeof(h) - 6, bad[i], port);
		int st = http(u, (const char *const[]){ "-H", h, NULL }, &body, NULL);
		cr_assert_eq(st, 421, "%s: %d %s", h, st, body);
		cr_assert_null(strstr(body, "intervals"), "%s: %s", h, body);
		free(body);
	}
	/* No Host on HTTP/1.1: a 400; HTTP/1.0 has none to send. */
	int st = http(u, (const char *const[]){ "-H", "Host:", NULL }, &body, NULL);
	cr_assert_eq(st, 400, "%d %s", st, body);
	cr_assert_null(strstr(body, "intervals"), "%s", body);
	free(body);
	st = http(u, (const char *const[]){ "--http1.0", "-H", "Host:", NULL }, &body, NULL);
	cr_assert_eq(st, 200, "%d %s", st, body);
	free(body);
	kill(srv, SIGTERM);
	cr_assert_eq(wait_exit(srv, 20), 0);
	free(dir);
	free(err);
}

/* A client that opens a connection from `src` and never finishes its request. */
static int slow_client(const char *src, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET }, me = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	a.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, src, &me.sin_addr);
	cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&me, sizeof(me)) == 0);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	(void)!write(fd, "GET /api/intervals HTTP/1.1\r\nHost: 127.0.0.1\r\n", 46);
	return fd;
}

/* Is the connection closed by the server (what it sent read and dropped)? */
static bool closed(int fd)
{
	char buf[4096];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n > 0)
			continue;
		return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
	}
}

#define SLOW 32

Test(serve_hostile, slow_clients_do_not_starve_a_request, .timeout = 90, .fini = stop_servers)
{
	const char *tmp = temp_dir();
	char *dir = temp_path(tmp, "empty"), *err = temp_path(tmp, "serve.err"), url[256], u[512];
	int fds[SLOW], pipefd[2];

	cr_assert_eq(mkdir(dir, 0755), 0);
	pid_t srv = start_serve(dir, NULL, err, url);
	int port = port_of(url);
	cr_assert_eq(pipe(pipefd), 0);
	/* 32 clients, a header line every 4 s each, from two addresses. */
	pid_t slow = fork();
	if (!slow) {
		double t0 = mono(), last = 0;
		int open_n = 0;

		close(pipefd[0]);
		for (int i = 0; i < SLOW; i++)
			open_n += (fds[i] = slow_client(i % 2 ? "127.0.0.2" : "127.0.0.3", port)) >= 0;
		(void)!write(pipefd[1], "x", 1);
		while (open_n && mono() - t0 < 24) {
			sleep_s(4);
			for (int i = 0; i < SLOW; i++) {
				if (fds[i] < 0)
					continue;
				if (closed(fds[i]) || send(fds[i], "X-Slow: 1\r\n", 11, MSG_NOSIGNAL) != 11) {
					close(fds[i]);
					fds[i] = -1;
					open_n--;
					last = mono() - t0;
				}
			}
		}
		/* The last one closed by the server: whole seconds; 99 if some never were. */
		_exit(open_n ? 99 : (int)last);
	}
	char c;
	close(pipefd[1]);
	cr_assert_eq(read(pipefd[0], &c, 1), 1);
	sleep_s(1);
	double took = 0;
	snprintf(u, sizeof(u), "%sapi/intervals", url);
	int st = http(u, NULL, NULL, &took);
	fprintf(stderr, "serve_hostile: a request beside %d slow clients: HTTP %d in %.2f s\n", SLOW, st, took);
	cr_assert_eq(st, 200, "answered: %d", st);
	cr_assert_lt(took, 2.0, "answered in %.2f s", took);
	int last = wait_exit(slow, 60);
	fprintf(stderr, "serve_hostile: the last slow client was closed after %d s\n", last);
	cr_assert_leq(last, 14, "slow clients are closed 10 s after they connect (+ one 4 s round): %d", last);
	kill(srv, SIGTERM);
	cr_assert_eq(wait_exit(srv, 20), 0);
	free(dir);
	free(err);
}
