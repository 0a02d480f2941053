// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/frames.h"

#include <stdbool.h>
#include <string.h>

#include "python/procmem.h"

static uint64_t rd(pid_t pid, uint64_t addr)
{
	uint64_t v = 0;

	procmem_u64(pid, addr, &v);
	return v;
}

uint64_t py_frame_first(pid_t pid, const struct py_layout *l, uint64_t tstate)
{
	const struct pyebpf_py_offsets *o = &l->bpf;
	uint64_t frame = tstate ? rd(pid, tstate + o->tstate_frame) : 0;

	if (o->cframe_current_frame != PYEBPF_NO_OFFSET && frame)
		frame = rd(pid, frame + o->cframe_current_frame);
	return frame;
}

uint64_t py_frame_code(pid_t pid, const struct py_layout *l, uint64_t frame)
{
	const struct pyebpf_py_offsets *o = &l->bpf;
	uint8_t owner = 0;

	if (o->frame_kind == PYEBPF_FRAMES_312 && (procmem_read(pid, frame + o->frame_owner, &owner, 1) || owner >= 3))
		return 0;
	return rd(pid, frame + o->frame_code) & ~(uint64_t)o->executable_mask;
}

/* A frame's code object and its caller in one read of the fields' span
 * where they are close (every layout's are): a walk costs one system call
 * per frame. */
#define FRAME_SPAN 128

uint64_t py_frame_step(pid_t pid, const struct py_layout *l, uint64_t frame, uint64_t *back)
{
	const struct pyebpf_py_offsets *o = &l->bpf;
	bool owned = o->frame_kind == PYEBPF_FRAMES_312;
	uint32_t end = (o->frame_code > o->frame_back ? o->frame_code : o->frame_back) + 8;
	uint8_t buf[FRAME_SPAN];
	uint64_t code;

	if (owned && o->frame_owner + 1 > end)
		end = o->frame_owner + 1;
	if (end > FRAME_SPAN || procmem_read(pid, frame, buf, end)) {
		*back = rd(pid, frame + o->frame_back);
		return py_frame_code(pid, l, frame);
	}
	memcpy(back, buf + o->frame_back, 8);
	if (owned && buf[o->frame_owner] >= 3)
		return 0;
	memcpy(&code, buf + o->frame_code, 8);
	return code & ~(uint64_t)o->executable_mask;
}

size_t py_frame_look_size(const struct py_layout *l)
{
	const struct pyebpf_py_offsets *o = &l->bpf;
	/* <= 3.10: f_lasti is an int; 3.11+: a pointer. */
	uint32_t isize = o->frame_kind == PYEBPF_FRAMES_OBJECT ? 4 : 8;
	uint32_t end = (o->frame_code > o->frame_back ? o->frame_code : o->frame_back) + 8;

	if (o->frame_lasti != PYEBPF_NO_OFFSET && o->frame_lasti + isize > end)
		end = o->frame_lasti + isize;
	if (o->frame_kind == PYEBPF_FRAMES_312 && o->frame_owner + 1 > end)
		end = o->frame_owner + 1;
	return end > FRAME_SPAN ? 0 : end;
}

void py_frame_look_parse(const struct py_layout *l, const uint8_t *buf, struct py_frame_look *out)
{
	const struct pyebpf_py_offsets *o = &l->bpf;

	memset(out, 0, sizeof(*out));
	memcpy(&out->back, buf + o->frame_back, 8);
	if (o->frame_lasti != PYEBPF_NO_OFFSET)
		memcpy(&out->instr, buf + o->frame_lasti, o->frame_kind == PYEBPF_FRAMES_OBJECT ? 4 : 8);
	if (o->frame_kind == PYEBPF_FRAMES_312 && buf[o->frame_owner] >= 3)
		return;
	memcpy(&out->code, buf + o->frame_code, 8);
	out->code &= ~(uint64_t)o->executable_mask;
}

int py_frame_look(pid_t pid, const struct py_layout *l, uint64_t frame, struct py_frame_look *out)
{
	size_t size = py_frame_look_size(l);
	uint8_t buf[FRAME_SPAN];

	memset(out, 0, sizeof(*out));
	if (!frame || !size || procmem_read(pid, frame, buf, size))
		return -1;
	py_frame_look_parse(l, buf, out);
	return 0;
}
