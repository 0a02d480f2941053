// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "system/json_field.h"
#include "base/util.h"

#include <string.h>

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && is_ws(s[i]))
		i++;
	return i;
}

/* Four hex digits at s[i..]: their value, or -1. */
static long hex4(const char *s, size_t n, size_t i)
{
	long v = 0;

	if (n < 4 || i > n - 4)
		return -1;
	for (size_t k = 0; k < 4; k++) {
		int d = hex_digit(s[i + k]);

		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* The string starting at s[*i] (a quote): *i past its closing quote; -1 on a control character, a bad
 * escape or no end. Its characters are not checked as UTF-8: callers that keep text check what they keep. */
static int skip_string(const char *s, size_t n, size_t *i)
{
	size_t k = *i + 1;

	while (k < n) {
		unsigned char c = (unsigned char)s[k];

		if (c == '"') {
			*i = k + 1;
			return 0;
		}
		if (c < 0x20)
			return -1;
		if (c != '\\') {
			k++;
			continue;
		}
		if (k + 1 >= n)
			return -1;
		switch (s[k + 1]) {
		case '"':
		case '\\':
		case '/':
		case 'b':
		case 'f':
		case 'n':
		case 'r':
		case 't':
			k += 2;
			break;
		case 'u':
			if (hex4(s, n, k + 2) < 0)
				return -1;
			k += 6;
			break;
		default:
			return -1;
		}
	}
	return -1;
}

static size_t skip_digits(const char *s, size_t n, size_t i)
{
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	return i;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int skip_number(const char *s, size_t n, size_t *i)
{
	size_t k = *i, d;

	if (k < n && s[k] == '-')
		k++;
	if (k >= n || s[k] < '0' || s[k] > '9')
		return -1;
	k = s[k] == '0' ? k + 1 : skip_digits(s, n, k);
	if (k < n && s[k] == '.') {
		d = skip_digits(s, n, k + 1);
		if (d == k + 1)
			return -1;
		k = d;
	}
	if (k < n && (s[k] == 'e' || s[k] == 'E')) {
		k++;
		if (k < n && (s[k] == '+' || s[k] == '-'))
			k++;
		d = skip_digits(s, n, k);
		if (d == k)
			return -1;
		k = d;
	}
	*i = k;
	return 0;
}

static int skip_word(const char *s, size_t n, size_t *i, const char *word)
{
	size_t w = strlen(word);

	if (n - *i < w || memcmp(s + *i, word, w) != 0)
		return -1;
	*i += w;
	return 0;
}

/* One value at s[*i] (no whitespace before it): *i past it; -1 when it is not well-formed JSON. */
static int skip_value(const char *s, size_t n, size_t *i, int depth)
{
	char open, close;

	if (*i >= n)
		return -1;
	switch (s[*i]) {
	case '"':
		return skip_string(s, n, i);
	case 't':
		return skip_word(s, n, i, "true");
	case 'f':
		return skip_word(s, n, i, "false");
	case 'n':
		return skip_word(s, n, i, "null");
	case '{':
	case '[':
		break;
	default:
		return skip_number(s, n, i);
	}
	if (depth >= JSON_MAX_DEPTH)
		return -1;
	open = s[*i];
	close = open == '{' ? '}' : ']';
	*i = skip_ws(s, n, *i + 1);
	if (*i < n && s[*i] == close) {
		(*i)++;
		return 0;
	}
	for (;;) {
		if (open == '{') {
			if (*i >= n || s[*i] != '"' || skip_string(s, n, i))
				return -1;
			*i = skip_ws(s, n, *i);
			if (*i >= n || s[*i] != ':')
				return -1;
			*i = skip_ws(s, n, *i + 1);
		}
		if (skip_value(s, n, i, depth + 1))
			return -1;
		*i = skip_ws(s, n, *i);
		if (*i >= n)
			return -1;
		if (s[*i] == close) {
			(*i)++;
			return 0;
		}
		if (s[*i] != ',')
			return -1;
		*i = skip_ws(s, n, *i + 1);
	}
}

int json_root(const char *buf, size_t len, struct json_value *out)
{
	size_t i = skip_ws(buf, len, 0), start = i;

	if (skip_value(buf, len, &i, 0))
		return -1;
	out->p = buf + start;
	out->n = i - start;
	return skip_ws(buf, len, i) == len ? 0 : -1;
}

/* UTF-8 of code point cp into out[*k] within size-1 bytes; -1 when it does not fit. */
static int put_utf8(char *out, size_t size, size_t *k, unsigned long cp)
{
	unsigned char b[4];
	size_t m;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		m = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		m = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		m = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | cp >> 18);
		b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		m = 4;
	}
	if (*k + m >= size)
		return -1;
	memcpy(out + *k, b, m);
	*k += m;
	return 0;
}

/* \uXXXX at s[*i] (the backslash), with its low surrogate when it is a high one: the code point (an
 * unpaired surrogate becomes U+FFFD, as Go's decoder makes it); *i past it. */
static unsigned long unicode_escape(const char *s, size_t n, size_t *i)
{
	long hi = hex4(s, n, *i + 2), lo;

	*i += 6;
	if (hi < 0xd800 || hi > 0xdfff)
		return (unsigned long)hi;
	if (hi < 0xdc00 && *i + 1 < n && s[*i] == '\\' && s[*i + 1] == 'u' && (lo = hex4(s, n, *i + 2)) >= 0xdc00 &&
	    lo <= 0xdfff) {
		*i += 6;
		return 0x10000 + (((unsigned long)hi - 0xd800) << 10) + ((unsigned long)lo - 0xdc00);
	}
	return 0xfffd;
}

int json_string(struct json_value v, char *out, size_t size)
{
	const char *s = v.p;
	size_t n = v.n, i = 1, k = 0, end = 0;

	if (!size || n < 2 || s[0] != '"' || skip_string(s, n, &end) || end != n)
		return -1;
	while (i < n - 1) {
		unsigned long cp;

		if (s[i] != '\\') {
			if (k + 1 >= size)
				return -1;
			out[k++] = s[i++];
			continue;
		}
		switch (s[i + 1]) {
		case 'u':
			cp = unicode_escape(s, n, &i);
			if (!cp || put_utf8(out, size, &k, cp))
				return -1;
			continue;
		case 'b':
			cp = '\b';
			break;
		case 'f':
			cp = '\f';
			break;
		case 'n':
			cp = '\n';
			break;
		case 'r':
			cp = '\r';
			break;
		case 't':
			cp = '\t';
			break;
		default: /* '"', '\\', '/' stand for themselves */
			cp = (unsigned char)s[i + 1];
			break;
		}
		if (k + 1 >= size)
			return -1;
		out[k++] = (char)cp;
		i += 2;
	}
	out[k] = '\0';
	return 0;
}

/* Does the string value at s (its quotes included) decode to exactly key? */
static bool key_is(struct json_value s, const char *key)
{
	char buf[128];

	/* Without escapes (the usual case) the text is the key. */
	if (s.n == strlen(key) + 2 && !memcmp(s.p + 1, key, s.n - 2))
		return true;
	return memchr(s.p, '\\', s.n) && !json_string(s, buf, sizeof(buf)) && !strcmp(buf, key);
}

int json_get(struct json_value obj, const char *key, struct json_value *out)
{
	const char *s = obj.p;
	size_t n = obj.n, i;
	int found = -1;

	if (!n || s[0] != '{')
		return -1;
	i = skip_ws(s, n, 1);
	if (i < n && s[i] == '}')
		return -1;
	for (;;) {
		struct json_value k = { s + i, 0 };
		size_t start = i, vstart;

		if (i >= n || s[i] != '"' || skip_string(s, n, &i))
			return -1;
		k.n = i - start;
		i = skip_ws(s, n, i);
		if (i >= n || s[i] != ':')
			return -1;
		vstart = i = skip_ws(s, n, i + 1);
		if (skip_value(s, n, &i, 1))
			return -1;
		if (key_is(k, key)) {
			out->p = s + vstart;
			out->n = i - vstart;
			found = 0;
		}
		i = skip_ws(s, n, i);
		if (i < n && s[i] == '}')
			return found;
		if (i >= n || s[i] != ',')
			return -1;
		i = skip_ws(s, n, i + 1);
	}
}

int json_next(struct json_value arr, size_t *pos, struct json_value *elem)
{
	const char *s = arr.p;
	size_t n = arr.n, i = *pos, start;

	if (!n || s[0] != '[')
		return -1;
	if (i == 0) {
		i = skip_ws(s, n, 1);
		if (i < n && s[i] == ']')
			return 0;
	} else if (i >= n) {
		return 0;
	}
	start = i;
	if (skip_value(s, n, &i, 1))
		return -1;
	elem->p = s + start;
	elem->n = i - start;
	i = skip_ws(s, n, i);
	if (i < n && s[i] == ']')
		*pos = n; /* the last one */
	else if (i < n && s[i] == ',')
		*pos = skip_ws(s, n, i + 1);
	else
		return -1;
	return 1;
}

int json_bool(struct json_value v, bool *out)
{
	if (v.n == 4 && !memcmp(v.p, "true", 4))
		*out = true;
	else if (v.n == 5 && !memcmp(v.p, "false", 5))
		*out = false;
	else
		return -1;
	return 0;
}

int json_u64(struct json_value v, uint64_t *out)
{
	uint64_t x = 0;

	if (!v.n || v.n > 20 || (v.p[0] == '0' && v.n > 1))
		return -1;
	for (size_t i = 0; i < v.n; i++) {
		unsigned d = (unsigned)(v.p[i] - '0');

		if (d > 9 || x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*out = x;
	return 0;
}
