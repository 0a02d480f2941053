// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "base/gzip.h"

#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

#include "base/util.h"

/* windowBits 15 + 16: gzip framing rather than zlib's. */
#define GZIP_WBITS (15 + 16)

int gzip__writev(const struct gzip_part *parts, size_t nparts, FILE *out)
{
	return gzip__writev_level(parts, nparts, Z_DEFAULT_COMPRESSION, out);
}

int gzip__writev_level(const struct gzip_part *parts, size_t nparts, int level, FILE *out)
{
	z_stream z = { 0 };
	uint8_t buf[1 << 16];
	int ret, err = 0;
	size_t part = 0, len = nparts ? parts[0].len : 0;

	if (deflateInit2(&z, level, Z_DEFLATED, GZIP_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		errno = ENOMEM;
		return -1;
	}
	z.next_in = nparts ? (uint8_t *)parts[0].data : NULL;
	do {
		/* zlib counts in uInt: feed a big buffer in slices, the parts in turn. */
		while (!z.avail_in && !len && part + 1 < nparts) {
			part++;
			z.next_in = (uint8_t *)parts[part].data;
			len = parts[part].len;
		}
		if (!z.avail_in && len) {
			z.avail_in = len > (1u << 30) ? 1u << 30 : (uInt)len;
			len -= z.avail_in;
		}
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		ret = deflate(&z, len || part + 1 < nparts ? Z_NO_FLUSH : Z_FINISH);
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

int gzip__writev_mem(const struct gzip_part *parts, size_t nparts, int level, uint8_t **out, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	int err;

	if (!f)
		return -1;
	err = gzip__writev_level(parts, nparts, level, f) ? errno : 0;
	if (fclose(f) && !err)
		err = errno ? errno : EIO;
	if (err) {
		free(buf);
		errno = err;
		return -1;
	}
	*out = (uint8_t *)buf;
	*len = n;
	return 0;
}

int gzip__write(const uint8_t *data, size_t len, FILE *out)
{
	struct gzip_part part = { data, len };

	return gzip__writev(&part, 1, out);
}

int gzip__is_gzip(const uint8_t *data, size_t len)
{
	return len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

/*
 * Inflate the whole stream into buf (cap bytes), or, with buf NULL, only
 * count the bytes it would take (through a small scratch buffer: a bomb is
 * measured without being held). More than max_out bytes is an error.
 */
static int inflate_stream(const uint8_t *data, size_t len, uint8_t *buf, size_t cap, size_t max_out, size_t *n,
			  const char **why)
{
	uint8_t scratch[64 * 1024]; /* not static: pushers read files on threads of their own */
	z_stream z = { 0 };
	int ret, err = -1;

	*n = 0;
	if (inflateInit2(&z, GZIP_WBITS) != Z_OK)
		die("out of memory");
	z.next_in = (uint8_t *)data;
	z.avail_in = len > UINT32_MAX ? UINT32_MAX : (uInt)len;
	for (;;) {
		size_t room = buf ? cap - *n : sizeof(scratch);

		if (*n >= max_out || !room) {
			*why = "decompresses to more than the size limit";
			break;
		}
		z.next_out = buf ? buf + *n : scratch;
		z.avail_out = (uInt)(room > UINT32_MAX ? UINT32_MAX : room);
		size_t before = z.avail_out;
		ret = inflate(&z, Z_NO_FLUSH);
		*n += before - z.avail_out;
		if (ret == Z_STREAM_END) {
			err = *n > max_out ? -1 : 0;
			if (err)
				*why = "decompresses to more than the size limit";
			break;
		}
		if (ret == Z_BUF_ERROR && z.avail_in == 0) {
			*why = "truncated gzip data";
			break;
		}
		if (ret != Z_OK && ret != Z_BUF_ERROR) {
			*why = "corrupt gzip data";
			break;
		}
	}
	inflateEnd(&z);
	return err;
}

int gzip__inflate(const uint8_t *data, size_t len, size_t max_out, uint8_t **out, size_t *out_len, const char **why)
{
	size_t size, n;
	uint8_t *buf;

	*out = NULL;
	*out_len = 0;
	/* Measured first, in constant memory: only a stream within the limit
	 * is given a buffer, of exactly its size. */
	if (inflate_stream(data, len, NULL, 0, max_out, &size, why))
		return -1;
	/* One byte more: zlib reports the end of a stream only with room to spare. */
	buf = xmalloc(size + 1);
	if (inflate_stream(data, len, buf, size + 1, max_out, &n, why) || n != size) {
		free(buf);
		return -1;
	}
	*out = buf;
	*out_len = n;
	return 0;
}
