/* A private Docker engine for the integration tests (docker_engine.h). */
#include "integ.h"
#include "docker_engine.h"

#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ENGINE "../tests/engines/docker.sh"
/* The engine's image store, kept between runs (the image is imported once
 * per build of the root); not the dist tests' (/var/cache/pyebpf/docker):
 * one dockerd at a time holds a data root. */
#define DOCKER_DATA_DEFAULT "/var/cache/pyebpf/docker-integ"

static char engine_dir[64];
/* Why the engine could not be set up: the test's first step fails with it
 * (docker_engine_check); an assertion in .init is reported as a crash. */
static char engine_error[1200];

void docker_engine_stop(void)
{
	struct run_result r;

	if (!*engine_dir)
		return;
	run((const char *const[]){ "bash", ENGINE, "stop", engine_dir, NULL }, 120, &r);
	run_result_free(&r);
	run((const char *const[]){ "rm", "-rf", engine_dir, NULL }, 60, &r);
	run_result_free(&r);
	*engine_dir = '\0';
}

/*
 * Engines of test processes that are gone: a test killed mid-way (its time
 * limit, a crash) never ran its .fini, and its engine, still holding the
 * data root, would fail every later test's start. Each engine's directory
 * names its test's pid.
 */
static void stop_orphans(void)
{
	glob_t g;

	if (glob("/tmp/pyebpf-dk-*", GLOB_ONLYDIR, NULL, &g))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		int pid = atoi(g.gl_pathv[i] + strlen("/tmp/pyebpf-dk-"));
		struct run_result r;

		if (pid <= 0 || pid == (int)getpid() || !(kill(pid, 0) && errno == ESRCH))
			continue;
		fprintf(stderr, "docker_engine: stopping the engine of test process %d, which is gone\n", pid);
		run((const char *const[]){ "bash", ENGINE, "stop", g.gl_pathv[i], NULL }, 120, &r);
		run_result_free(&r);
		run((const char *const[]){ "rm", "-rf", g.gl_pathv[i], NULL }, 60, &r);
		run_result_free(&r);
	}
	globfree(&g);
}

void docker_engine_start(void)
{
	const char *data = getenv("PYEBPF_INTEG_DOCKER_DATA");
	struct run_result r;
	const char *host;
	char env[256];
	double t0 = mono();

	if (system("{ command -v dockerd && command -v containerd && command -v docker && command -v runc; } "
		   ">/dev/null 2>&1") != 0 ||
	    access(ENGINE, R_OK)) {
		fprintf(stderr, "[SKIP] needs docker.io (dockerd, containerd, docker, runc) and " ENGINE "\n");
		cr_skip_test("no docker.io");
	}
	stop_orphans();
	/* Short: the engine's sockets live in it. */
	snprintf(engine_dir, sizeof(engine_dir), "/tmp/pyebpf-dk-%d", (int)getpid());
	run((const char *const[]){ "bash", ENGINE, "start", engine_dir, data ? data : DOCKER_DATA_DEFAULT, NULL }, 150,
	    &r);
	if (r.status != 0) {
		docker_engine_stop();
		fprintf(stderr, "docker.sh start:\n%s", r.err);
		snprintf(engine_error, sizeof(engine_error), "docker.sh start (exit %d): %s", r.status,
			 last_line(r.err));
		run_result_free(&r);
		return;
	}
	host = strstr(r.out, "DOCKER_HOST=");
	cr_assert(host, "%s", r.out);
	snprintf(env, sizeof(env), "%.*s", (int)strcspn(host + 12, "\n"), host + 12);
	setenv("DOCKER_HOST", env, 1);
	run_result_free(&r);
	/* A first root is ~45 s; its downloads are tried 5 times (.ci/retry.sh). */
	run((const char *const[]){ "bash", ENGINE, "image", DOCKER_IMAGE, "trixie", NULL }, 500, &r);
	if (r.status != 0) {
		docker_engine_stop();
		fprintf(stderr, "docker.sh image:\n%s", r.err);
		snprintf(engine_error, sizeof(engine_error), "docker.sh image (exit %d): %s", r.status,
			 last_line(r.err));
		run_result_free(&r);
		return;
	}
	run_result_free(&r);
	cr_log_info("engine and image ready in %.1f s\n", mono() - t0);
}

void docker_engine_check(void)
{
	cr_assert(!engine_error[0], "%s", engine_error);
}

char *docker(const char *const argv[])
{
	struct run_result r;
	char *out;

	run(argv, 120, &r);
	cr_assert_eq(r.status, 0, "docker %s %s: %s", argv[1], argv[2] ? argv[2] : "", r.err);
	out = r.out;
	out[strcspn(out, "\n")] = '\0';
	free(r.err);
	return out;
}

/* CPU seconds of a process (0 when gone). */
double proc_cpu(pid_t pid)
{
	char path[64], stat[1024], *p = NULL;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f) {
		p = fgets(stat, sizeof(stat), f) ? strrchr(stat, ')') : NULL;
		fclose(f);
	}
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}
