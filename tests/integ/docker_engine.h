/*
 * A private Docker engine for the integration tests (tests/engines/docker.sh:
 * containerd and dockerd on their own sockets, cgroupfs driver) and its
 * python image, imported once from a bare Debian root.
 */
#ifndef PYEBPF_TESTS_DOCKER_ENGINE_H
#define PYEBPF_TESTS_DOCKER_ENGINE_H

#include <sys/types.h>

/* The image docker_engine_start() leaves in the engine: trixie's python3. */
#define DOCKER_IMAGE "pyebpf-integ-python:trixie"

/* A test's .init: start the engine, DOCKER_HOST set to it, the image there;
 * the test is skipped where Debian's docker.io is not installed. */
void docker_engine_start(void);
/* The test's first step: it fails when the engine could not be set up, with
 * the engine script's last line (a failed download names itself). Not in
 * .init, where Criterion reports a failed assertion as a crash. */
void docker_engine_check(void);

/* A test's .fini: the engine and everything it ran, stopped and removed. */
void docker_engine_stop(void);

/* docker ARGS...: its stdout (malloc'd, trailing newline removed); the command must succeed. */
char *docker(const char *const argv[]);

/* CPU seconds of a process (0 when gone): a container's python3 has started. */
double proc_cpu(pid_t pid);

#endif
