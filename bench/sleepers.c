/*
 * An idle process with many sleeping threads, for bench/offcpu.sh: what
 * --mode wall costs pyebpf on a machine where nothing runs.
 *   sleepers THREADS SECONDS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *nap(void *arg)
{
	sleep((unsigned)(unsigned long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	unsigned long seconds = argc > 2 ? strtoul(argv[2], NULL, 10) : 60;
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t, &a, nap, (void *)seconds)) {
			perror("pthread_create");
			return 1;
		}
	printf("%d threads asleep\n", n);
	fflush(stdout);
	sleep((unsigned)seconds);
	return 0;
}
