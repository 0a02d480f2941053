// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "serve/serve_body.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "base/util.h"

static ssize_t body_write(void *cookie, const char *data, size_t n)
{
	struct serve_body *b = cookie;

	if (b->over || n > b->max - b->len) {
		b->over = true;
		errno = EFBIG;
		return -1;
	}
	xgrow(&b->buf, &b->cap, b->len + n + 1, 1);
	memcpy(b->buf + b->len, data, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return (ssize_t)n;
}

FILE *serve_body__open(struct serve_body *b, uint64_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
	b->f = fopencookie(b, "w", (cookie_io_functions_t){ .write = body_write });
	if (!b->f)
		die("out of memory");
	return b->f;
}

bool serve_body__close(struct serve_body *b)
{
	bool ok = fclose(b->f) == 0 && !b->over;

	b->f = NULL;
	if (!ok) {
		free(b->buf);
		b->buf = NULL;
		b->len = 0;
		return false;
	}
	if (!b->buf) /* nothing written: an empty body */
		b->buf = xstrdup("");
	return true;
}
