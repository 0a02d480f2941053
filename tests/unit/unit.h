/* Shared by the unit tests; they run from build/, fixtures are in build/fixtures. */
#ifndef PYEBPF_UNIT_H
#define PYEBPF_UNIT_H

#include <criterion/criterion.h>
#include <errno.h>
#include <unistd.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXTURE(name) "fixtures/" name

/* Write `text` to a new temporary file; returns its path (static buffer). */
static inline const char *write_temp(const char *text)
{
	static char path[64];
	FILE *f;
	int fd;

	strcpy(path, "/tmp/pyebpf-unit-XXXXXX");
	fd = mkstemp(path);
	cr_assert(fd >= 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

/* A file of `size` bytes of 'x' named dir/name. */
static inline void make_file(const char *dir, const char *name, size_t size)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert(f);
	for (size_t i = 0; i < size; i++)
		fputc('x', f);
	fclose(f);
}

struct profile;

/* What a writer of the profile writes, as a string (malloc'd). */
static inline char *written(int (*write)(const struct profile *, FILE *), const struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert(f);
	cr_assert_eq(write(p, f), 0);
	fclose(f);
	return buf;
}

/* How many times needle occurs in s (overlapping). */
static inline size_t occurrences_of(const char *s, const char *needle)
{
	size_t n = 0;

	for (const char *q = strstr(s, needle); q; q = strstr(q + 1, needle))
		n++;
	return n;
}

#endif
