/* pprof writer: the file unpacks (gzip, protobuf) to exactly the profile's stacks, counts and labels. */
#include "unit.h"

#include <zlib.h>

#include "frames.h"
#include "profile/profile.h"
#include "profile.pb-c.h"
#include "write/pprof.h"

static Perftools__Profiles__Profile *write_and_read(struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*profile__meta(p) = (struct profile_meta){ .period_ns = 10101010,
						   .start_epoch_ns = 1700000000000000000LL,
						   .duration_ns = 5000000000LL };
	cr_assert_eq(pprof__write(p, f), 0);
	fclose(f);
	cr_assert_geq(len, 2);
	cr_assert_eq((uint8_t)buf[0], 0x1f, "gzip magic");
	cr_assert_eq((uint8_t)buf[1], 0x8b, "gzip magic");

	z_stream z = { 0 };
	size_t cap = 1 << 20;
	uint8_t *raw = malloc(cap);
	cr_assert_eq(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (uint8_t *)buf;
	z.avail_in = (uInt)len;
	z.next_out = raw;
	z.avail_out = (uInt)cap;
	cr_assert_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	size_t rawlen = cap - z.avail_out;
	inflateEnd(&z);
	free(buf);
	Perftools__Profiles__Profile *pp = perftools__profiles__profile__unpack(NULL, rawlen, raw);
	free(raw);
	cr_assert(pp, "not a protobuf Profile");
	return pp;
}

static const char *str(const Perftools__Profiles__Profile *pp, int64_t i)
{
	cr_assert(i >= 0 && (size_t)i < pp->n_string_table);
	return pp->string_table[i];
}

static const Perftools__Profiles__Location *loc(const Perftools__Profiles__Profile *pp, uint64_t id)
{
	for (size_t i = 0; i < pp->n_location; i++)
		if (pp->location[i]->id == id)
			return pp->location[i];
	cr_assert_fail("no location %llu", (unsigned long long)id);
	return NULL;
}

static const Perftools__Profiles__Function *func(const Perftools__Profiles__Profile *pp, uint64_t id)
{
	for (size_t i = 0; i < pp->n_function; i++)
		if (pp->function[i]->id == id)
			return pp->function[i];
	cr_assert_fail("no function %llu", (unsigned long long)id);
	return NULL;
}

/* "root;...;leaf" as "name@file:line" frames, with the sample's labels. */
static void render(const Perftools__Profiles__Profile *pp, const Perftools__Profiles__Sample *s, char *out, size_t size)
{
	size_t n = 0;

	out[0] = '\0';
	for (size_t k = 0; k < s->n_label; k++) {
		const Perftools__Profiles__Label *l = s->label[k];
		if (l->str)
			n += snprintf(out + n, size - n, "%s=%s ", str(pp, l->key), str(pp, l->str));
		else
			n += snprintf(out + n, size - n, "%s=%lld ", str(pp, l->key), (long long)l->num);
	}
	for (size_t i = s->n_location_id; i-- > 0;) { /* leaf first in pprof */
		const Perftools__Profiles__Location *l = loc(pp, s->location_id[i]);
		cr_assert_eq(l->n_line, 1);
		const Perftools__Profiles__Function *f = func(pp, l->line[0]->function_id);
		n += snprintf(out + n, size - n, "%s%s@%s:%lld+%lld", i + 1 == s->n_location_id ? "" : ";",
			      str(pp, f->name), str(pp, f->filename), (long long)l->line[0]->line,
			      (long long)f->start_line);
	}
}

Test(pprof, round_trip_exact)
{
	struct profile *p = profile__new();
	uint32_t m = frame(p, FRAME_PYTHON, "<module>", "/app/m.py", 10, 1);
	uint32_t a = frame(p, FRAME_PYTHON, "Model.fit", "/app/m.py", 42, 40);
	uint32_t n = frame(p, FRAME_NATIVE, "geo::Matrix::multiply(int) const", "/usr/lib/libgeo.so", 0, 0);
	uint32_t k = frame(p, FRAME_KERNEL, "do_syscall_64", "", 0, 0);
	struct sample_labels l1 = { .pid = 7,
				    .tid = 8,
				    .comm = profile__str(p, "python3"),
				    .thread = profile__str(p, "MainThread"),
				    .flags = LABEL_GIL_KNOWN | LABEL_GIL_HELD };
	struct sample_labels l2 = {
		.pid = 7, .tid = 9, .comm = l1.comm, .thread = profile__str(p, "worker"), .flags = LABEL_GIL_KNOWN
	};
	uint32_t s1[] = { m, a }, s2[] = { m, a, n, k };
	profile__add(p, &l1, s1, 2, 5);
	profile__add(p, &l2, s2, 4, 3);

	Perftools__Profiles__Profile *pp = write_and_read(p);
	cr_assert_str_eq(pp->string_table[0], "");
	cr_assert_eq(pp->n_sample_type, 2);
	cr_assert_str_eq(str(pp, pp->sample_type[0]->type), "samples");
	cr_assert_str_eq(str(pp, pp->sample_type[0]->unit), "count");
	cr_assert_str_eq(str(pp, pp->sample_type[1]->type), "cpu");
	cr_assert_str_eq(str(pp, pp->sample_type[1]->unit), "nanoseconds");
	cr_assert_eq(pp->period, 10101010);
	cr_assert_eq(pp->time_nanos, 1700000000000000000LL);
	cr_assert_eq(pp->duration_nanos, 5000000000LL);
	cr_assert_eq(pp->n_sample, 2);

	int seen = 0;
	for (size_t i = 0; i < pp->n_sample; i++) {
		char text[2048];
		const Perftools__Profiles__Sample *s = pp->sample[i];

		render(pp, s, text, sizeof(text));
		cr_assert_eq(s->n_value, 2);
		cr_assert_eq(s->value[1], s->value[0] * 10101010);
		if (s->value[0] == 5) {
			cr_assert_str_eq(text, "pid=7 tid=8 comm=python3 thread=MainThread gil=held "
					       "<module>@/app/m.py:10+1;Model.fit@/app/m.py:42+40");
			seen++;
		} else {
			cr_assert_eq(s->value[0], 3);
			cr_assert_str_eq(text, "pid=7 tid=9 comm=python3 thread=worker gil=released "
					       "<module>@/app/m.py:10+1;Model.fit@/app/m.py:42+40;"
					       "geo::Matrix::multiply(int) const@/usr/lib/libgeo.so:0+0;"
					       "do_syscall_64@[kernel.kallsyms]:0+0");
			seen++;
		}
	}
	cr_assert_eq(seen, 2);
	/* Native and kernel frames have mappings; Python frames do not. */
	cr_assert_eq(pp->n_mapping, 2);
	perftools__profiles__profile__free_unpacked(pp, NULL);
	profile__free(p);
}

/* A push's body made in memory is the file's bytes, with the timeline (three parts) and without (one). */
Test(pprof, in_memory_same_bytes)
{
	struct profile *p = profile__new();
	uint32_t m = frame(p, FRAME_PYTHON, "<module>", "/app/m.py", 10, 1);
	struct sample_labels l = { .pid = 7, .tid = 8, .comm = profile__str(p, "python3") };
	static const struct pprof_opts opts[] = { { 0 }, { .only = PPROF_ONLY_CPU, .gzip_level = 1 } };

	*profile__meta(p) = (struct profile_meta){ .period_ns = 10101010, .start_epoch_ns = 1700000000000000000LL };
	profile__add(p, &l, &m, 1, 5);
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		char *file = NULL;
		size_t file_len = 0, len = 0;
		uint8_t *mem = NULL;
		FILE *f = open_memstream(&file, &file_len);

		cr_assert_eq(pprof__write_opts(p, &opts[i], f), 0);
		fclose(f);
		cr_assert_eq(pprof__write_mem(p, &opts[i], &mem, &len), 0);
		cr_assert_eq(len, file_len, "opts %zu", i);
		cr_assert_eq(memcmp(mem, file, len), 0, "opts %zu", i);
		free(mem);
		free(file);
	}
	profile__free(p);
}

#include "write/speedscope.h"

Test(speedscope, golden_output_one_profile_per_thread)
{
	struct profile *p = profile__new();
	uint32_t m = frame(p, FRAME_PYTHON, "<module>", "/app/tëst.py", 3, 1);
	uint32_t w = frame(p, FRAME_PYTHON, "work \"quoted\"", "/app/tëst.py", 9, 8);
	uint32_t k = frame(p, FRAME_KERNEL, "do_syscall_64", "", 0, 0);
	struct sample_labels a = { .pid = 5, .tid = 6, .comm = profile__str(p, "py"), .thread = profile__str(p, "w1") };
	struct sample_labels b = { .pid = 5, .tid = 5, .comm = a.comm, .thread = profile__str(p, "MainThread") };
	uint32_t s1[] = { m, w }, s2[] = { m, w, k };
	profile__add(p, &a, s1, 2, 2);
	profile__add(p, &b, s2, 3, 1);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	profile__meta(p)->period_ns = 1000;
	cr_assert_eq(speedscope__write(p, f), 0);
	fclose(f);
	cr_assert_str_eq(buf,
			 "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"pyebpf\","
			 "\"name\":\"pyebpf\",\"activeProfileIndex\":1,\"shared\":{\"frames\":[" /* w1, the busiest */
			 "{\"name\":\"<module> (/app/tëst.py:3)\",\"file\":\"/app/tëst.py\",\"line\":3},"
			 "{\"name\":\"work \\\"quoted\\\" (/app/tëst.py:9)\",\"file\":\"/app/tëst.py\",\"line\":9},"
			 "{\"name\":\"do_syscall_64_[k]\"}]},\"profiles\":["
			 "{\"type\":\"sampled\",\"name\":\"py [pid 5]: MainThread [tid 5]\",\"unit\":\"nanoseconds\","
			 "\"startValue\":0,\"endValue\":1000,\"samples\":[[0,1,2]],\"weights\":[1000]},"
			 "{\"type\":\"sampled\",\"name\":\"py [pid 5]: w1 [tid 6]\",\"unit\":\"nanoseconds\","
			 "\"startValue\":0,\"endValue\":2000,\"samples\":[[0,1]],\"weights\":[2000]}]}\n");
	free(buf);
	profile__free(p);
}
