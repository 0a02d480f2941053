// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "archive/archive.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/mem_view.h"
#include "read/pprof.h"
#include "archive/rotation.h"
#include "base/util.h"

/* The whole file, at most PPROF_MAX_SIZE bytes; NULL after one error line. */
static uint8_t *read_file(int dirfd, const char *path, int flags, size_t *len)
{
	/* O_NONBLOCK: a FIFO is refused below, not waited on. */
	int fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | flags);
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	struct stat st;

	if (fd < 0) {
		err_msg("cannot read '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err_msg("cannot read '%s': not a regular file", path);
		close(fd);
		return NULL;
	}
	/* Refused by its size before a byte is read (a sparse 2 GiB file took
	 * seconds to read); then read to at most the limit, as it may grow. */
	if ((uint64_t)st.st_size > PPROF_MAX_SIZE) {
		err_msg("cannot read '%s': larger than %llu MiB", path, PPROF_MAX_SIZE >> 20);
		close(fd);
		return NULL;
	}
	cap = (size_t)st.st_size + 1;
	buf = xmalloc(cap);
	for (;;) {
		ssize_t r;

		if (n > PPROF_MAX_SIZE) {
			err_msg("cannot read '%s': larger than %llu MiB", path, PPROF_MAX_SIZE >> 20);
			goto fail;
		}
		if (n == cap)
			xgrow(&buf, &cap, n + 65536, 1);
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err_msg("cannot read '%s': %s", path, strerror(errno));
			goto fail;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

struct profile *recording__read(const char *path)
{
	return recording__read_at(AT_FDCWD, path, 0);
}

struct profile *recording__read_at(int dirfd, const char *path, int flags)
{
	size_t len;
	uint8_t *data = read_file(dirfd, path, flags, &len);
	struct profile *p;
	char why[256];

	if (!data)
		return NULL;
	p = pprof__read(data, len, why, sizeof(why));
	free(data);
	if (!p)
		err_msg("cannot read '%s': %s", path, why);
	return p;
}

static struct archive_file *push(struct archive *a, char *path, int64_t start, int64_t end)
{
	xgrow(&a->v, &a->cap, a->n + 1, sizeof(*a->v));
	a->v[a->n] = (struct archive_file){ .path = path, .start_ns = start, .end_ns = end };
	return &a->v[a->n++];
}

static int add_dir(struct archive *a, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct rotation_file *v;
	size_t n;

	if (fd < 0) {
		err_msg("cannot read '%s': %s", dir, strerror(errno));
		return -1;
	}
	v = rotation_list(fd, &n);
	close(fd);
	if (!n) {
		err_msg("'%s' holds no interval files (pyebpf-*.pb.gz, as record --continuous writes them)", dir);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		char *path;

		path = xasprintf("%s/%s", dir, v[i].name);
		push(a, path, v[i].start_ns, i + 1 < n ? v[i + 1].start_ns : INT64_MAX);
	}
	rotation_list_free(v, n);
	return 0;
}

int archive__add(struct archive *a, const char *arg)
{
	struct stat st;

	if (!*arg) {
		err_msg("empty recording path");
		return -1;
	}
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
		return add_dir(a, arg);
	/* Read (and refused when not a regular file) when loaded. */
	push(a, xstrdup(arg), INT64_MIN, INT64_MAX);
	return 0;
}

void archive__free(struct archive *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].path);
		profile__free(a->v[i].read);
	}
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/* One of the archive's files read, and counted as read. */
static struct profile *read_counted(struct archive *a, const struct archive_file *af)
{
	a->reads++;
	return a->reader ? a->reader(a->reader_ctx, (size_t)(af - a->v)) : recording__read(af->path);
}

/* Read a file whose start is not known from its name: its start and end now. */
static int learn(struct archive *a, struct archive_file *af)
{
	const struct profile_meta *m;

	if (af->read || af->start_ns != INT64_MIN)
		return 0;
	if (!(af->read = read_counted(a, af)))
		return -1;
	m = profile__meta_of(af->read);
	af->start_ns = m->start_epoch_ns;
	af->end_ns = m->start_epoch_ns + (m->duration_ns > 0 ? m->duration_ns : 0);
	af->start_exact = af->end_exact = true;
	return 0;
}

/* Nothing kept: what the recordings cover, to say so, ends where the newest
 * file ends, which only the file tells (a name gives its start). */
static void newest_end(struct archive *a, struct archive_stats *st)
{
	struct archive_file *newest = NULL;
	struct profile *in;

	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].start_ns != INT64_MIN && (!newest || a->v[i].start_ns > newest->start_ns))
			newest = &a->v[i];
	if (!newest || newest->end_ns != INT64_MAX || !(in = read_counted(a, newest)))
		return;
	const struct profile_meta *m = profile__meta_of(in);

	newest->end_ns = m->start_epoch_ns + (m->duration_ns > 0 ? m->duration_ns : 0);
	if (newest->end_ns > st->last_ns)
		st->last_ns = newest->end_ns;
	profile__free(in);
}

static int cmp_start(const void *a, const void *b)
{
	const struct archive_file *x = *(struct archive_file *const *)a, *y = *(struct archive_file *const *)b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Interval names tell starts to the millisecond, rounded down. */
#define NAME_SLACK_NS 1000000

struct merge {
	struct profile *out;
	const char *first_path;
	int64_t start_ns, end_ns;
	uint64_t period_ns;
	bool mixed; /* of different frequencies */
};

/* period / finer, rounded: periods are at most PPROF_MAX_PERIOD, no overflow. */
static uint64_t ratio(uint64_t period_ns, uint64_t finer_ns)
{
	return (period_ns + finer_ns / 2) / finer_ns;
}

/* Would `samples` counted `scale` times each, added to `so_far`, pass what
 * a count may hold (pprof's int64)? */
static bool overflows(uint64_t so_far, uint64_t samples, uint64_t scale)
{
	return scale && (samples > (uint64_t)INT64_MAX / scale || so_far > (uint64_t)INT64_MAX - samples * scale);
}

/* Count everything so far in samples of a finer period. */
static void refine(struct merge *m, uint64_t period_ns)
{
	uint64_t k = ratio(m->period_ns, period_ns);
	struct filter all;
	struct profile *finer;

	if (k > 1) {
		filter__init(&all);
		finer = profile__new();
		*profile__meta(finer) = *profile__meta_of(m->out);
		filter__copy(&all, m->out, finer, 0, k, 0);
		profile__free(m->out);
		m->out = finer;
	}
	m->period_ns = period_ns;
}

/* newest: the last file merged (what a memory recording holds is its newest interval's). */
static int merge_one(struct merge *m, const char *path, const struct profile *in, const struct filter *f, int64_t since,
		     int64_t until, uint32_t flags, bool newest, struct archive_stats *st)
{
	const struct profile_meta *im = profile__meta_of(in);
	struct filter w;
	uint64_t scale = 1;

	if (im->period_ns > PPROF_MAX_PERIOD) {
		err_msg("cannot read '%s': its sampling period of %" PRIu64 " ns is not a period (0 to one hour)", path,
			im->period_ns);
		return -1;
	}
	if (!m->out) {
		m->out = profile__new();
		m->first_path = path;
		m->start_ns = im->start_epoch_ns;
		m->end_ns = im->start_epoch_ns + im->duration_ns;
		m->period_ns = im->period_ns;
		profile__meta(m->out)->wall = im->wall;
		profile__meta(m->out)->mem_sample_bytes = im->mem_sample_bytes;
	} else if (im->wall != profile__meta_of(m->out)->wall ||
		   !im->mem_sample_bytes != !profile__meta_of(m->out)->mem_sample_bytes) {
		err_msg("cannot merge '%s' and '%s': one records %s, the other %s", m->first_path, path,
			profile__kind(m->out), profile__kind(in));
		return -1;
	}
	if (im->period_ns && im->period_ns != m->period_ns) {
		uint64_t finer = im->period_ns < m->period_ns || !m->period_ns ? im->period_ns : m->period_ns;
		uint64_t k = m->period_ns ? ratio(m->period_ns, finer) : 1;

		scale = ratio(im->period_ns, finer);
		if (overflows(0, profile__total(m->out), k) ||
		    overflows(profile__total(m->out) * k, profile__total(in), scale)) {
			err_msg("cannot merge '%s' and '%s': counted in samples of %" PRIu64 " ns, they would pass "
				"%" PRId64 " samples",
				m->first_path, path, finer, INT64_MAX);
			return -1;
		}
		if (finer < m->period_ns)
			refine(m, finer);
		m->period_ns = finer;
		m->mixed = true;
	} else if (overflows(profile__total(m->out), profile__total(in), 1)) {
		err_msg("cannot merge '%s' and '%s': they would pass %" PRId64 " samples", m->first_path, path,
			INT64_MAX);
		return -1;
	}
	if (im->mem_sample_bytes && im->mem_sample_bytes != profile__meta_of(m->out)->mem_sample_bytes) {
		err_msg("cannot merge '%s' and '%s': their memory samples stand for %" PRIu64 " and %" PRIu64 " bytes",
			m->first_path, path, profile__meta_of(m->out)->mem_sample_bytes, im->mem_sample_bytes);
		return -1;
	}
	w = filter__for_window(f, im->start_epoch_ns, since, until);
	w.timed = f->timed || since != INT64_MIN || until != INT64_MAX;
	/* Each interval of a memory recording holds what was held at its end:
	 * the newest one says what is held now, the others what grew. */
	if (im->mem_sample_bytes && !newest)
		w.mem_kind = FILTER_MEM_GROWN;
	/* An older interval's held memory is not read, not left out: counted in neither. */
	uint64_t unread = w.mem_kind == FILTER_MEM_GROWN ? mem_view_points(in, true) : 0;

	st->samples += profile__total(in) - unread;
	st->other_time += filter__other_time(&w, in);
	st->dropped += filter__copy(&w, in, m->out,
				    im->start_epoch_ns > m->start_ns ? (uint64_t)(im->start_epoch_ns - m->start_ns) : 0,
				    scale ? scale : 1, flags) -
		       unread;
	if (im->start_epoch_ns + im->duration_ns > m->end_ns)
		m->end_ns = im->start_epoch_ns + im->duration_ns;
	return 0;
}

/*
 * A wall-clock bound written as an interval file's name tells it (to the
 * millisecond) means that interval's exact start: copied from `ls`, a window
 * takes whole intervals, no sample more or less. -1 after one error line.
 */
static int snap(struct archive *a, int64_t *bound, bool *snapped)
{
	for (size_t i = 0; i < a->n; i++) {
		struct archive_file *af = &a->v[i];

		if (af->start_exact || *bound < af->start_ns || *bound >= af->start_ns + NAME_SLACK_NS)
			continue;
		if (!(af->read = read_counted(a, af)))
			return -1;
		/* The interval before ends where this one starts. */
		for (size_t k = 0; k < a->n; k++)
			if (a->v[k].end_ns == af->start_ns && !a->v[k].end_exact) {
				a->v[k].end_ns = profile__meta_of(af->read)->start_epoch_ns;
				a->v[k].end_exact = true;
			}
		af->start_ns = profile__meta_of(af->read)->start_epoch_ns;
		af->start_exact = true;
		*bound = af->start_ns;
		*snapped = true;
		return 0;
	}
	return 0;
}

struct profile *archive__load(struct archive *a, const struct filter *f, uint32_t flags, struct archive_stats *st)
{
	struct archive_file **sel = xcalloc(a->n + 1, sizeof(*sel));
	struct merge m = { 0 };
	size_t nsel = 0;
	int64_t start0 = INT64_MAX, since, until;
	bool offsets = f->since_ns || f->until_ns != UINT64_MAX;

	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < a->n; i++)
		if (learn(a, &a->v[i]))
			goto fail;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i].start_ns < start0)
			start0 = a->v[i].start_ns;
	/* Seconds into "the recording" count from the earliest file's own start. */
	for (size_t i = 0; offsets && i < a->n; i++)
		if (a->v[i].start_ns == start0 && !a->v[i].read) {
			if (!(a->v[i].read = read_counted(a, &a->v[i])))
				goto fail;
			start0 = a->v[i].start_ns = profile__meta_of(a->v[i].read)->start_epoch_ns;
			a->v[i].start_exact = true;
			break;
		}
	filter__window(f, start0, &since, &until);
	if (!offsets && f->since_epoch_ns == INT64_MIN)
		since = INT64_MIN;
	bool since_snapped = false, until_snapped = false;
	if ((f->since_epoch_ns != INT64_MIN && since == f->since_epoch_ns && snap(a, &since, &since_snapped)) ||
	    (f->until_epoch_ns != INT64_MAX && until == f->until_epoch_ns && snap(a, &until, &until_snapped)))
		goto fail;
	st->since_ns = since;
	st->until_ns = until;
	st->first_ns = start0;
	st->last_ns = INT64_MIN;
	for (size_t i = 0; i < a->n; i++) {
		int64_t end = a->v[i].end_ns != INT64_MAX ? a->v[i].end_ns : a->v[i].start_ns;

		if (end > st->last_ns)
			st->last_ns = end;
	}
	for (size_t i = 0; i < a->n; i++) {
		struct archive_file *af = &a->v[i];

		if (af->start_ns - (af->start_exact ? 0 : NAME_SLACK_NS) >= until)
			continue;
		if ((since_snapped && af->start_ns < since) || (until_snapped && af->start_ns >= until))
			continue;
		if (af->end_ns != INT64_MAX && af->end_ns + (af->end_exact ? 0 : NAME_SLACK_NS) <= since)
			continue;
		sel[nsel++] = af;
	}
	if (nsel)
		qsort(sel, nsel, sizeof(*sel), cmp_start);
	for (size_t i = 0; i < nsel; i++) {
		struct archive_file *af = sel[i];
		struct profile *in = af->read ? af->read : read_counted(a, af);

		/* A bound snapped to an interval's start takes whole files: no
		 * sample of one interval is timed into the next. */
		int64_t s = since_snapped ? INT64_MIN : since, u = until_snapped ? INT64_MAX : until;

		af->read = NULL;
		if (!in || merge_one(&m, af->path, in, f, s, u, flags, i + 1 == nsel, st)) {
			profile__free(in);
			goto fail;
		}
		profile__free(in);
	}
	free(sel);
	if (m.out && m.end_ns > st->last_ns)
		st->last_ns = m.end_ns;
	if (st->samples == st->dropped)
		newest_end(a, st);
	st->files = a->reads;
	if (!m.out) {
		m.out = profile__new();
		return m.out;
	}
	if (m.mixed) {
		char note[160];

		snprintf(note, sizeof(note),
			 "pyebpf report: recordings of different frequencies merged, counted in samples of %.0f Hz",
			 1e9 / (double)m.period_ns);
		profile__add_comment(m.out, note);
	}
	struct profile_meta *om = profile__meta(m.out);
	om->period_ns = m.period_ns;
	om->start_epoch_ns = m.start_ns;
	om->duration_ns = m.end_ns - m.start_ns;
	return m.out;
fail:
	profile__free(m.out);
	free(sel);
	return NULL;
}
