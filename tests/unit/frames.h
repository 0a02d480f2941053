/* Building profile frames in tests. */
#ifndef PYEBPF_TEST_FRAMES_H
#define PYEBPF_TEST_FRAMES_H

#include "profile/profile.h"

static inline uint32_t frame(struct profile *p, enum frame_kind kind, const char *name, const char *module,
			     uint32_t line, uint32_t start_or_offset)
{
	struct frame f = {
		.kind = kind, .name = profile__str(p, name), .module = profile__str(p, module), .line = line
	};

	if (kind == FRAME_PYTHON)
		f.start_line = start_or_offset;
	else
		f.offset = start_or_offset;
	return profile__frame(p, &f);
}

#endif
