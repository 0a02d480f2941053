// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/gil.h"

#include "python/procmem.h"

int py_gil_range(pid_t pid, const struct py_interp *in, struct gil_range *out)
{
	const struct pyebpf_py_offsets *o = &in->layout.bpf;
	uint64_t interp, gil;

	if (in->static_gil_hi) { /* 3.6, from its symbol table */
		out->lo = in->static_gil_lo;
		out->hi = in->static_gil_hi;
		return 0;
	}
	switch (o->gil_kind) {
	case PYEBPF_GIL_TSTATE_CURRENT:
		/* 3.7-3.11: _PyRuntime.ceval ends with the GIL, and gilstate,
		 * whose second field is tstate_current, follows it. */
		if (!in->runtime || in->major != 3 || in->minor < 7 ||
		    in->gil_addr < in->runtime + 8 + PY_GIL_STRUCT_SIZE)
			return -1;
		out->hi = in->gil_addr - 8;
		out->lo = out->hi - PY_GIL_STRUCT_SIZE;
		return 0;
	case PYEBPF_GIL_INTERP_PTR:
	case PYEBPF_GIL_INTERP_EMBEDDED:
		/* The main interpreter's (the last in the list; usually the only one). */
		if (procmem_u64(pid, in->interp_head_addr, &interp) || !interp)
			return -1;
		for (int i = 0; i < 64; i++) {
			uint64_t next;

			if (procmem_u64(pid, interp + o->interp_next, &next) || !next)
				break;
			interp = next;
		}
		gil = interp + o->gil_off;
		if (o->gil_kind == PYEBPF_GIL_INTERP_PTR && (procmem_u64(pid, gil, &gil) || !gil))
			return -1;
		out->lo = gil;
		out->hi = gil + PY_GIL_STRUCT_SIZE;
		return 0;
	default:
		return -1;
	}
}
