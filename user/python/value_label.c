// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/value_label.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

enum py_value_kind py_value_kind_of(const char *type_name)
{
	if (!strcmp(type_name, "str"))
		return PY_VALUE_STR;
	if (!strcmp(type_name, "int"))
		return PY_VALUE_INT;
	if (!strcmp(type_name, "bytes"))
		return PY_VALUE_BYTES;
	return PY_VALUE_OTHER;
}

static uint64_t u64_at(const uint8_t *raw, size_t off)
{
	uint64_t v;

	memcpy(&v, raw + off, sizeof(v));
	return v;
}

/* n bytes of text, escaped, into out; cut: say it goes on. */
static bool text(const uint8_t *b, size_t n, bool cut, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (o + 5 >= size)
			return false;
		if (b[i] < 0x20 || b[i] >= 0x7f)
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", b[i]);
		else
			out[o++] = (char)b[i];
	}
	if (cut) {
		if (o + 4 > size)
			return false;
		memcpy(out + o, "\xe2\x80\xa6", 3);
		o += 3;
	}
	out[o] = '\0';
	return o > 0 || !cut;
}

bool py_value_label(const struct py_layout *l, enum py_value_kind kind, const uint8_t *raw, size_t len, char *out,
		    size_t size)
{
	if (!size)
		return false;
	out[0] = '\0';
	switch (kind) {
	case PY_VALUE_STR: {
		uint32_t state;
		uint64_t n;

		if (l->str != PY_STR_UNICODE || l->uni_ascii_data > len || l->uni_state + 4 > len ||
		    l->uni_length + 8 > len)
			return false;
		memcpy(&state, raw + l->uni_state, 4);
		n = u64_at(raw, l->uni_length);
		/* compact and ascii: the characters follow the header */
		if (!((state >> (l->uni_kind_shift + 3)) & 1) || !((state >> (l->uni_kind_shift + 4)) & 1) ||
		    n > (1ULL << 40))
			return false;
		size_t have = len - l->uni_ascii_data;
		return text(raw + l->uni_ascii_data, n < have ? n : have, n > have, out, size);
	}
	case PY_VALUE_BYTES: {
		uint64_t n;

		if (l->bytes_data > len || l->bytes_size + 8 > len)
			return false;
		n = u64_at(raw, l->bytes_size);
		if (n > (1ULL << 40))
			return false;
		size_t have = len - l->bytes_data;
		return text(raw + l->bytes_data, n < have ? n : have, n > have, out, size);
	}
	case PY_VALUE_INT: {
		uint64_t tag, v = 0;
		int64_t n;
		bool neg;
		uint32_t d[3] = { 0 };

		if (l->long_size + 8 > len || l->long_digits + 12 > len)
			return false;
		tag = u64_at(raw, l->long_size);
		if (l->major == 3 && l->minor >= 12) {
			n = (int64_t)(tag >> 3);
			neg = (tag & 3) == 2;
			if ((tag & 3) == 1)
				n = 0;
		} else {
			n = (int64_t)tag;
			if (n < -2 || n > 2)
				return false; /* beyond 60 bits (and no negation of INT64_MIN) */
			neg = n < 0;
			n = neg ? -n : n;
		}
		if (n < 0 || n > 2)
			return false; /* beyond 60 bits: not an id worth a label */
		memcpy(d, raw + l->long_digits, 12);
		for (int64_t i = n; i-- > 0;)
			v = v << 30 | (d[i] & 0x3fffffff);
		snprintf(out, size, "%s%" PRIu64, neg && v ? "-" : "", v);
		return true;
	}
	default:
		return false;
	}
}
