// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "profile/offcpu.h"

#include <string.h>

/* The numbers are this machine's (include/pyebpf_arch.h): a sample is
 * classified where it was recorded; the profile keeps the reason. */
static enum offcpu_reason of_syscall(int32_t nr, uint64_t arg, const struct gil_range *gil)
{
	switch (nr) {
	case PYEBPF_NR_nanosleep:
	case PYEBPF_NR_clock_nanosleep:
		return OFFCPU_SLEEP;
	case PYEBPF_NR_select:
	case PYEBPF_NR_pselect6:
	case PYEBPF_NR_poll:
	case PYEBPF_NR_ppoll:
		/* No descriptors: a sleep (CPython's time.sleep before 3.11 is select(0, ...)). */
		return arg ? OFFCPU_IO : OFFCPU_SLEEP;
	case PYEBPF_NR_read:
	case PYEBPF_NR_write:
	case PYEBPF_NR_open:
	case PYEBPF_NR_openat:
	case PYEBPF_NR_pread64:
	case PYEBPF_NR_pwrite64:
	case PYEBPF_NR_readv:
	case PYEBPF_NR_writev:
	case PYEBPF_NR_preadv:
	case PYEBPF_NR_pwritev:
	case PYEBPF_NR_preadv2:
	case PYEBPF_NR_pwritev2:
	case PYEBPF_NR_sendfile:
	case PYEBPF_NR_splice:
	case PYEBPF_NR_copy_file_range:
	case PYEBPF_NR_connect:
	case PYEBPF_NR_accept:
	case PYEBPF_NR_accept4:
	case PYEBPF_NR_sendto:
	case PYEBPF_NR_recvfrom:
	case PYEBPF_NR_sendmsg:
	case PYEBPF_NR_recvmsg:
	case PYEBPF_NR_sendmmsg:
	case PYEBPF_NR_recvmmsg:
	case PYEBPF_NR_fsync:
	case PYEBPF_NR_fdatasync:
	case PYEBPF_NR_epoll_wait:
	case PYEBPF_NR_epoll_pwait:
	case PYEBPF_NR_epoll_pwait2:
	case PYEBPF_NR_io_getevents:
	case PYEBPF_NR_io_uring_enter:
	case PYEBPF_NR_msgrcv:
	case PYEBPF_NR_mq_timedreceive:
		return OFFCPU_IO;
	case PYEBPF_NR_futex:
		return gil && gil->hi > gil->lo && arg >= gil->lo && arg < gil->hi ? OFFCPU_GIL : OFFCPU_LOCK;
	case PYEBPF_NR_futex_waitv:
	case PYEBPF_NR_flock:
	case PYEBPF_NR_fcntl: /* blocks only in F_SETLKW / F_OFD_SETLKW */
	case PYEBPF_NR_semop:
	case PYEBPF_NR_semtimedop:
		return OFFCPU_LOCK;
	default:
		return OFFCPU_OTHER;
	}
}

enum offcpu_reason offcpu_classify(const struct pyebpf_offcpu *o, const struct gil_range *gil)
{
	/* Preempted (still runnable when it left): the syscall it may be in is not why it waits. */
	if (o->state == 0 && !(o->flags & PYEBPF_OFFCPU_STATE_UNKNOWN))
		return OFFCPU_RUNQUEUE;
	if (o->syscall < 0) /* not in a syscall: a page fault, or preempted before the recording */
		return OFFCPU_OTHER;
	return of_syscall(o->syscall, o->wait_arg, gil);
}

static bool one_of(const char *name, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, v[i]))
			return true;
	return false;
}

bool offcpu_gil_call(const char *caller, bool caller_python, const char *callee)
{
	static const char *const takers[] = { "take_gil", "PyEval_RestoreThread", "PyEval_AcquireThread",
					      "PyEval_AcquireLock", "_PyEval_AcquireLock" };
	static const char *const evals[] = { "PyEval_EvalFrameEx", "_PyEval_EvalFrameDefault", "PyEval_RestoreThread",
					     "PyEval_AcquireThread", "PyEval_AcquireLock" };

	if (one_of(callee, takers, sizeof(takers) / sizeof(takers[0])))
		return true;
	if (strcmp(callee, "PyThread_acquire_lock") != 0 && strcmp(callee, "PyThread_acquire_lock_timed") != 0)
		return false;
	return caller_python || one_of(caller, evals, sizeof(evals) / sizeof(evals[0]));
}

bool offcpu_scheduler_function(const char *name)
{
	return !strncmp(name, "finish_task_switch", 18) || !strcmp(name, "__schedule") || !strcmp(name, "schedule") ||
	       !strncmp(name, "preempt_schedule", 16) || !strcmp(name, "__traceiter_sched_switch") ||
	       !strcmp(name, "schedule_idle");
}

static const char *const names[OFFCPU__COUNT] = {
	[OFFCPU_NONE] = "",     [OFFCPU_RUNQUEUE] = "runqueue", [OFFCPU_SLEEP] = "sleep", [OFFCPU_IO] = "io",
	[OFFCPU_LOCK] = "lock", [OFFCPU_GIL] = "gil",           [OFFCPU_OTHER] = "other",
};
static const char *const frames[OFFCPU__COUNT] = {
	[OFFCPU_NONE] = "",
	[OFFCPU_RUNQUEUE] = "[off-cpu: runqueue]",
	[OFFCPU_SLEEP] = "[off-cpu: sleep]",
	[OFFCPU_IO] = "[off-cpu: io]",
	[OFFCPU_LOCK] = "[off-cpu: lock]",
	[OFFCPU_GIL] = "[off-cpu: gil]",
	[OFFCPU_OTHER] = "[off-cpu: other]",
};

const char *offcpu_reason_name(enum offcpu_reason r)
{
	return (unsigned)r < OFFCPU__COUNT ? names[r] : "";
}

const char *offcpu_reason_frame(enum offcpu_reason r)
{
	return (unsigned)r < OFFCPU__COUNT ? frames[r] : "";
}

enum offcpu_reason offcpu_reason_parse(const char *name)
{
	for (int r = OFFCPU_RUNQUEUE; r < OFFCPU__COUNT; r++)
		if (!strcmp(name, names[r]))
			return (enum offcpu_reason)r;
	return OFFCPU_NONE;
}

bool offcpu_is_reason_frame(const char *name)
{
	return !strncmp(name, "[off-cpu: ", 10);
}
