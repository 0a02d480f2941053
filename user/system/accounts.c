// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "system/accounts.h"
#include "system/target_fs.h"

#include <string.h>

char *accounts__read(const char *path, size_t *len)
{
	/* pyebpf's own view of the host (pid 0): a regular file, not blocking. */
	char *buf = target_read(0, path, ACCOUNTS_FILE_MAX, len);

	if (buf && *len == ACCOUNTS_FILE_MAX) { /* cut: keep whole lines only */
		while (*len && buf[*len - 1] != '\n')
			(*len)--;
		buf[*len] = '\0';
	}
	return buf;
}

/* Field i (0-based) of a colon-separated line [line, end): its start and length. */
static int field(const char *line, const char *end, int i, const char **f, size_t *flen)
{
	const char *p = line;

	for (; i > 0; i--) {
		p = memchr(p, ':', (size_t)(end - p));
		if (!p)
			return -1;
		p++;
	}
	*f = p;
	const char *colon = memchr(p, ':', (size_t)(end - p));
	*flen = (size_t)((colon ? colon : end) - p);
	return 0;
}

/* A decimal id that fills the whole field and fits 32 bits. */
static int parse_id(const char *f, size_t flen, unsigned *out)
{
	unsigned long v = 0;

	if (!flen || flen > 10)
		return -1;
	for (size_t i = 0; i < flen; i++) {
		if (f[i] < '0' || f[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(f[i] - '0');
	}
	if (v > 0xffffffffUL)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int field_is(const char *f, size_t flen, const char *s)
{
	return strlen(s) == flen && !memcmp(f, s, flen);
}

/* The next line at *pos before `all`: [*line, *end) without its newline;
 * 0 once none is left. */
static int next_line(const char **pos, const char *all, const char **line, const char **end)
{
	const char *nl;

	if (*pos >= all)
		return 0;
	nl = memchr(*pos, '\n', (size_t)(all - *pos));
	*line = *pos;
	*end = nl ? nl : all;
	*pos = *end + 1;
	return 1;
}

int accounts__user(const char *passwd, size_t len, const char *name, uid_t *uid, gid_t *gid)
{
	if (!*name || strchr(name, ':'))
		return -1;
	const char *pos = passwd, *line, *end;

	while (next_line(&pos, passwd + len, &line, &end)) {
		const char *f;
		size_t flen;
		unsigned u, g;

		/* name:password:uid:gid:gecos:home:shell */
		if (field(line, end, 0, &f, &flen) || !field_is(f, flen, name))
			continue;
		if (field(line, end, 2, &f, &flen) || parse_id(f, flen, &u) || field(line, end, 3, &f, &flen) ||
		    parse_id(f, flen, &g))
			continue;
		*uid = u;
		*gid = g;
		return 0;
	}
	return -1;
}

/* Does the comma-separated member list [f, f + flen) hold name? */
static int has_member(const char *f, size_t flen, const char *name)
{
	const char *end = f + flen;

	while (f < end) {
		const char *comma = memchr(f, ',', (size_t)(end - f));
		const char *stop = comma ? comma : end;

		if (field_is(f, (size_t)(stop - f), name))
			return 1;
		f = stop + 1;
	}
	return 0;
}

size_t accounts__groups(const char *group, size_t len, const char *name, gid_t primary, gid_t *out, size_t max)
{
	const char *pos = group, *line, *end;
	size_t n = 0;

	if (!max)
		return 0;
	out[n++] = primary;
	while (next_line(&pos, group + len, &line, &end)) {
		const char *f;
		size_t flen, i;
		unsigned g;

		/* name:password:gid:user,user */
		if (n >= max)
			break;
		if (field(line, end, 2, &f, &flen) || parse_id(f, flen, &g) || field(line, end, 3, &f, &flen) ||
		    !has_member(f, flen, name))
			continue;
		for (i = 0; i < n && out[i] != g; i++)
			;
		if (i == n)
			out[n++] = g;
	}
	return n;
}
