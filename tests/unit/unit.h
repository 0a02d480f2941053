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

#endif
