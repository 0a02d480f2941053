/* record/jitter.c: the sampling timer's period drawn anew (a program whose
 * cycle matches a fixed period is caught at one point of it every time). */
#include <criterion/criterion.h>
#include <time.h>
#include "record/jitter.h"

/* A change loses half a period on average: what a stretch of hold_ns at
 * this period samples, that loss counted. */
static double samples_in(uint64_t hold, uint64_t period, uint64_t freq)
{
	return ((double)hold - 0.5e9 / (double)freq) / (double)period;
}

Test(jitter, periods_within_a_fifth_of_the_rate_and_the_mean_rate_kept)
{
	const uint64_t rates[] = { 19, 99, 100, 997, 1000, 4999 };

	for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		uint64_t f = rates[r];
		double samples = 0, seconds = 0;
		uint32_t x = 2463534242u;

		for (int i = 0; i < 200000; i++) {
			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			uint64_t hold = jitter__hold_ns(f, x);
			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			uint64_t period = jitter__period_ns(f, hold, x);

			cr_assert_geq(hold, 4e9 / (double)f - 1, "at least 4 periods at %lu Hz", (unsigned long)f);
			cr_assert_geq(hold, 50000000u);
			cr_assert_leq((double)hold, 4 * (4e9 / (double)f > 5e7 ? 4e9 / (double)f : 5e7));
			/* Within [0.8, 1.2] of the rate, the loss's shortening aside (at most 1/8). */
			cr_assert_geq((double)period, 1e9 / (1.2 * (double)f) * (1 - 0.125) - 1);
			cr_assert_leq((double)period, 1e9 / (0.8 * (double)f) + 1);
			samples += samples_in(hold, period, f);
			seconds += (double)hold / 1e9;
		}
		cr_expect_float_eq(samples / seconds, (double)f, 0.01 * (double)f, "mean rate %.2f for %lu Hz",
				   samples / seconds, (unsigned long)f);
	}
}

Test(jitter, the_thread_stops_at_once)
{
	int fds[2] = { -1, -1 }; /* no events: its ioctls fail, and it goes on */
	struct timespec a, b;
	struct jitter *j = jitter__start(fds, 2, 100);

	cr_assert_not_null(j);
	clock_gettime(CLOCK_MONOTONIC, &a);
	jitter__stop(j);
	clock_gettime(CLOCK_MONOTONIC, &b);
	cr_expect_lt((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9, 0.04,
		     "stopped without waiting out its hold (40-160 ms at 100 Hz)");
	jitter__stop(NULL);
}
