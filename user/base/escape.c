// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "base/escape.h"

#include <string.h>

#include "base/util.h"

/* The UTF-8 character at s, as it is, or bad when it is not well-formed
 * (a viewer's parser refuses a whole file for one bad byte); returns the
 * bytes of s used. */
static size_t utf8_put(FILE *out, const char *s, const char *bad)
{
	size_t n = utf8_valid_len(s);

	if (!n) {
		fputs(bad, out);
		return 1;
	}
	fwrite(s, 1, n, out);
	return n;
}

void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else if (c < 0x80)
			fputc(c, out);
		else
			s += utf8_put(out, s, "\\ufffd") - 1;
	}
	fputc('"', out);
}

void xml_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		default:
			/* XML 1.0 forbids most control characters even as references. */
			if (c >= 0x80)
				s += utf8_put(out, s, "\xef\xbf\xbd") - 1; /* U+FFFD */
			else
				fputc(c < 0x20 && c != '\t' && c != '\n' && c != '\r' ? '?' : c, out);
		}
	}
}

char *text_escape(const char *in, char *out, size_t size)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t o = 0;

	if (!size)
		return out;
	while (*s) {
		char esc[8];
		size_t n = 1;
		const char *piece = esc;

		if (*s < 0x20 || *s == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", *s);
		} else if (*s < 0x80) {
			esc[0] = (char)*s;
			esc[1] = '\0';
		} else if ((n = utf8_valid_len((const char *)s)) == 0) {
			n = 1;
			snprintf(esc, sizeof(esc), "\\x%02x", *s);
		} else if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) {
			snprintf(esc, sizeof(esc), "\\u00%02x", s[1]); /* C1 control, e.g. CSI */
		} else {
			piece = (const char *)s; /* n bytes of UTF-8 as they are */
		}
		size_t len = piece == esc ? strlen(esc) : n;
		if (o + len + 1 > size)
			break;
		memcpy(out + o, piece, len);
		o += len;
		s += n;
	}
	out[o] = '\0';
	return out;
}
