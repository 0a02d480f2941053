/*
 * The sampling timer's period, drawn anew every few periods.
 *
 * A cpu-clock event fires exactly every period. A program whose own cycle is
 * a multiple or divisor of it (a loop that sleeps to the next 10 ms tick, a
 * poller, a game loop) would always be caught at the same point of its
 * cycle: at 100 Hz one half of a 3 ms/7 ms loop drew every sample and the
 * other none. A thread of its own changes every CPU's period at moments
 * drawn from a continuous range (the main loop's 50 ms polls would keep
 * step with such a program's ticks: both follow the same clock), and each
 * change restarts the timers there; a period drawn within ±20% of the asked
 * rate walks the sampling instant across the program's cycle in between. A
 * change loses what was left of the old period (half a period, on average):
 * the new period is shortened by as much, so the mean rate stays the asked
 * one.
 */
#ifndef PYEBPF_JITTER_H
#define PYEBPF_JITTER_H

#include <stdint.h>

struct jitter;

/* Start changing the periods of the n cpu-clock events fds (opened with a
 * period in ns, not a frequency) around freq Hz; NULL if the thread cannot
 * start (the timers keep their period). */
struct jitter *jitter__start(const int *fds, int n, uint64_t freq);

/* Stop and join the thread, before the events are closed; NULL is fine. */
void jitter__stop(struct jitter *j);

/* How long the next period is kept, given 32 random bits: 4 to 16 periods
 * of the asked rate, and at least 50 ms (a change costs an ioctl a CPU). */
uint64_t jitter__hold_ns(uint64_t freq, uint32_t rnd);

/* The period in ns for a rate of freq Hz kept for hold_ns, given 32 random
 * bits: a frequency drawn evenly from [0.8, 1.2] x freq, its period
 * shortened for the half period the change loses. */
uint64_t jitter__period_ns(uint64_t freq, uint64_t hold_ns, uint32_t rnd);

#endif
