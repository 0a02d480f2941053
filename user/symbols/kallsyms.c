// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * /proc/kallsyms is ~120,000 lines (5 MB) the kernel formats as they are
 * read: it is read in blocks and parsed by hand (sscanf per line and a
 * string per name were a third of record's start-up), and sorted only when
 * it is not (the kernel's own text comes sorted; modules may not). Only
 * what a lookup needs is kept, in two arrays: 12 bytes a function and its
 * name once. Keeping the text read and 16-byte entries held 7 MB of a
 * recorder's RSS; these hold 3 MB.
 */
#include "symbols/kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/util.h"

#define READ_BLOCK ((size_t)128 << 10)
#define MAX_BYTES (512u << 20) /* a kernel's is ~10 MB: beyond this it is not one */
/* 6.x pads every function and names the padding __pfx_NAME, on the line
 * right before NAME's: NAME is kept as the tail of that name. */
#define PADDING_PREFIX "__pfx_"
#define PADDING_PREFIX_LEN (sizeof(PADDING_PREFIX) - 1)

struct ksym {
	uint64_t addr;
	uint32_t name; /* offset in names */
} __attribute__((packed));

/*
 * A mapping that grows by mremap: megabytes built up in steps without the
 * copies a realloc leaves behind in malloc's arenas (freed, but resident),
 * and given back whole when unmapped.
 */
struct growing {
	char *p;
	size_t used, cap;
};

struct kallsyms {
	struct growing syms; /* struct ksym, by address */
	struct growing names;
	size_t n;
	/* While loading: the last name kept (the padding's, maybe), and what was seen. */
	uint32_t last_name;
	size_t last_len;
	bool any_nonzero, unsorted;
};

#define GROWING_FIRST ((size_t)256 << 10)

/* Room for `more` bytes at g->p + g->used; -1 with errno. */
static int growing_reserve(struct growing *g, size_t more)
{
	size_t cap = g->cap ? g->cap : GROWING_FIRST;
	void *p;

	if (g->used + more <= g->cap)
		return 0;
	while (cap < g->used + more)
		cap *= 2;
	p = g->p ? mremap(g->p, g->cap, cap, MREMAP_MAYMOVE)
		 : mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	g->p = p;
	g->cap = cap;
	return 0;
}

static void growing_free(struct growing *g)
{
	if (g->p)
		munmap(g->p, g->cap);
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* One line "ADDR TYPE NAME[\t[module]]" from p to end: its text symbol's
 * address and name (not terminated), or false. */
static bool parse_line(const char *p, const char *end, uint64_t *addr, const char **name, size_t *len)
{
	int digits = 0, d;
	const char *n;
	char type;

	*addr = 0;
	for (; p < end && (d = hex_digit(*p)) >= 0; p++, digits++)
		*addr = *addr << 4 | (uint64_t)d;
	if (!digits || digits > 16 || end - p < 4 || p[0] != ' ' || p[2] != ' ')
		return false;
	type = p[1];
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return false;
	n = p + 3;
	for (p = n; p < end && *p != '\t' && *p != ' ';)
		p++;
	*name = n;
	*len = (size_t)(p - n); /* the module name after it is dropped */
	return p > n;
}

/* Where the name is kept: the tail of the padding's name just kept before
 * it, or a copy. UINT32_MAX when out of memory. */
static uint32_t keep_name(struct kallsyms *k, const char *name, size_t len)
{
	uint32_t at;

	if (k->names.used && k->last_len == PADDING_PREFIX_LEN + len) {
		const char *last = k->names.p + k->last_name;

		if (!memcmp(last, PADDING_PREFIX, PADDING_PREFIX_LEN) && !memcmp(last + PADDING_PREFIX_LEN, name, len))
			return k->last_name + (uint32_t)PADDING_PREFIX_LEN;
	}
	if (growing_reserve(&k->names, len + 1))
		return UINT32_MAX;
	at = (uint32_t)k->names.used;
	memcpy(k->names.p + at, name, len);
	k->names.p[at + len] = '\0';
	k->names.used += len + 1;
	k->last_name = at;
	k->last_len = len;
	return at;
}

/* One line from p to end; -1 with errno when out of memory. */
static int add_line(struct kallsyms *k, const char *p, const char *end)
{
	struct ksym s, *syms;
	const char *name;
	uint64_t addr;
	size_t len;

	if (!parse_line(p, end, &addr, &name, &len))
		return 0;
	s.addr = addr;
	s.name = keep_name(k, name, len);
	if (s.name == UINT32_MAX || growing_reserve(&k->syms, sizeof(s)))
		return -1;
	syms = (struct ksym *)k->syms.p;
	k->any_nonzero |= s.addr != 0;
	k->unsorted |= k->n && s.addr < syms[k->n - 1].addr;
	memcpy(&syms[k->n++], &s, sizeof(s));
	k->syms.used += sizeof(s);
	return 0;
}

/*
 * The whole lines in buf[0 .. len), the first left out when *skip (the end
 * of a line too long to be a symbol's); what is left of the last line is
 * moved to buf's start, its length returned (or -1 with errno).
 */
static ssize_t add_lines(struct kallsyms *k, char *buf, size_t len, bool *skip)
{
	char *p = buf, *end = buf + len, *nl;

	while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
		if (!*skip && add_line(k, p, nl))
			return -1;
		*skip = false;
		p = nl + 1;
	}
	memmove(buf, p, (size_t)(end - p));
	return end - p;
}

/* Every line of fd; 0 or an errno. */
static int read_lines(struct kallsyms *k, int fd)
{
	char *buf = xmalloc(READ_BLOCK);
	size_t have = 0, total = 0;
	bool skip = false;
	int err = 0;

	for (;;) {
		ssize_t got = read(fd, buf + have, READ_BLOCK - have), left;

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			err = got < 0 ? errno : 0;
			break;
		}
		total += (size_t)got;
		if (total > MAX_BYTES) {
			err = EFBIG;
			break;
		}
		left = add_lines(k, buf, have + (size_t)got, &skip);
		if (left < 0) {
			err = errno;
			break;
		}
		have = (size_t)left;
		if (have == READ_BLOCK) { /* no symbol's line is this long: the rest of it goes too */
			have = 0;
			skip = true;
		}
	}
	/* The last line, without its newline. */
	if (!err && !skip && add_line(k, buf, buf + have))
		err = errno;
	free(buf);
	return err;
}

struct kallsyms *kallsyms__load(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	struct kallsyms *k;

	if (fd < 0)
		return NULL;
	k = xcalloc(1, sizeof(*k));
	err = read_lines(k, fd);
	close(fd);
	if (!err && !k->any_nonzero)
		err = EPERM; /* kptr_restrict: every address reads as zero */
	if (err) {
		kallsyms__free(k);
		errno = err;
		return NULL;
	}
	if (k->unsorted)
		qsort(k->syms.p, k->n, sizeof(struct ksym), cmp_ksym);
	return k;
}

void kallsyms__free(struct kallsyms *k)
{
	if (!k)
		return;
	growing_free(&k->syms);
	growing_free(&k->names);
	free(k);
}

const char *kallsyms__lookup(const struct kallsyms *k, uint64_t addr, uint64_t *off)
{
	const struct ksym *syms = (const struct ksym *)k->syms.p;
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (off)
		*off = addr - syms[lo - 1].addr;
	return k->names.p + syms[lo - 1].name;
}

struct kallsyms_loader {
	pthread_t thread;
	const char *path;
	struct kallsyms *k;
	int err;
	int done; /* set by the thread as it ends (atomics) */
};

static void *load_thread(void *arg)
{
	struct kallsyms_loader *l = arg;

	l->k = kallsyms__load(l->path);
	l->err = l->k ? 0 : errno;
	__atomic_store_n(&l->done, 1, __ATOMIC_RELEASE);
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

bool kallsyms__ready(const struct kallsyms_loader *l)
{
	return !l || __atomic_load_n(&l->done, __ATOMIC_ACQUIRE);
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
