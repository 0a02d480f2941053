// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "rotation.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define PREFIX "pyebpf-"
#define SUFFIX ".pb.gz"

/* A number with an optional unit suffix; the multiplier of each unit in `units`. */
static int parse_scaled(const char *s, const char *units, const double *mult, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v > 0))
		return -1;
	if (*end) {
		const char *u = end[1] ? NULL : strchr(units, *end);

		if (!u)
			return -1;
		v *= mult[u - units];
	}
	*out = v;
	return 0;
}

int parse_interval(const char *s, double *seconds)
{
	static const double mult[] = { 1, 60, 3600 };
	double v;

	if (parse_scaled(s, "smh", mult, &v) || v < 1 || v > 86400 * 7)
		return -1;
	*seconds = v;
	return 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	static const double mult[] = { 1024.0, 1024.0 * 1024, 1024.0 * 1024 * 1024 };
	double v;

	if (parse_scaled(s, "KMG", mult, &v) || v < 1 || v > 1e18)
		return -1;
	*bytes = (uint64_t)v;
	return 0;
}

void rotation_file_name(int64_t epoch_ns, uint64_t seq, char *buf, size_t size)
{
	time_t sec = (time_t)(epoch_ns / 1000000000);
	struct tm tm;
	char stamp[32];

	gmtime_r(&sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	snprintf(buf, size, PREFIX "%s.%03dZ-%06" PRIu64 SUFFIX, stamp, (int)(epoch_ns / 1000000 % 1000), seq);
}

struct file {
	char *name;
	uint64_t size;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct file *)a)->name, ((const struct file *)b)->name);
}

static int is_interval_file(const char *name)
{
	size_t n = strlen(name), p = strlen(PREFIX), s = strlen(SUFFIX);

	return n > p + s && !strncmp(name, PREFIX, p) && !strcmp(name + n - s, SUFFIX);
}

int rotation_prune(const char *dir, size_t keep, uint64_t max_bytes)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct file *v = NULL;
	size_t n = 0, cap = 0, first = 0;
	uint64_t total = 0;
	int deleted = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		struct stat st;

		if (!is_interval_file(e->d_name) || fstatat(dirfd(d), e->d_name, &st, 0) || !S_ISREG(st.st_mode))
			continue;
		xgrow(&v, &cap, n + 1, sizeof(*v));
		v[n].name = xstrdup(e->d_name);
		v[n++].size = (uint64_t)st.st_size;
		total += (uint64_t)st.st_size;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_name);
	/* Oldest first; the newest always stays. */
	while (first + 1 < n && ((keep && n - first > keep) || (max_bytes && total > max_bytes))) {
		if (unlinkat(dirfd(d), v[first].name, 0) == 0)
			deleted++;
		total -= v[first].size;
		first++;
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	closedir(d);
	return deleted;
}
