// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/procmem.h"

#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/uio.h>

#include "base/util.h"
#include "python/mem_copies.h"

static bool copies_first;

void procmem_copies_first(bool on)
{
	copies_first = on;
}

int procmem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	if (!addr)
		return -1;
	if (copies_first && mem_copies__read((uint32_t)pid, addr, buf, len))
		return 0;
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	/* Gone (or unmapped since): what BPF copied of it as a sample named it. */
	return mem_copies__read((uint32_t)pid, addr, buf, len) ? 0 : -1;
}

int procmem_u64(pid_t pid, uint64_t addr, uint64_t *v)
{
	return procmem_read(pid, addr, v, sizeof(*v));
}

size_t utf8_encode(uint32_t cp, char *out)
{
	/* A lone surrogate or a value past Unicode (a string read while it
	 * changed, or not a string) is U+FFFD, not bytes no decoder accepts. */
	if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		cp = 0xfffd;
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* What ends a name cut at its limit: U+2026, an ellipsis. */
static const char CUT_MARK[] = "\xe2\x80\xa6";

/* PEP 393 state bits: interned, then kind:3, compact:1, ascii:1; interned
 * is 2 bits, or a byte on free-threaded 3.14+ (l->uni_kind_shift). */
#define STATE_KIND(s) (((s) >> l->uni_kind_shift) & 7)
#define STATE_COMPACT(s) (((s) >> (l->uni_kind_shift + 3)) & 1)
#define STATE_ASCII(s) (((s) >> (l->uni_kind_shift + 4)) & 1)

static char *read_unicode(pid_t pid, const struct py_layout *l, uint64_t addr, size_t max_chars)
{
	uint64_t length, data;
	uint32_t state, kind;
	uint8_t *raw;
	char *out, *p;
	bool cut;

	if (procmem_u64(pid, addr + l->uni_length, &length) || procmem_read(pid, addr + l->uni_state, &state, 4))
		return NULL;
	cut = length > max_chars;
	if (cut)
		length = max_chars;
	kind = STATE_ASCII(state) ? 1 : STATE_KIND(state);
	if (kind != 1 && kind != 2 && kind != 4)
		return NULL;
	if (STATE_COMPACT(state))
		data = addr + (STATE_ASCII(state) ? l->uni_ascii_data : l->uni_compact_data);
	else if (procmem_u64(pid, addr + l->uni_compact_data, &data)) /* PyUnicodeObject.data.any */
		return NULL;
	raw = xmalloc(length * kind + 1);
	if (length && procmem_read(pid, data, raw, length * kind)) {
		free(raw);
		return NULL;
	}
	out = p = xmalloc(length * 4 + sizeof(CUT_MARK));
	for (uint64_t i = 0; i < length; i++) {
		uint32_t cp;

		if (kind == 1)
			cp = raw[i];
		else if (kind == 2)
			cp = raw[2 * i] | (uint32_t)raw[2 * i + 1] << 8;
		else
			memcpy(&cp, raw + 4 * i, 4);
		p += utf8_encode(cp, p);
	}
	*p = '\0';
	if (cut) /* a name cut short says so */
		memcpy(p, CUT_MARK, sizeof(CUT_MARK));
	free(raw);
	return out;
}

static uint8_t *read_sized(pid_t pid, uint64_t addr, uint32_t size_off, uint32_t data_off, size_t max, size_t *len,
			   bool *cut)
{
	uint64_t n;
	uint8_t *buf;

	if (procmem_u64(pid, addr + size_off, &n))
		return NULL;
	*cut = n > max;
	if (*cut)
		n = max;
	buf = xmalloc(n + sizeof(CUT_MARK));
	if (n && procmem_read(pid, addr + data_off, buf, n)) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

char *py_read_str(pid_t pid, const struct py_layout *l, uint64_t addr, size_t max_chars)
{
	size_t len;
	bool cut;
	char *s;

	if (!addr)
		return NULL;
	if (l->str != PY_STR_BYTES_27)
		return read_unicode(pid, l, addr, max_chars);
	/* 2.7 names are bytes, in practice UTF-8 */
	s = (char *)read_sized(pid, addr, l->str_size, l->str_data, max_chars, &len, &cut);
	if (s && cut)
		memcpy(s + len, CUT_MARK, sizeof(CUT_MARK));
	return s;
}

uint8_t *py_read_bytes(pid_t pid, const struct py_layout *l, uint64_t addr, size_t max, size_t *len)
{
	if (!addr)
		return NULL;
	bool cut;

	if (l->str == PY_STR_BYTES_27)
		return read_sized(pid, addr, l->str_size, l->str_data, max, len, &cut);
	return read_sized(pid, addr, l->bytes_size, l->bytes_data, max, len, &cut);
}
