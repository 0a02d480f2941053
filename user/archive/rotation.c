// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "archive/rotation.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

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

static bool digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/*
 * Only names pyebpf writes: "pyebpf-YYYYMMDDTHHMMSS.mmmZ-SEQ.pb.gz", SEQ of
 * 6 to 20 digits, the whole name; *seq is SEQ. Anything else in the
 * directory (a "pyebpf-demo.pb.gz" kept by hand) is never counted or deleted.
 */
bool rotation_parse_name(const char *name, uint64_t *seq)
{
	/* "pyebpf-" 20261122T101500.123Z "-" */
	const size_t stamp = strlen(PREFIX), seq_at = stamp + 20, suffix = strlen(SUFFIX);
	size_t n = strlen(name), nseq;
	char buf[24];

	if (n < seq_at + 7 + suffix || strncmp(name, PREFIX, stamp) != 0 || strcmp(name + n - suffix, SUFFIX) != 0)
		return false;
	nseq = n - suffix - seq_at;
	if (!digits(name + stamp, 8) || name[stamp + 8] != 'T' || !digits(name + stamp + 9, 6) ||
	    name[stamp + 15] != '.' || !digits(name + stamp + 16, 3) || name[stamp + 19] != 'Z' ||
	    name[seq_at] != '-' || nseq > 21 || !digits(name + seq_at + 1, nseq - 1))
		return false;
	snprintf(buf, sizeof(buf), "%.*s", (int)(nseq - 1), name + seq_at + 1);
	return parse_u64(buf, 0, UINT64_MAX, seq) == 0;
}

int64_t rotation_name_time(const char *name)
{
	const char *p = name + strlen(PREFIX);
	struct tm tm = { 0 };
	int ms;

	if (sscanf(p, "%4d%2d%2dT%2d%2d%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec, &ms) != 7)
		return 0;
	if (tm.tm_year < 1970 || tm.tm_year > 2200) /* nanoseconds since 1970 fit in 64 bits until 2262 */
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000000000LL + (int64_t)ms * 1000000LL;
}

/* By the time in the name (fixed width: sorts as text), then the sequence number. */
static int cmp_age(const void *a, const void *b)
{
	const struct rotation_file *x = a, *y = b;
	int c = strncmp(x->name, y->name, strlen(PREFIX) + 19);

	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct rotation_file *rotation_list(int dirfd, size_t *n)
{
	int fd = dup(dirfd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;
	struct rotation_file *v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		struct stat st;
		uint64_t seq;

		/* Regular files of our own name only; a symlink is never followed. */
		if (!rotation_parse_name(e->d_name, &seq) || fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		xgrow(&v, &cap, *n + 1, sizeof(*v));
		v[*n] = (struct rotation_file){ .name = xstrdup(e->d_name),
						.size = (uint64_t)st.st_size,
						.seq = seq,
						.start_ns = rotation_name_time(e->d_name),
						.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL +
							    st.st_mtim.tv_nsec,
						.uid = st.st_uid,
						.nlink = st.st_nlink,
						.dev = (uint64_t)st.st_dev,
						.ino = (uint64_t)st.st_ino };
		(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_age);
	return v;
}

void rotation_list_free(struct rotation_file *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/* Could pyebpf have written f? (rotation.h: rotation_prune) */
static bool ours(const struct rotation_file *f, const struct rotation_prune *pr)
{
	if (pr->written && !strcmp(f->name, pr->written))
		return true;
	return f->uid == geteuid() && f->nlink == 1 && f->start_ns && f->start_ns <= pr->now_ns + ROTATION_FUTURE_NS;
}

int rotation_prune(const char *dir, struct rotation_prune *pr)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct rotation_file *v;
	size_t n = 0, kept = 0, left, newest = SIZE_MAX;
	uint64_t total = 0;
	int deleted = 0;

	pr->foreign = 0;
	pr->unsent_deleted = 0;
	if (fd < 0)
		return -1;
	v = rotation_list(fd, &n);
	/* Ours only, oldest first; the file just written is the newest whatever its name says. */
	for (size_t i = 0; i < n; i++) {
		if (!ours(&v[i], pr)) {
			pr->foreign++;
			free(v[i].name);
			continue;
		}
		if (pr->written && !strcmp(v[i].name, pr->written))
			newest = kept;
		v[kept++] = v[i];
	}
	if (newest != SIZE_MAX && newest + 1 < kept) {
		struct rotation_file w = v[newest];

		memmove(&v[newest], &v[newest + 1], (kept - newest - 1) * sizeof(*v));
		v[kept - 1] = w;
	}
	left = kept;
	for (size_t i = 0; i < kept; i++)
		total += v[i].size;
	/* Sent files (all, when nothing is pushed) oldest first, then unsent
	 * ones for the disk bound alone; the newest always stays. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i + 1 < kept; i++) {
			if (!v[i].name) /* deleted in the first pass */
				continue;
			bool unsent = pr->unsent && pr->unsent(pr->unsent_ctx, v[i].name);
			bool over_keep = pr->keep && left > pr->keep,
			     over_disk = pr->max_bytes && total > pr->max_bytes;

			if (unsent != (pass == 1) || (!over_disk && (unsent || !over_keep)))
				continue;
			if (unlinkat(fd, v[i].name, 0) == 0) {
				deleted++;
				if (unsent) {
					pr->unsent_deleted++;
					fprintf(stderr,
						"pyebpf: deleted %s/%s before it was pushed (beyond --max-disk %" PRIu64
						" bytes while a backend is away)\n",
						dir, v[i].name, pr->max_bytes);
				} else if (over_keep) {
					fprintf(stderr, "pyebpf: deleted %s/%s (beyond --keep %zu)\n", dir, v[i].name,
						pr->keep);
				} else {
					fprintf(stderr, "pyebpf: deleted %s/%s (beyond --max-disk %" PRIu64 " bytes)\n",
						dir, v[i].name, pr->max_bytes);
				}
			} else if (errno != ENOENT) {
				err_msg("cannot delete %s/%s: %s", dir, v[i].name, strerror(errno));
			}
			total -= v[i].size;
			left--;
			free(v[i].name);
			v[i].name = NULL;
		}
	}
	rotation_list_free(v, kept);
	close(fd);
	return deleted;
}
