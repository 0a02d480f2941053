// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * /proc/kallsyms is ~120,000 lines the kernel formats as they are read: it
 * is read in large blocks and parsed by hand (sscanf per line and a string
 * per name were a third of record's start-up), names kept in the text read,
 * and sorted only when it is not (the kernel's own text comes sorted;
 * modules may not).
 */
#include "symbols/kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

#define READ_BLOCK ((size_t)1 << 20)
#define MAX_BYTES (512u << 20) /* a kernel's is ~10 MB: beyond this it is not one */

struct ksym {
	uint64_t addr;
	const char *name; /* into text */
};

struct kallsyms {
	struct ksym *syms;
	size_t n;
	char *text; /* the file, names NUL-terminated in place */
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The whole file, NUL-terminated; NULL with errno. */
static char *read_all(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 0, n = 0;
	char *buf = NULL;

	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t got;

		if (cap - n < READ_BLOCK + 1) {
			if (cap >= MAX_BYTES) {
				free(buf);
				close(fd);
				errno = EFBIG;
				return NULL;
			}
			cap = cap ? cap * 2 : 4 * READ_BLOCK;
			buf = xrealloc(buf, cap);
		}
		got = read(fd, buf + n, READ_BLOCK);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;

			free(buf);
			close(fd);
			errno = e;
			return NULL;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One line "ADDR TYPE NAME[\t[module]]" at p (up to end): its text symbol, or false. */
static bool parse_line(char *p, char *end, struct ksym *s)
{
	uint64_t addr = 0;
	int digits = 0, d;
	char type, *name;

	for (; p < end && (d = hex_digit(*p)) >= 0; p++, digits++)
		addr = addr << 4 | (uint64_t)d;
	if (!digits || digits > 16 || end - p < 4 || p[0] != ' ' || p[2] != ' ')
		return false;
	type = p[1];
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return false;
	name = p + 3;
	p = name;
	while (p < end && *p != '\t' && *p != ' ')
		p++;
	if (p == name)
		return false;
	*p = '\0'; /* the module name after it is dropped */
	s->addr = addr;
	s->name = name;
	return true;
}

struct kallsyms *kallsyms__load(const char *path)
{
	struct kallsyms *k;
	size_t len, cap = 0;
	bool any_nonzero = false, sorted = true;
	char *text = read_all(path, &len), *line;

	if (!text)
		return NULL;
	k = xcalloc(1, sizeof(*k));
	k->text = text;
	for (line = text; line < text + len;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line)), *end = nl ? nl : text + len;
		struct ksym s;

		if (parse_line(line, end, &s)) {
			any_nonzero |= s.addr != 0;
			if (k->n && s.addr < k->syms[k->n - 1].addr)
				sorted = false;
			xgrow(&k->syms, &cap, k->n + 1, sizeof(*k->syms));
			k->syms[k->n++] = s;
		}
		line = end + 1;
	}
	if (!any_nonzero) {
		kallsyms__free(k);
		errno = EPERM;
		return NULL;
	}
	if (!sorted)
		qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	return k;
}

void kallsyms__free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->text);
	free(k);
}

const char *kallsyms__lookup(const struct kallsyms *k, uint64_t addr, uint64_t *off)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (off)
		*off = addr - k->syms[lo - 1].addr;
	return k->syms[lo - 1].name;
}

struct kallsyms_loader {
	pthread_t thread;
	const char *path;
	struct kallsyms *k;
	int err;
};

static void *load_thread(void *arg)
{
	struct kallsyms_loader *l = arg;

	l->k = kallsyms__load(l->path);
	l->err = l->k ? 0 : errno;
	return NULL;
}

struct kallsyms_loader *kallsyms__load_async(const char *path)
{
	struct kallsyms_loader *l = xcalloc(1, sizeof(*l));

	l->path = path;
	if (pthread_create(&l->thread, NULL, load_thread, l)) {
		free(l);
		return NULL;
	}
	return l;
}

struct kallsyms *kallsyms__wait(struct kallsyms_loader *l)
{
	struct kallsyms *k;

	if (!l)
		return NULL;
	pthread_join(l->thread, NULL);
	k = l->k;
	errno = l->err;
	free(l);
	return k;
}
