/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * How many timer ticks an off-CPU interval is worth, shared by the BPF
 * switch hook (which walks a stack only when the answer is not 0) and the
 * unit tests. A thread off the CPU for d ns at F Hz would have been hit by
 * d*F/1e9 ticks of a per-thread wall-clock timer: the whole part always
 * counts, the fraction with that probability. The expectation is exactly
 * d*F/1e9, so short waits add up right in aggregate while most of them cost
 * one multiplication and no stack walk.
 */
#ifndef PYEBPF_OFFCPU_WEIGHT_H
#define PYEBPF_OFFCPU_WEIGHT_H

#ifndef __BPF__
#include <linux/types.h>
#endif

#define OFFCPU_NS_PER_S 1000000000ULL
/* Longer intervals are clipped: keeps d*F far from overflowing 64 bits. */
#define OFFCPU_MAX_NS (30ULL * 24 * 3600 * OFFCPU_NS_PER_S)

/* rand32: a uniform 32-bit random number (bpf_get_prandom_u32()). */
static inline __u32 offcpu_weight(__u64 d_ns, __u32 freq, __u32 rand32)
{
	__u64 ticks_ns, whole, rem;

	if (d_ns > OFFCPU_MAX_NS)
		d_ns = OFFCPU_MAX_NS;
	ticks_ns = d_ns * freq; /* <= 2.6e15 * 1e4: fits */
	/* Most waits are shorter than a period: no division for them (the
	 * switch hook runs this at every switch). */
	whole = ticks_ns < OFFCPU_NS_PER_S ? 0 : ticks_ns / OFFCPU_NS_PER_S;
	rem = ticks_ns - whole * OFFCPU_NS_PER_S;
	/* P(rand32 * 1e9 / 2^32 < rem) = rem / 1e9 */
	if ((((__u64)rand32 * OFFCPU_NS_PER_S) >> 32) < rem)
		whole++;
	return whole > 0xffffffffULL ? 0xffffffffU : (__u32)whole;
}

#endif
