// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "native/unwind.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "system/target_fs.h"
#include "base/util.h"

/* libdw's session of one process. */
struct unwind_session {
	Dwfl *dwfl;
	uint64_t maps_gen;
	bool ok; /* modules reported and thread callbacks attached */
};

/* The sample being unwound, for libdw's callbacks (the loader is single-threaded). */
static struct {
	uint32_t pid, tid;
	const struct pyebpf_uregs *regs;
	const uint8_t *stack;
	bool read_past_copy; /* a read beyond the copied bytes: the copy was too short */
	bool read_failed;    /* any read failed: libdw then ends as if at the root */
	bool handed_thread;
	/* libdw refused the pointer-authentication mask (0.188, the static
	 * binary's): the stack's words lose the bits above a user address as
	 * they are read, so signed return addresses come out as addresses. */
	bool strip_pac;
	uint64_t *pcs;
	size_t n, max;
} cur;

/*
 * Files are opened through /proc/PID/root: a process in another mount
 * namespace (a container) maps its own files, not the host's of that name.
 */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base, char **file_name,
		    Elf **elfp)
{
	if (modname[0] == '/') {
		int fd = target_open(cur.pid, modname);

		if (fd >= 0) {
			*file_name = strdup(modname);
			*elfp = NULL;
			return fd;
		}
	}
	return dwfl_linux_proc_find_elf(mod, userdata, modname, base, file_name, elfp);
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

/* How far above the stack pointer a read still counts as the stack: a
 * thread's stack is at most this large (8 MiB by default, 1 GiB if asked). */
#define STACK_SPAN (1ULL << 30)

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	(void)dwfl_arg;
	if (cur.handed_thread)
		return 0;
	cur.handed_thread = true;
	*thread_argp = NULL;
	return (pid_t)cur.tid;
}

/* Only the copied stack: the live process has moved on since the sample. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	uint64_t sp = cur.regs->sp, copied = cur.regs->copied;

	(void)dwfl;
	(void)arg;
	/* Compared without adding to addr - sp: an address just below 2^64
	 * above sp would wrap past the copy's end and read before its start. */
	if (addr < sp || addr - sp > copied || copied - (addr - sp) < sizeof(*result)) {
		/* Above the stack pointer: a caller's frame the copy did not reach,
		 * however far (OpenBLAS's dgetrf_parallel keeps 540 KB of locals). */
		if (addr >= sp && addr - sp < STACK_SPAN)
			cur.read_past_copy = true;
		cur.read_failed = true;
		return false;
	}
	memcpy(result, cur.stack + (addr - sp), sizeof(*result));
#ifdef PYEBPF_LIBDW_PAC_MASK_REG
	/* What an unwind reads from the stack is a saved frame pointer or
	 * return address (user addresses: the mask changes nothing else of
	 * them) or a callee-saved register, which no caller's frame address
	 * is computed from in the code compilers emit. */
	if (cur.strip_pac)
		*result &= PYEBPF_USER_PC_MASK;
#endif
	return true;
}

/* The registers a sample carries, by their DWARF numbers (pyebpf_arch.h). */
static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct pyebpf_uregs *r = cur.regs;
	Dwarf_Word sp = r->sp, pc = r->pc;
	bool ok = dwfl_thread_state_registers(thread, PYEBPF_DWARF_SP, 1, &sp);
	int i = 0;

	(void)thread_arg;
#define SET_UREG(field, dwarf) ok = ok && dwfl_thread_state_registers(thread, dwarf, 1, &(Dwarf_Word){ r->more[i++] });
	PYEBPF_UREGS_MORE(SET_UREG)
#undef SET_UREG
	if (PYEBPF_DWARF_PC >= 0)
		ok = ok && dwfl_thread_state_registers(thread, PYEBPF_DWARF_PC, 1, &pc);
#ifdef PYEBPF_LIBDW_PAC_MASK_REG
	/* Its result is not ok's: a libdw without it still unwinds unsigned
	 * code, and signed code through memory_read's mask. */
	cur.strip_pac = !dwfl_thread_state_registers(thread, PYEBPF_LIBDW_PAC_MASK_REG, 1,
						     &(Dwarf_Word){ ~PYEBPF_USER_PC_MASK });
#endif
	dwfl_thread_state_register_pc(thread, pc);
	return ok;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

void unwind_session__free(struct unwind_session *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s);
}

/* Report the process's mapped files to a new libdw session and attach to it. */
static void session_build(struct unwind_session *s, uint32_t pid, uint64_t maps_gen)
{
	if (s->dwfl)
		dwfl_end(s->dwfl);
	s->maps_gen = maps_gen;
	s->ok = false;
	s->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!s->dwfl)
		return;
	dwfl_report_begin(s->dwfl);
	if (dwfl_linux_proc_report(s->dwfl, (pid_t)pid) != 0 || dwfl_report_end(s->dwfl, NULL, NULL) != 0)
		return;
	s->ok = dwfl_attach_state(s->dwfl, NULL, (pid_t)pid, &thread_callbacks, NULL);
}

static struct unwind_session *session_of(struct unwind_session **slot, uint32_t pid, uint64_t maps_gen)
{
	struct unwind_session *s = *slot;

	if (!s) {
		s = *slot = xcalloc(1, sizeof(*s));
		session_build(s, pid, maps_gen);
	} else if (s->maps_gen != maps_gen) {
		session_build(s, pid, maps_gen);
	}
	return s;
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
	Dwarf_Addr pc;
	bool activation;

	(void)arg;
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (cur.n == cur.max)
		return DWARF_CB_ABORT;
	cur.pcs[cur.n++] = pc & PYEBPF_USER_PC_MASK;
	return DWARF_CB_OK;
}

/* Does any unwind table cover the code at pc (a return address when not
 * the leaf)? Hand-written assembly (OpenBLAS's kernels) often has none. */
static bool has_cfi(Dwfl *dwfl, Dwarf_Addr pc, bool leaf)
{
	Dwarf_Addr look = leaf ? pc : pc - 1, bias;
	Dwfl_Module *m = dwfl_addrmodule(dwfl, look);
	Dwarf_Frame *frame;

	if (!m)
		return false;
	for (int i = 0; i < 2; i++) { /* .eh_frame, then .debug_frame */
		Dwarf_CFI *cfi = i ? dwfl_module_dwarf_cfi(m, &bias) : dwfl_module_eh_cfi(m, &bias);

		if (cfi && dwarf_cfi_addrframe(cfi, look - bias, &frame) == 0) {
			free(frame);
			return true;
		}
	}
	return false;
}

size_t unwinder__unwind(struct unwind_session **session, uint32_t pid, uint32_t tid, uint64_t maps_gen,
			const struct pyebpf_uregs *regs, const uint8_t *stack, uint64_t *pcs, size_t max,
			enum unwind_end *end)
{
	struct unwind_session *s;
	int rc;

	*end = UNWIND_END_ERROR;
	if (!max || !regs->pc)
		return 0;
	cur.pid = pid;
	s = session_of(session, pid, maps_gen);
	cur.tid = tid;
	cur.regs = regs;
	cur.stack = stack;
	cur.read_past_copy = false;
	cur.read_failed = false;
	cur.handed_thread = false;
	cur.pcs = pcs;
	cur.n = 0;
	cur.max = max;
	if (!s->ok) { /* the process is gone or unreadable: the leaf alone */
		pcs[0] = regs->pc;
		*end = UNWIND_END_NO_CFI;
		return 1;
	}
	rc = dwfl_getthread_frames(s->dwfl, (pid_t)tid, on_frame, NULL);
	if (cur.n == 0)
		pcs[cur.n++] = regs->pc;
	/* libdw ends quietly (rc 0) on a failed memory read too: only a walk
	 * without one reached the root. Code without unwind information comes
	 * before the copy's end: libdw then guesses by frame pointer, reading
	 * anywhere above the copy, and code in no module known yet (a
	 * just-loaded extension) must read as such so the maps are re-read. */
	if (cur.n == max)
		*end = UNWIND_END_MAX;
	else if (rc == 0 && !cur.read_failed)
		*end = UNWIND_END_ROOT;
	else if (!has_cfi(s->dwfl, pcs[cur.n - 1], cur.n == 1))
		*end = UNWIND_END_NO_CFI;
	else if (cur.read_past_copy)
		*end = UNWIND_END_COPY;
	else
		*end = UNWIND_END_ERROR;
	return cur.n;
}

const char *unwind_end_mark(enum unwind_end e)
{
	switch (e) {
	case UNWIND_END_ROOT:
		return NULL;
	case UNWIND_END_COPY:
		return "[stack copy ends: --stack-size]";
	case UNWIND_END_NO_CFI:
		return "[no unwind info]";
	case UNWIND_END_MAX:
		return "[truncated]";
	case UNWIND_END_ERROR:
		break;
	}
	return "[unwinding failed]";
}
