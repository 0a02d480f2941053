// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "python/qualname.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

struct line {
	const char *text; /* first non-blank character */
	size_t len;       /* up to the end of the line, from text */
	int indent;       /* -1: blank or comment */
};

/*
 * Split into lines, marking as blank (indent -1) every line that does not
 * start a statement: blank, comment, or begun inside brackets or a
 * triple-quoted string (a multi-line def's parameters, a docstring).
 */
static struct line *split_lines(const char *src, size_t len, size_t *n)
{
	struct line *v = NULL;
	size_t cap = 0, i = 0;
	int depth = 0;  /* open (), [], {} */
	char quote = 0; /* inside a triple-quoted string of this quote */

	*n = 0;
	while (i < len) {
		size_t start = i, end, p;
		int indent = 0;
		bool continued = depth > 0 || quote;

		while (i < len && src[i] != '\n')
			i++;
		end = i++;
		for (p = start; p < end && (src[p] == ' ' || src[p] == '\t'); p++)
			indent += src[p] == '\t' ? 8 - indent % 8 : 1;
		xgrow(&v, &cap, *n + 1, sizeof(*v));
		v[*n].text = src + p;
		v[*n].len = end - p;
		v[*n].indent = (continued || p == end || src[p] == '#' || src[p] == '\r') ? -1 : indent;
		(*n)++;
		/* Brackets and strings on this line, for the next one. */
		for (size_t q = p; q < end; q++) {
			char c = src[q];

			if (quote) {
				if (c == '\\')
					q++;
				else if (c == quote && q + 2 < end + 1 && src[q + 1] == quote && src[q + 2] == quote) {
					quote = 0;
					q += 2;
				}
				continue;
			}
			if (c == '#')
				break;
			if (c == '"' || c == '\'') {
				if (q + 2 < end && src[q + 1] == c && src[q + 2] == c) {
					quote = c;
					q += 2;
					continue;
				}
				for (q++; q < end && src[q] != c; q++) /* a one-line string */
					if (src[q] == '\\')
						q++;
				continue;
			}
			if (c == '(' || c == '[' || c == '{')
				depth++;
			else if ((c == ')' || c == ']' || c == '}') && depth > 0)
				depth--;
		}
	}
	return v;
}

/* "class X" or "def X" / "async def X" at the start of the line: X, and whether it is a class. */
static bool header(const struct line *l, char *name, size_t size, bool *is_class)
{
	const char *t = l->text, *end = l->text + l->len;
	size_t k = 0;

	if (l->indent < 0)
		return false;
	if (end - t > 6 && !strncmp(t, "async ", 6))
		t += 6;
	if (end - t > 4 && !strncmp(t, "def ", 4)) {
		*is_class = false;
		t += 4;
	} else if (end - t > 6 && !strncmp(t, "class ", 6)) {
		*is_class = true;
		t += 6;
	} else {
		return false;
	}
	while (t < end && *t == ' ')
		t++;
	/* identifiers: ASCII letters, digits, '_', and any non-ASCII (UTF-8) byte */
	while (t < end && (isalnum((unsigned char)*t) || *t == '_' || (unsigned char)*t >= 0x80) && k + 1 < size)
		name[k++] = *t++;
	name[k] = '\0';
	return k > 0;
}

char *py_qualname_from_source(const char *src, size_t len, int firstlineno, const char *name)
{
	size_t n, at;
	struct line *lines;
	char prefix[2048] = "", part[256];
	bool is_class;
	int indent;

	if (!src || firstlineno < 1 || !strcmp(name, "<module>"))
		return NULL;
	lines = split_lines(src, len, &n);
	if ((size_t)firstlineno > n) {
		free(lines);
		return NULL;
	}
	at = (size_t)firstlineno - 1;
	/* A def's first line may be a decorator: its def follows, named `name`. */
	if (name[0] != '<') {
		size_t k = at;

		while (k < n && k < at + 50 &&
		       !(header(&lines[k], part, sizeof(part), &is_class) && !is_class && !strcmp(part, name)))
			k++;
		if (k == n || k == at + 50) {
			free(lines);
			return NULL; /* not the source this code came from */
		}
		at = k;
	}
	indent = lines[at].indent;
	/* Out through the enclosing blocks. */
	for (size_t k = at; k-- > 0 && indent > 0;) {
		if (lines[k].indent < 0 || lines[k].indent >= indent)
			continue;
		indent = lines[k].indent;
		if (!header(&lines[k], part, sizeof(part), &is_class))
			continue; /* if/for/with/try: no name of their own */
		/* prefix = part + separator + prefix, when it fits */
		const char *sep = is_class ? "." : ".<locals>.";
		size_t pl = strlen(part), sl = strlen(sep), rest = strlen(prefix);
		if (pl + sl + rest + 1 > sizeof(prefix))
			break;
		memmove(prefix + pl + sl, prefix, rest + 1);
		memcpy(prefix, part, pl);
		memcpy(prefix + pl, sep, sl);
	}
	free(lines);
	if (!prefix[0])
		return NULL;
	char *out = xmalloc(strlen(prefix) + strlen(name) + 1);
	sprintf(out, "%s%s", prefix, name);
	return out;
}
