#include "record/jitter.h"
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include "base/util.h"

#define SPREAD 0.2              /* the frequency within ±20% of the asked one */
#define HOLD_MIN_NS 50000000ULL /* 50 ms */

struct jitter {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* on CLOCK_MONOTONIC */
	bool stop;
	uint64_t freq;
	uint32_t rnd; /* xorshift32 */
	int n;
	int fds[];
};

uint64_t jitter__hold_ns(uint64_t freq, uint32_t rnd)
{
	uint64_t base = 4000000000ULL / (freq ? freq : 1);

	if (base < HOLD_MIN_NS)
		base = HOLD_MIN_NS;
	return base + (uint64_t)((double)rnd / 4294967296.0 * 3.0 * (double)base);
}

uint64_t jitter__period_ns(uint64_t freq, uint64_t hold_ns, uint32_t rnd)
{
	double u = (double)rnd / 4294967296.0; /* [0, 1) */
	double f = (double)(freq ? freq : 1) * (1.0 - SPREAD + 2.0 * SPREAD * u);
	double nominal = 1e9 / (double)(freq ? freq : 1);
	double keep = (double)hold_ns > nominal ? ((double)hold_ns - nominal / 2) / (double)hold_ns : 1.0;

	return (uint64_t)(1e9 / f * keep);
}

static uint32_t next_rand(struct jitter *j)
{
	uint32_t x = j->rnd;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return j->rnd = x;
}

static void *jitter_main(void *arg)
{
	struct jitter *j = arg;

	pthread_mutex_lock(&j->mu);
	while (!j->stop) {
		uint64_t hold = jitter__hold_ns(j->freq, next_rand(j));
		struct timespec at;

		clock_gettime(CLOCK_MONOTONIC, &at);
		uint64_t ns = (uint64_t)at.tv_nsec + hold;
		at.tv_sec += (time_t)(ns / 1000000000ULL);
		at.tv_nsec = (long)(ns % 1000000000ULL);
		while (!j->stop && pthread_cond_timedwait(&j->cv, &j->mu, &at) == 0)
			; /* woken by jitter__stop, or spuriously */
		if (j->stop)
			break;
		for (int i = 0; i < j->n; i++) {
			uint64_t period = jitter__period_ns(j->freq, hold, next_rand(j));

			(void)ioctl(j->fds[i], PERF_EVENT_IOC_PERIOD, &period); /* a CPU gone keeps none */
		}
	}
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

struct jitter *jitter__start(const int *fds, int n, uint64_t freq)
{
	struct jitter *j = xcalloc(1, sizeof(*j) + (size_t)(n > 0 ? n : 0) * sizeof(int));
	pthread_condattr_t ca;
	struct timespec now;

	memcpy(j->fds, fds, (size_t)(n > 0 ? n : 0) * sizeof(int));
	j->n = n;
	j->freq = freq;
	clock_gettime(CLOCK_MONOTONIC, &now);
	j->rnd = (uint32_t)now.tv_nsec | 1;
	pthread_mutex_init(&j->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&j->thread, NULL, jitter_main, j)) {
		pthread_cond_destroy(&j->cv);
		pthread_mutex_destroy(&j->mu);
		free(j);
		return NULL;
	}
	return j;
}

void jitter__stop(struct jitter *j)
{
	if (!j)
		return;
	pthread_mutex_lock(&j->mu);
	j->stop = true;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	pthread_join(j->thread, NULL);
	pthread_cond_destroy(&j->cv);
	pthread_mutex_destroy(&j->mu);
	free(j);
}
