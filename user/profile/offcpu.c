// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "profile/offcpu.h"

#include <string.h>

/* x86-64 syscall numbers (asm/unistd_64.h): the ABI, fixed forever. */
enum {
	NR_read = 0,
	NR_write = 1,
	NR_open = 2,
	NR_poll = 7,
	NR_pread64 = 17,
	NR_pwrite64 = 18,
	NR_readv = 19,
	NR_writev = 20,
	NR_select = 23,
	NR_nanosleep = 35,
	NR_sendfile = 40,
	NR_connect = 42,
	NR_accept = 43,
	NR_sendto = 44,
	NR_recvfrom = 45,
	NR_sendmsg = 46,
	NR_recvmsg = 47,
	NR_semop = 65,
	NR_msgrcv = 69,
	NR_fcntl = 72,
	NR_flock = 73,
	NR_fsync = 74,
	NR_fdatasync = 75,
	NR_futex = 202,
	NR_io_getevents = 208,
	NR_semtimedop = 220,
	NR_clock_nanosleep = 230,
	NR_epoll_wait = 232,
	NR_mq_timedreceive = 243,
	NR_openat = 257,
	NR_pselect6 = 270,
	NR_ppoll = 271,
	NR_splice = 275,
	NR_epoll_pwait = 281,
	NR_accept4 = 288,
	NR_preadv = 295,
	NR_pwritev = 296,
	NR_recvmmsg = 299,
	NR_sendmmsg = 307,
	NR_copy_file_range = 326,
	NR_preadv2 = 327,
	NR_pwritev2 = 328,
	NR_io_uring_enter = 426,
	NR_epoll_pwait2 = 441,
	NR_futex_waitv = 449,
};

static enum offcpu_reason of_syscall(int32_t nr, uint64_t arg, const struct gil_range *gil)
{
	switch (nr) {
	case NR_nanosleep:
	case NR_clock_nanosleep:
		return OFFCPU_SLEEP;
	case NR_select:
	case NR_pselect6:
	case NR_poll:
	case NR_ppoll:
		/* No descriptors: a sleep (CPython's time.sleep before 3.11 is select(0, ...)). */
		return arg ? OFFCPU_IO : OFFCPU_SLEEP;
	case NR_read:
	case NR_write:
	case NR_open:
	case NR_openat:
	case NR_pread64:
	case NR_pwrite64:
	case NR_readv:
	case NR_writev:
	case NR_preadv:
	case NR_pwritev:
	case NR_preadv2:
	case NR_pwritev2:
	case NR_sendfile:
	case NR_splice:
	case NR_copy_file_range:
	case NR_connect:
	case NR_accept:
	case NR_accept4:
	case NR_sendto:
	case NR_recvfrom:
	case NR_sendmsg:
	case NR_recvmsg:
	case NR_sendmmsg:
	case NR_recvmmsg:
	case NR_fsync:
	case NR_fdatasync:
	case NR_epoll_wait:
	case NR_epoll_pwait:
	case NR_epoll_pwait2:
	case NR_io_getevents:
	case NR_io_uring_enter:
	case NR_msgrcv:
	case NR_mq_timedreceive:
		return OFFCPU_IO;
	case NR_futex:
		return gil && gil->hi > gil->lo && arg >= gil->lo && arg < gil->hi ? OFFCPU_GIL : OFFCPU_LOCK;
	case NR_futex_waitv:
	case NR_flock:
	case NR_fcntl: /* blocks only in F_SETLKW / F_OFD_SETLKW */
	case NR_semop:
	case NR_semtimedop:
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
