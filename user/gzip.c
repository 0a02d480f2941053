// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "gzip.h"

#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

#include "util.h"

/* windowBits 15 + 16: gzip framing rather than zlib's. */
#define GZIP_WBITS (15 + 16)

int gzip__write(const uint8_t *data, size_t len, FILE *out)
{
	z_stream z = { 0 };
	uint8_t buf[1 << 16];
	int ret, err = 0;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		errno = ENOMEM;
		return -1;
	}
	z.next_in = (uint8_t *)data;
	do {
		/* zlib counts in uInt: feed a big buffer in slices. */
		if (!z.avail_in && len) {
			z.avail_in = len > (1u << 30) ? 1u << 30 : (uInt)len;
			len -= z.avail_in;
		}
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		ret = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
		if (ret == Z_STREAM_ERROR) {
			err = EIO;
			break;
		}
		size_t have = sizeof(buf) - z.avail_out;
		if (have && fwrite(buf, 1, have, out) != have) {
			err = errno ? errno : EIO;
			break;
		}
	} while (ret != Z_STREAM_END);
	deflateEnd(&z);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

int gzip__is_gzip(const uint8_t *data, size_t len)
{
	return len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

int gzip__inflate(const uint8_t *data, size_t len, size_t max_out, uint8_t **out, size_t *out_len, const char **why)
{
	z_stream z = { 0 };
	size_t cap = len * 4 < max_out ? len * 4 + 1024 : max_out, n = 0;
	uint8_t *buf;
	int ret;

	*out = NULL;
	*out_len = 0;
	if (inflateInit2(&z, GZIP_WBITS) != Z_OK)
		die("out of memory");
	buf = xmalloc(cap ? cap : 1);
	z.next_in = (uint8_t *)data;
	z.avail_in = len > UINT32_MAX ? UINT32_MAX : (uInt)len;
	for (;;) {
		if (n == cap) {
			if (cap >= max_out) {
				*why = "decompresses to more than the size limit";
				goto fail;
			}
			cap = cap * 2 < max_out ? cap * 2 : max_out;
			buf = xrealloc(buf, cap);
		}
		z.next_out = buf + n;
		z.avail_out = (uInt)(cap - n > UINT32_MAX ? UINT32_MAX : cap - n);
		size_t before = z.avail_out;
		ret = inflate(&z, Z_NO_FLUSH);
		n += before - z.avail_out;
		if (ret == Z_STREAM_END)
			break;
		if (ret == Z_BUF_ERROR && z.avail_in == 0) {
			*why = "truncated gzip data";
			goto fail;
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			*why = "corrupt gzip data";
			goto fail;
		}
	}
	inflateEnd(&z);
	*out = buf;
	*out_len = n;
	return 0;
fail:
	inflateEnd(&z);
	free(buf);
	return -1;
}
