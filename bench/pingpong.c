/*
 * A context-switch-heavy workload for bench/offcpu.sh: two processes on one
 * CPU hand a byte back and forth over two pipes, so every hand-over is a
 * context switch (and a syscall return) on that CPU.
 *   pingpong ROUNDS   prints "N switches in S s (R/s)"
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200000;
	int ab[2], ba[2];
	cpu_set_t one;
	char c = 0;
	double t0;
	pid_t pid;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (rounds <= 0 || pipe(ab) || pipe(ba) || sched_setaffinity(0, sizeof(one), &one)) {
		perror("pingpong");
		return 1;
	}
	t0 = now();
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	for (long i = 0; i < rounds; i++) {
		if (pid == 0) {
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		} else if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1) {
			return 1;
		}
	}
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	double s = now() - t0;
	printf("%ld switches in %.3f s (%.0f/s)\n", 2 * rounds, s, 2 * rounds / s);
	return 0;
}
