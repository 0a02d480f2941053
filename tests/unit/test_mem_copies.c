#include "unit.h"

#include <unistd.h>

#include "python/mem_copies.h"
#include "python/procmem.h"

/* A read is served only whole from one copy, of that process, newest first. */
Test(mem_copies, reads_inside_one_copy_of_its_process)
{
	uint8_t a[64], b[16], out[64];

	for (int i = 0; i < 64; i++)
		a[i] = (uint8_t)i;
	memset(b, 0xee, sizeof(b));
	mem_copies__add(7, 0x1000, a, sizeof(a));
	cr_assert(mem_copies__read(7, 0x1000, out, 64));
	cr_assert_arr_eq(out, a, 64);
	cr_assert(mem_copies__read(7, 0x1010, out, 8));
	cr_assert_eq(out[0], 16);
	cr_assert_not(mem_copies__read(7, 0x1039, out, 8), "runs past the copy's end");
	cr_assert_not(mem_copies__read(7, 0xff8, out, 16), "starts before it");
	cr_assert_not(mem_copies__read(8, 0x1000, out, 8), "another process's");
	mem_copies__add(7, 0x1008, b, sizeof(b));
	cr_assert(mem_copies__read(7, 0x1008, out, 8));
	cr_assert_eq(out[0], 0xee, "the newer copy of an address wins");
	mem_copies__forget(7);
	cr_assert_not(mem_copies__read(7, 0x1000, out, 8));
	mem_copies__clear();
}

Test(mem_copies, bounded_per_process)
{
	uint8_t x = 1, out;

	for (uint64_t i = 0; i < MEM_COPIES_PER_PROC + 10; i++)
		mem_copies__add(9, 0x10000 + i * 16, &x, 1);
	cr_assert(mem_copies__read(9, 0x10000 + (MEM_COPIES_PER_PROC - 1) * 16, &out, 1));
	cr_assert_not(mem_copies__read(9, 0x10000 + MEM_COPIES_PER_PROC * 16, &out, 1));
	cr_assert_geq(mem_copies__dropped(), 10);
	mem_copies__clear();
}

/*
 * procmem_read: a process that is gone (no such pid) reads from its
 * copies; copies_first reads them before a live process's own memory.
 */
Test(mem_copies, procmem_reads_the_copy_once_the_process_is_gone)
{
	static const char live[8] = "livemem";
	const pid_t gone = 0x3ffffff0; /* above pid_max */
	char out[8];

	mem_copies__add((uint32_t)gone, 0x5000, "copied!", 8);
	cr_assert_eq(procmem_read(gone, 0x5000, out, 8), 0);
	cr_assert_str_eq(out, "copied!");
	cr_assert_eq(procmem_read(gone, 0x6000, out, 8), -1);

	mem_copies__add((uint32_t)getpid(), (uint64_t)(uintptr_t)live, "copied!", 8);
	cr_assert_eq(procmem_read(getpid(), (uint64_t)(uintptr_t)live, out, 8), 0);
	cr_assert_str_eq(out, "livemem", "a live process is read first");
	procmem_copies_first(true);
	cr_assert_eq(procmem_read(getpid(), (uint64_t)(uintptr_t)live, out, 8), 0);
	procmem_copies_first(false);
	cr_assert_str_eq(out, "copied!");
	mem_copies__clear();
}
