/* pprof reader: what the writer wrote comes back exactly; bad input is one reason, not a crash. */
#include "unit.h"

#include <inttypes.h>

#include "frames.h"
#include "base/gzip.h"
#include "profile/profile.h"
#include "profile.pb-c.h"
#include "read/pprof.h"
#include "write/pprof.h"

/* Every add of a profile as text: time, count, labels and frames, by value. */
static char *describe(const struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct profile_event_cursor c = { 0 };
	struct profile_event ev;
	const struct profile_meta *m = profile__meta_of(p);

	size_t nc;
	const char *const *comments = profile__comments(p, &nc);

	fprintf(f, "period=%" PRIu64 " start=%" PRId64 " duration=%" PRId64 "\n", m->period_ns, m->start_epoch_ns,
		m->duration_ns);
	for (size_t i = 0; i < nc; i++)
		fprintf(f, "comment=%s\n", comments[i]);
	while (profile__next_event(p, &c, &ev)) {
		struct profile_entry e;

		profile__entry(p, ev.entry, &e);
		fprintf(f,
			"t=%" PRIu64 " n=%u pid=%u tid=%u comm=%s thread=%s flags=%u python=%s cgroup=%" PRIu64
			" path=%s container=%s ns_pid=%u |",
			ev.time_ns, ev.count, e.labels.pid, e.labels.tid, profile__str_at(p, e.labels.comm),
			profile__str_at(p, e.labels.thread), e.labels.flags, profile__str_at(p, e.labels.python),
			e.labels.cgroup, profile__str_at(p, e.labels.cgroup_path),
			profile__str_at(p, e.labels.container), e.labels.ns_pid);
		for (uint32_t k = 0; k < e.nframes; k++) {
			const struct frame *fr = profile__frame_at(p, e.frames[k]);

			fprintf(f, " %u:%s:%s:%u:%u:%" PRIx64, fr->kind, profile__str_at(p, fr->name),
				profile__str_at(p, fr->module), fr->line, fr->start_line, fr->offset);
		}
		fputc('\n', f);
	}
	fclose(f);
	return buf;
}

static uint8_t *write_pprof(const struct profile *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	cr_assert_eq(pprof__write(p, f), 0);
	fclose(f);
	return (uint8_t *)buf;
}

static struct profile *sample_profile(void)
{
	struct profile *p = profile__new();
	uint32_t mod = frame(p, FRAME_PYTHON, "<module>", "/app/tëst.py", 10, 1);
	uint32_t fit = frame(p, FRAME_PYTHON, "Model.fit", "/app/tëst.py", 42, 40);
	uint32_t mul = frame(p, FRAME_NATIVE, "geo::Matrix::multiply(int) const", "/usr/lib/libgeo.so", 0, 0);
	uint32_t raw = frame(p, FRAME_NATIVE, "", "/usr/lib/libgeo.so", 0, 0x1a2b);
	uint32_t ker = frame(p, FRAME_KERNEL, "do_syscall_64", "", 0, 0);
	uint32_t cut = frame(p, FRAME_MARK, "[truncated]", "", 0, 0);
	struct sample_labels a = { .pid = 7,
				   .tid = 8,
				   .comm = profile__str(p, "python3"),
				   .thread = profile__str(p, "MainThread"),
				   .flags = LABEL_GIL_KNOWN | LABEL_GIL_HELD,
				   .python = profile__str(p, "3.12.1"),
				   .cgroup = 4242,
				   .cgroup_path = profile__str(p, "/system.slice/docker-0123abcd.scope"),
				   .container = profile__str(p, "0123abcd"),
				   .ns_pid = 3 };
	struct sample_labels b = { .pid = 9, .tid = 9, .comm = profile__str(p, "busy") };
	uint32_t s1[] = { mod, fit }, s2[] = { cut, mod, fit, mul, raw, ker }, s3[] = { raw };

	*profile__meta(p) = (struct profile_meta){ .period_ns = 10101010,
						   .start_epoch_ns = 1700000000123456789LL,
						   .duration_ns = 3000000000LL };
	profile__add_at(p, &a, s1, 2, 1, 5000);
	profile__add_at(p, &a, s2, 6, 1, 15000);
	profile__add_at(p, &b, s3, 1, 1, 15001);
	profile__add_at(p, &a, s1, 2, 1, 25000);
	profile__add(p, &b, s3, 0, 4); /* untimed, no frames */
	profile__add_comment(p, "sampling lowered from 99 Hz to 49 Hz");
	return p;
}

Test(pprof_read, round_trip_keeps_every_sample)
{
	struct profile *p = sample_profile(), *q;
	size_t len;
	uint8_t *data = write_pprof(p, &len);
	char why[256] = "";

	q = pprof__read(data, len, why, sizeof(why));
	cr_assert(q, "%s", why);
	char *want = describe(p), *got = describe(q);
	cr_assert_str_eq(got, want);
	cr_assert_eq(profile__total(q), 8);
	cr_assert_eq(profile__nstacks(q), profile__nstacks(p));
	free(want);
	free(got);
	free(data);
	profile__free(p);
	profile__free(q);
}

Test(pprof_read, empty_recording)
{
	struct profile *p = profile__new(), *q;
	size_t len;
	uint8_t *data = write_pprof(p, &len);
	char why[256] = "";

	q = pprof__read(data, len, why, sizeof(why));
	cr_assert(q, "%s", why);
	cr_assert_eq(profile__total(q), 0);
	free(data);
	profile__free(p);
	profile__free(q);
}

static void expect_error(const uint8_t *data, size_t len, const char *want)
{
	char why[256] = "";
	struct profile *q = pprof__read(data, len, why, sizeof(why));

	cr_assert_null(q, "read as a profile; want: %s", want);
	cr_assert_str_eq(why, want);
}

Test(pprof_read, truncated_and_corrupt_files)
{
	struct profile *p = sample_profile();
	size_t len;
	uint8_t *data = write_pprof(p, &len);

	expect_error(data, len / 2, "truncated gzip data");
	expect_error(data, 2, "truncated gzip data");
	data[len / 2] ^= 0x55;
	data[len / 2 + 1] ^= 0x55;
	expect_error(data, len, "corrupt gzip data");
	expect_error((const uint8_t *)"", 0, "empty file");
	expect_error((const uint8_t *)"hello, world\n", 13, "not a pprof profile (the protobuf does not parse)");
	free(data);
	profile__free(p);
}

/* A plain (not gzipped) Profile message built by hand. */
static uint8_t *pack(const Perftools__Profiles__Profile *pp, size_t *len)
{
	*len = perftools__profiles__profile__get_packed_size(pp);
	uint8_t *buf = malloc(*len + 1);
	perftools__profiles__profile__pack(pp, buf);
	return buf;
}

/* A Go heap profile: its values are bytes and objects, not samples of time. */
Test(pprof_read, heap_profile_is_refused_by_name)
{
	Perftools__Profiles__Profile pp = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType a = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, b = a;
	Perftools__Profiles__ValueType *vts[] = { &a, &b };
	char *strs[] = { "", "alloc_objects", "count", "alloc_space", "bytes" };
	size_t len;
	uint8_t *buf;

	pp.n_string_table = 5;
	pp.string_table = strs;
	a.type = 1;
	a.unit = 2;
	b.type = 3;
	b.unit = 4;
	pp.n_sample_type = 2;
	pp.sample_type = vts;
	buf = pack(&pp, &len);
	expect_error(buf, len,
		     "not a CPU profile: its sample types are alloc_objects/count, alloc_space/bytes (pyebpf reads "
		     "samples/count, cpu/nanoseconds, or alloc_objects and inuse_objects)");
	free(buf);
}

/*
 * A memory profile counts points, each standing for its period in bytes:
 * a period no recorder uses, or points that stand for more bytes than the
 * adds of a view can carry, is refused in a line, not added 2^30 times.
 */
Test(pprof_read, memory_profile_of_impossible_bytes)
{
	Perftools__Profiles__Profile pp = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType a = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, b = a;
	Perftools__Profiles__ValueType *vts[] = { &a, &b };
	Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Perftools__Profiles__Sample *ss[] = { &s };
	int64_t values[] = { 0, 4294967295LL };
	char *strs[] = { "", "alloc_objects", "count", "inuse_objects" };
	size_t len;
	uint8_t *buf;

	pp.n_string_table = 4;
	pp.string_table = strs;
	a.type = 1;
	a.unit = 2;
	b.type = 3;
	b.unit = 2;
	pp.n_sample_type = 2;
	pp.sample_type = vts;
	s.n_value = 2;
	s.value = values;
	pp.n_sample = 1;
	pp.sample = ss;
	pp.period = (1LL << 30) + 1;
	buf = pack(&pp, &len);
	expect_error(buf, len, "its memory sampling period of 1073741825 bytes is not one (1 byte to 1 GiB)");
	free(buf);
	pp.period = 1LL << 30; /* 2^32 points of a GiB */
	buf = pack(&pp, &len);
	expect_error(buf, len, "its samples stand for more than 4503599626321920 bytes");
	free(buf);
	pp.period = 512 * 1024; /* 2 PiB held: a recording's worth, at the edge */
	buf = pack(&pp, &len);
	char why[256] = "";
	struct profile *q = pprof__read(buf, len, why, sizeof(why));
	cr_assert(q, "%s", why);
	cr_assert_eq(profile__meta_of(q)->mem_sample_bytes, 512 * 1024);
	profile__free(q);
	free(buf);
}

Test(pprof_read, dangling_indexes)
{
	Perftools__Profiles__Profile pp = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	Perftools__Profiles__ValueType *vts[] = { &vt };
	Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Perftools__Profiles__Sample *ss[] = { &s };
	Perftools__Profiles__Location l = PERFTOOLS__PROFILES__LOCATION__INIT;
	Perftools__Profiles__Location *ls[] = { &l };
	Perftools__Profiles__Line ln = PERFTOOLS__PROFILES__LINE__INIT;
	Perftools__Profiles__Line *lns[] = { &ln };
	char *strs[] = { "", "samples", "count" };
	uint64_t locs[] = { 1 }, bad_locs[] = { 7 };
	int64_t vals[] = { 3 };
	size_t len;
	uint8_t *buf;

	pp.n_string_table = 3;
	pp.string_table = strs;
	vt.type = 1;
	vt.unit = 2;
	pp.n_sample_type = 1;
	pp.sample_type = vts;
	s.n_value = 1;
	s.value = vals;
	s.n_location_id = 1;
	s.location_id = bad_locs;
	pp.n_sample = 1;
	pp.sample = ss;
	buf = pack(&pp, &len);
	expect_error(buf, len, "sample 0: location id 7 does not exist");
	free(buf);

	s.location_id = locs;
	l.id = 1;
	l.n_line = 1;
	l.line = lns;
	ln.function_id = 3;
	pp.n_location = 1;
	pp.location = ls;
	buf = pack(&pp, &len);
	expect_error(buf, len, "function id 3 does not exist");
	free(buf);

	vt.unit = 9;
	buf = pack(&pp, &len);
	expect_error(buf, len, "string index 9 out of range");
	free(buf);
}

Test(pprof_read, gzip_size_limit)
{
	static uint8_t zeros[1 << 20];
	char *gz = NULL;
	size_t gzlen = 0, outlen;
	FILE *f = open_memstream(&gz, &gzlen);
	uint8_t *out;
	const char *why = NULL;

	cr_assert_eq(gzip__write(zeros, sizeof(zeros), f), 0);
	fclose(f);
	cr_assert_lt(gzlen, 4096, "a megabyte of zeros compresses");
	cr_assert_eq(gzip__inflate((uint8_t *)gz, gzlen, sizeof(zeros) - 1, &out, &outlen, &why), -1);
	cr_assert_str_eq(why, "decompresses to more than the size limit");
	cr_assert_eq(gzip__inflate((uint8_t *)gz, gzlen, sizeof(zeros), &out, &outlen, &why), 0);
	cr_assert_eq(outlen, sizeof(zeros));
	free(out);
	free(gz);
}

#include <sys/resource.h>
#include <zlib.h>

static long max_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* A bomb is measured in constant memory and refused before any buffer of its size exists. */
Test(pprof_read, gzip_bomb_refused_without_holding_it, .timeout = 60)
{
	enum {
		CHUNK = 1 << 20,
		CHUNKS = 256
	};
	uint8_t *zeros = calloc(1, CHUNK);
	char *gz = NULL;
	size_t gzlen = 0, outlen;
	FILE *f = open_memstream(&gz, &gzlen);
	uint8_t *out;
	const char *why = NULL;
	z_stream z = { 0 };
	static uint8_t obuf[1 << 16];

	/* 256 MiB of zeros, gzip-framed, streamed into a small file. */
	cr_assert_eq(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
	for (int i = 0; i < CHUNKS; i++) {
		z.next_in = zeros;
		z.avail_in = CHUNK;
		int flush = i == CHUNKS - 1 ? Z_FINISH : Z_NO_FLUSH;
		do {
			z.next_out = obuf;
			z.avail_out = sizeof(obuf);
			deflate(&z, flush);
			fwrite(obuf, 1, sizeof(obuf) - z.avail_out, f);
		} while (z.avail_out == 0);
	}
	deflateEnd(&z);
	fclose(f);
	free(zeros);
	long before = max_rss_kb();
	cr_assert_eq(gzip__inflate((uint8_t *)gz, gzlen, 128u << 20, &out, &outlen, &why), -1);
	cr_assert_str_eq(why, "decompresses to more than the size limit");
	cr_assert_lt(max_rss_kb() - before, 16 * 1024, "refusing the bomb took %ld kB", max_rss_kb() - before);
	free(gz);
}

/* Mappings: the main executable first, each file at its link addresses with
 * its build id; a file nothing is known of (the kernel) gets a bare mapping
 * when a frame needs one. Read back and written again: the same bytes. */
Test(pprof_read, mappings_main_binary_first_with_extents_and_build_ids)
{
	struct profile *p = profile__new(), *q;
	uint32_t lib = profile__str(p, "/usr/lib/libblas.so.3"), exe = profile__str(p, "/usr/bin/python3.11");
	struct profile_module ml = { .module = lib,
				     .build_id = profile__str(p, "abcd"),
				     .start = 0x5000,
				     .limit = 0x64a99,
				     .file_offset = 0x5000 };
	struct profile_module me = { .module = exe,
				     .build_id = profile__str(p, "5711"),
				     .exe = true,
				     .start = 0x41f000,
				     .limit = 0x6d1289,
				     .file_offset = 0x1f000 };
	uint32_t f[3] = { frame(p, FRAME_NATIVE, "main", "/usr/bin/python3.11", 0, 0),
			  frame(p, FRAME_NATIVE, "", "/usr/lib/libblas.so.3", 0, 0x6000),
			  frame(p, FRAME_KERNEL, "do_syscall_64", "", 0, 0) };
	struct sample_labels l = { .pid = 1, .tid = 1, .comm = profile__str(p, "python3") };
	size_t len, len2;

	profile__note_module(p, &ml); /* noted first, listed after the executable */
	profile__note_module(p, &me);
	profile__add(p, &l, f, 3, 2);
	uint8_t *data = write_pprof(p, &len);
	char why[256] = "";
	q = pprof__read(data, len, why, sizeof(why));
	cr_assert(q, "%s", why);
	size_t n;
	const struct profile_module *m = profile__modules(q, &n);
	cr_assert_eq(n, 2, "the kernel's bare mapping is not a module");
	cr_assert_str_eq(profile__str_at(q, m[0].module), "/usr/bin/python3.11");
	cr_assert(m[0].exe);
	cr_assert_eq(m[0].start, 0x41f000);
	cr_assert_eq(m[0].limit, 0x6d1289);
	cr_assert_eq(m[0].file_offset, 0x1f000);
	cr_assert_str_eq(profile__str_at(q, m[0].build_id), "5711");
	cr_assert_str_eq(profile__str_at(q, m[1].module), "/usr/lib/libblas.so.3");
	cr_assert_not(m[1].exe);
	cr_assert_str_eq(profile__str_at(q, m[1].build_id), "abcd");
	uint8_t *again = write_pprof(q, &len2);
	cr_assert_eq(len2, len);
	cr_assert_eq(memcmp(again, data, len), 0, "read and written again: the same bytes");
	free(again);
	free(data);
	profile__free(p);
	profile__free(q);
}
