// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/counters.h"

#include <stddef.h>

/* Unsized, so the assertion below catches a counter added without its line
 * at the end; a unit test checks that no entry in the middle is missing. */
static const char *const counter_names[] = {
	[PYEBPF_CNT_SAMPLES] = "samples sent",
	[PYEBPF_CNT_RB_FULL] = "samples lost: ring buffer full",
	[PYEBPF_CNT_KSTACK_ERR] = "kernel stacks unreadable",
	[PYEBPF_CNT_USTACK_ERR] = "user stacks unreadable",
	[PYEBPF_CNT_SCRATCH_ERR] = "samples lost: no scratch buffer",
	[PYEBPF_CNT_TARGETS_FULL] = "child processes not followed: target map full",
	[PYEBPF_CNT_PROC_RB_FULL] = "exec/exit events lost: ring buffer full",
	[PYEBPF_CNT_PY_NO_TSTATE] =
		"samples of Python processes in threads that run no Python (native threads: thread pools, runtimes)",
	[PYEBPF_CNT_PY_READ_INTERP] = "Python interpreter state unreadable",
	[PYEBPF_CNT_PY_READ_FRAME] = "Python stacks cut short: a frame was unreadable",
	[PYEBPF_CNT_PY_TRUNCATED] = "Python stacks deeper than 1024 frames (marked [truncated])",
	[PYEBPF_CNT_PY_NO_OFFSETS] = "Python samples without offsets",
	[PYEBPF_CNT_USTACK_COPY_ERR] = "user stacks not copied (--native)",
	[PYEBPF_CNT_PY_LOOP] = "Python frame chains that looped back into themselves (marked [frame loop])",
	[PYEBPF_CNT_OFFCPU] = "off-CPU samples (intervals worth at least one tick)",
	[PYEBPF_CNT_OFFCPU_STORAGE] = "off-CPU intervals lost: no room to note a thread leaving the CPU",
	[PYEBPF_CNT_PY_THREAD_LIMIT] = "Python stacks missing: threads beyond the BPF walk, not indexed yet",
	[PYEBPF_CNT_FOLLOWED] = "processes profiled from their start (started by a target, or named by --comm)",
	[PYEBPF_CNT_NOT_FOLLOWED] = "processes started by a target, not profiled (--no-children)",
	[PYEBPF_CNT_TAKEN] = "timer samples taken",
	[PYEBPF_CNT_TAKEN_NS] = "nanoseconds of BPF for the timer samples taken",
	[PYEBPF_CNT_SKIPPED] = "timer ticks skipped while a sample's BPF ran",
	[PYEBPF_CNT_SKIPPED_LOST] = "timer ticks skipped while a sample's BPF ran, lost (another thread ran next)",
	[PYEBPF_CNT_MEM_BYTES] = "bytes of anonymous memory the targets mapped in",
	[PYEBPF_CNT_MEM_TAKEN] = "memory samples taken",
	[PYEBPF_CNT_MEM_TAKEN_NS] = "nanoseconds of BPF for the memory samples taken",
	[PYEBPF_CNT_MEM_EVENT_LOST] =
		"memory given back or moved but not told (ring buffer full): still counted as held",
	[PYEBPF_CNT_COPY_LOST] = "code objects not copied (ring buffer full): may read [unreadable Python frame]",
};
_Static_assert(sizeof(counter_names) / sizeof(counter_names[0]) == PYEBPF_CNT__COUNT,
	       "every enum pyebpf_counter needs its line in counter_names");

const char *counter_name(enum pyebpf_counter c)
{
	if ((unsigned)c >= PYEBPF_CNT__COUNT || !counter_names[c])
		return "unnamed counter";
	return counter_names[c];
}
