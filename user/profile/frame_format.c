// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "profile/frame_format.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int frame__format(const struct profile *p, const struct frame *f, char *buf, size_t size)
{
	const char *name = profile__str_at(p, f->name);
	const char *module = profile__str_at(p, f->module);

	switch (f->kind) {
	case FRAME_PYTHON:
		if (!f->line) /* --functions */
			return snprintf(buf, size, "%s (%s)", *name ? name : "<unknown>", module);
		return snprintf(buf, size, "%s (%s:%u)", *name ? name : "<unknown>", module, f->line);
	case FRAME_NATIVE:
		if (*name)
			return snprintf(buf, size, "%s", name);
		if (*module)
			return snprintf(buf, size, "%s+0x%" PRIx64, basename_of(module), f->offset);
		return snprintf(buf, size, "[unknown]");
	default:
		return snprintf(buf, size, "%s", *name ? name : "[unknown]");
	}
}
