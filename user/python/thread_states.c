// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/thread_states.h"

#include <stdlib.h>

#define MAX_INTERPRETERS 64 /* a list that loops ends here too */

static int read_u64(py_mem_reader rd, void *ctx, uint64_t addr, uint64_t *v)
{
	*v = 0;
	return rd(ctx, addr, v, sizeof(*v));
}

static int by_thread_id(const void *a, const void *b)
{
	const struct py_tstate_entry *x = a, *y = b;

	return x->thread_id < y->thread_id ? -1 : x->thread_id > y->thread_id;
}

long py_thread_states(py_mem_reader rd, void *ctx, uint64_t interp_head_addr, const struct pyebpf_py_offsets *o,
		      struct py_tstate_entry *out, size_t max)
{
	uint64_t interp, t;
	size_t n = 0, kept = 0;

	if (read_u64(rd, ctx, interp_head_addr, &interp))
		return -1;
	for (int i = 0; i < MAX_INTERPRETERS && interp && n < max; i++) {
		if (read_u64(rd, ctx, interp + o->interp_threads_head, &t))
			return -1;
		/* A thread state that cannot be read ends its list: the threads
		 * before it are still worth indexing. */
		while (t && n < max) {
			uint64_t id, next;

			if (read_u64(rd, ctx, t + o->tstate_thread_id, &id) ||
			    read_u64(rd, ctx, t + o->tstate_next, &next))
				break;
			out[n++] = (struct py_tstate_entry){ .thread_id = id, .tstate = t };
			t = next;
		}
		if (read_u64(rd, ctx, interp + o->interp_next, &interp))
			break;
	}
	qsort(out, n, sizeof(*out), by_thread_id);
	/* A thread id seen more than once: the thread is in several
	 * interpreters (or the list looped): left to the walk. */
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && out[j].thread_id == out[i].thread_id)
			j++;
		if (j == i + 1 && out[i].thread_id)
			out[kept++] = out[i];
		i = j;
	}
	return (long)kept;
}
