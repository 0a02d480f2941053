// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "system/why_line.h"

#include <stdarg.h>
#include <stdio.h>

struct why_line why_line(char *buf, size_t size)
{
	buf[0] = '\0';
	return (struct why_line){ buf, size, 0 };
}

void why_add(struct why_line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len + 1 >= l->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, l->size - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len = l->len + (size_t)n < l->size ? l->len + (size_t)n : l->size - 1;
}
