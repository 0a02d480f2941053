/*
 * libFuzzer target for what `record --mode wall` reads of an asyncio
 * process's memory (bytes the target controls): the input is the target's
 * memory at BASE, read through the walk's page cache
 * (python/page_cache.c) by the task walker (python/asyncio_tasks.c) with
 * CPython 3.14's .AsyncioDebug layout; every task it returns has its
 * await reason named. Lists that loop, point anywhere or change must end
 * the walk, never crash it or hang it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "python/asyncio_tasks.h"
#include "python/page_cache.h"

#define BASE 0x10000ULL
#define MAX_IMAGE (64 * 1024)

struct image {
	const uint8_t *data;
	size_t size;
};

static int img_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct image *m = ctx;

	if (addr < BASE || addr + len < addr || addr + len > BASE + m->size)
		return -1;
	memcpy(buf, m->data + (addr - BASE), len);
	return 0;
}

static int cached(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return page_cache__read(ctx, addr, buf, len);
}

/* CPython 3.14.10's section, and object offsets as _Py_DebugOffsets gives them. */
static const uint64_t section_314[13] = { 0xa8,    0x88,   0x60,  0x6c,  0x6d,  0x80, 0x98,
					  0x37248, 0x2a80, 0x3a8, 0x360, 0x368, 0x370 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct asyncio_task tasks[64];
	struct image m = { data, size < MAX_IMAGE ? size : MAX_IMAGE };
	struct asyncio_walk_stats st = { 0 };
	struct asyncio_layout l;
	struct page_cache *c;
	size_t n;

	memset(&l, 0, sizeof(l));
	if (asyncio_layout_from_section(&l, (const uint8_t *)section_314, sizeof(section_314)))
		abort();
	l.threads_head = 0x10;
	l.ts_next = 0x8;
	l.ts_native_thread_id = 0x20;
	l.ob_type = 8;
	l.tp_name = 24;
	l.tp_flags = 168;
	l.gi_iframe = 0x40;
	l.gi_frame_state = 0x30;
	l.fr_instr_ptr = 0x38;
	l.fr_stackpointer = 0x28;
	l.co_adaptive = 0xc8;
	l.long_tag = 16;
	l.long_digit = 24;
	l.await_slot = 1;
	l.frame_suspended_yield_from = -1;
	l.executable_mask = 3;
	/* Small offsets of the thread state's fields, so inputs reach them. */
	l.ts_running_loop = 0x60;
	l.ts_running_task = 0x68;
	l.ts_tasks_head = 0x70;
	l.interp_tasks_head = 0x200;
	c = page_cache__new(4);
	page_cache__reset(c, img_read, &m);
	n = asyncio_walk(&l, cached, c, BASE, tasks, sizeof(tasks) / sizeof(tasks[0]), &st);
	if (n > sizeof(tasks) / sizeof(tasks[0]))
		abort();
	for (size_t i = 0; i < n; i++) {
		if (tasks[i].ncoro > ASYNCIO_MAX_CORO || !memchr(tasks[i].awaits, '\0', sizeof(tasks[i].awaits)))
			abort();
		(void)asyncio_await_frame(
			asyncio_await_reason("sleep", "asyncio/tasks.py", tasks[i].awaits, tasks[i].running));
	}
	page_cache__free(c);
	return 0;
}
