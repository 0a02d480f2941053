/* Which request: the labels made of what BPF copied (a context variable's
 * value, a span's name and ids), kept by --label, drawn by --by, and the
 * pprof round trip. */
#include "unit.h"

#include "frames.h"
#include "profile/filter.h"
#include "profile/filter_args.h"
#include "profile/profile.h"
#include "python/context_vars.h"
#include "python/offsets.h"
#include "python/otel_ids.h"
#include "python/value_label.h"
#include "base/gzip.h"
#include "read/pprof.h"
#include "write/by_table.h"
#include "write/folded.h"
#include "write/formats.h"
#include "write/pprof.h"

/* A compact ASCII str object's first bytes in layout l. */
static void ascii_str(const struct py_layout *l, const char *text, uint8_t *raw, size_t size)
{
	uint64_t len = strlen(text);
	uint32_t state = 1u << (l->uni_kind_shift + 3) | 1u << (l->uni_kind_shift + 4) | 1u << l->uni_kind_shift;

	memset(raw, 0, size);
	memcpy(raw + l->uni_length, &len, 8);
	memcpy(raw + l->uni_state, &state, 4);
	memcpy(raw + l->uni_ascii_data, text, len < size - l->uni_ascii_data ? len : size - l->uni_ascii_data);
}

Test(requests, a_str_value_is_its_text_escaped_and_cut)
{
	const struct py_layout *l = py_layout_builtin(3, 12, 0), *ft = py_layout_builtin(3, 13, 1);
	uint8_t raw[PYEBPF_CTX_LABEL_BYTES];
	char out[600];

	ascii_str(l, "req-00042", raw, sizeof(raw));
	cr_assert(py_value_label(l, PY_VALUE_STR, raw, sizeof(raw), out, sizeof(out)));
	cr_assert_str_eq(out, "req-00042");
	ascii_str(ft, "req-00042", raw, sizeof(raw));
	cr_assert(py_value_label(ft, PY_VALUE_STR, raw, sizeof(raw), out, sizeof(out)));
	cr_assert_str_eq(out, "req-00042");
	/* control characters never reach a label as they are */
	ascii_str(l, "a\x1b[31mb\n", raw, sizeof(raw));
	cr_assert(py_value_label(l, PY_VALUE_STR, raw, sizeof(raw), out, sizeof(out)));
	cr_assert_str_eq(out, "a\\x1b[31mb\\x0a");
	/* a value longer than the copy is cut, and says so */
	char big[300];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ascii_str(l, big, raw, sizeof(raw));
	cr_assert(py_value_label(l, PY_VALUE_STR, raw, sizeof(raw), out, sizeof(out)));
	cr_assert_eq(strlen(out), sizeof(raw) - l->uni_ascii_data + 3);
	cr_assert_str_eq(out + strlen(out) - 3, "\xe2\x80\xa6");
	/* a string that is not compact ASCII makes no label */
	raw[l->uni_state] = 0;
	cr_assert_not(py_value_label(l, PY_VALUE_STR, raw, sizeof(raw), out, sizeof(out)));
}

Test(requests, int_and_bytes_values)
{
	const struct py_layout *l311 = py_layout_builtin(3, 11, 0), *l312 = py_layout_builtin(3, 12, 0);
	uint8_t raw[PYEBPF_CTX_LABEL_BYTES] = { 0 };
	char out[600];
	int64_t size = -2;
	uint32_t d[2] = { 5, 1 }; /* 1 << 30 | 5 */
	uint64_t tag = 2 << 3 | 0, n = 4;

	memcpy(raw + l311->long_size, &size, 8);
	memcpy(raw + l311->long_digits, d, 8);
	cr_assert(py_value_label(l311, PY_VALUE_INT, raw, sizeof(raw), out, sizeof(out)));
	cr_assert_str_eq(out, "-1073741829");
	memcpy(raw + l312->long_size, &tag, 8);
	cr_assert(py_value_label(l312, PY_VALUE_INT, raw, sizeof(raw), out, sizeof(out)));
	cr_assert_str_eq(out, "1073741829");
	tag = 9 << 3; /* nine digits: no label */
	memcpy(raw + l312->long_size, &tag, 8);
	cr_assert_not(py_value_label(l312, PY_VALUE_INT, raw, sizeof(raw), out, sizeof(out)));
	memset(raw, 0, sizeof(raw));
	memcpy(raw + l312->bytes_size, &n, 8);
	memcpy(raw + l312->bytes_data, "ab\x01z", 4);
	cr_assert(py_value_label(l312, PY_VALUE_BYTES, raw, sizeof(raw), out, sizeof(out)));
	cr_assert_str_eq(out, "ab\\x01z");
	cr_assert_eq(py_value_kind_of("str"), PY_VALUE_STR);
	cr_assert_eq(py_value_kind_of("MyStr"), PY_VALUE_OTHER);
}

Test(requests, ids_from_digits_are_opentelemetrys_hex)
{
	/* 0x0af7651916cd43dd8448eb211c80319c, OpenTelemetry's example trace id */
	unsigned __int128 v = (unsigned __int128)0x0af7651916cd43ddULL << 64 | 0x8448eb211c80319cULL;
	uint32_t digits[5];
	uint64_t hi, lo;
	char hex[33], span[17];

	for (int i = 0; i < 5; i++, v >>= 30)
		digits[i] = (uint32_t)(v & 0x3fffffff);
	cr_assert(otel_ids_from_digits(digits, 5, &hi, &lo));
	otel_trace_hex(hi, lo, hex);
	cr_assert_str_eq(hex, "0af7651916cd43dd8448eb211c80319c");
	otel_span_hex(0xb7ad6b7169203331ULL, span);
	cr_assert_str_eq(span, "b7ad6b7169203331");
	digits[4] = 1u << 9; /* beyond 128 bits */
	cr_assert_not(otel_ids_from_digits(digits, 5, &hi, &lo));
	digits[0] = 1u << 30; /* not a 30-bit digit */
	cr_assert_not(otel_ids_from_digits(digits, 1, &hi, &lo));
	cr_assert_not(otel_ids_from_digits(digits, 6, &hi, &lo));
}

Test(requests, hamt_hash_folds_as_cpython_does)
{
	cr_assert_eq(py_hamt_hash(0x0000000100000002LL), 3);
	cr_assert_eq(py_hamt_hash(-1), 0); /* -1 ^ -1 */
	/* a fold of -1 is -2, as -1 is the error of a hash */
	cr_assert_eq(py_hamt_hash(0xffffffffLL), -2);
}

static struct profile *requests_recording(void)
{
	struct profile *p = profile__new();
	uint32_t co = frame(p, FRAME_PYTHON, "checkout", "/shop.py", 3, 3);
	uint32_t br = frame(p, FRAME_PYTHON, "browse", "/shop.py", 9, 9);
	/* A request's own strings, as request_labels.c makes them. */
	struct sample_request ra = { .endpoint = profile__str(p, "GET /checkout"),
				     .trace_id = profile__request_str(p, "0af7651916cd43dd8448eb211c80319c"),
				     .span_id = profile__request_str(p, "b7ad6b7169203331"),
				     .root_span = profile__request_str(p, "b7ad6b7169203331"),
				     .ctx_key = profile__str(p, "request_id"),
				     .ctx_value = profile__request_str(p, "r1") },
			      rb = { .endpoint = profile__str(p, "GET /browse") };
	struct sample_labels a = {
		.pid = 1, .tid = 1, .comm = profile__str(p, "shop"), .request = profile__request(p, &ra)
	};
	struct sample_labels b = { .pid = 1, .tid = 1, .comm = a.comm, .request = profile__request(p, &rb) };
	uint32_t s1[] = { co }, s2[] = { br };

	profile__add(p, &a, s1, 1, 3);
	profile__add(p, &b, s2, 1, 1);
	return p;
}

static char *folded_by(const struct profile *p, const char *by)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct folded_opts o = { .by = by };

	cr_assert_eq(folded__write(p, &o, f), 0);
	fclose(f);
	return buf;
}

Test(requests, by_draws_a_frame_per_value_and_label_keeps_one)
{
	struct profile *p = requests_recording(), *q;
	struct filter f;
	uint64_t dropped;
	char *out = folded_by(p, "endpoint");

	cr_assert_str_eq(out, "shop;[endpoint=GET /browse];browse (/shop.py:9) 1\n"
			      "shop;[endpoint=GET /checkout];checkout (/shop.py:3) 3\n");
	free(out);
	out = folded_by(p, "request_id"); /* --context-label's, by its name; none: no frame */
	cr_assert_str_eq(out, "shop;[request_id=r1];checkout (/shop.py:3) 3\nshop;browse (/shop.py:9) 1\n");
	free(out);
	filter__init(&f);
	cr_assert_eq(filter_args__option(&f, OPT_FILTER_LABEL, "endpoint=GET /browse"), 1);
	q = filter__apply(&f, p, &dropped);
	cr_assert_eq(dropped, 3);
	out = folded_by(q, NULL);
	cr_assert_str_eq(out, "shop;browse (/shop.py:9) 1\n");
	free(out);
	profile__free(q);
	filter__free(&f);
	filter__init(&f);
	cr_assert_eq(filter_args__option(&f, OPT_FILTER_LABEL, "trace_id=0af7651916cd43dd8448eb211c80319c"), 1);
	cr_assert_eq(filter_args__option(&f, OPT_FILTER_LABEL, "request_id=r1"), 1);
	q = filter__apply(&f, p, &dropped);
	cr_assert_eq(dropped, 1);
	profile__free(q);
	filter__free(&f);
	profile__free(p);
}

/* The profile written as format f, NUL-terminated. */
static char *written_as(const struct profile *p, enum output_format f, const char *by)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct write_opts o = { .by = by, .title = "t" };

	cr_assert_eq(write_profile(p, f, &o, out), 0);
	fclose(out);
	return buf;
}

/* report --by endpoint -o x.svg (speedscope, Firefox Profiler, trace): a
 * tree per endpoint, under its "[endpoint=...]" frame; none without --by. */
Test(requests, by_draws_a_tree_per_value_in_every_tree_format)
{
	struct profile *p = requests_recording();
	static const enum output_format formats[] = { FORMAT_SVG, FORMAT_SPEEDSCOPE, FORMAT_GECKO, FORMAT_TRACE };
	struct profile_entry e[2];

	/* Timed too: Chrome's trace draws the timeline alone. */
	for (uint32_t i = 0; i < 2; i++)
		profile__entry(p, i, &e[i]);
	for (uint32_t i = 0; i < 2; i++)
		profile__add_at(p, &e[i].labels, e[i].frames, e[i].nframes, 1, 5000000 * (i + 1));

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		char *by = written_as(p, formats[i], "endpoint"), *plain = written_as(p, formats[i], NULL);

		cr_assert(strstr(by, "[endpoint=GET /checkout]") && strstr(by, "[endpoint=GET /browse]"),
			  "format %d: %.400s", formats[i], by);
		cr_assert_null(strstr(plain, "[endpoint="), "format %d", formats[i]);
		free(by);
		free(plain);
	}
	/* --context-label's value, by its name: the sample without it has no frame. */
	char *svg = written_as(p, FORMAT_SVG, "request_id");
	cr_assert(strstr(svg, "[request_id=r1]"));
	free(svg);
	profile__free(p);
}

/* A file keeps every request label, the local root's span id too (a later
 * push of the file sends it to Pyroscope's span profiles). */
Test(requests, a_pprof_file_keeps_every_request_label)
{
	struct profile *p = requests_recording(), *q;
	struct pprof_opts o = { 0 };
	uint8_t *gz, *raw;
	size_t len, rawlen;
	const char *why;
	char err[256];
	struct profile_entry e;
	size_t pos = 0;
	static const char *const want[][2] = {
		{ "trace_id", "0af7651916cd43dd8448eb211c80319c" },
		{ "span_id", "b7ad6b7169203331" },
		{ "root_span_id", "b7ad6b7169203331" },
		{ "endpoint", "GET /checkout" },
		{ "request_id", "r1" },
	};
	int checked = 0;

	cr_assert_eq(pprof__write_mem(p, &o, &gz, &len), 0);
	cr_assert_eq(gzip__inflate(gz, len, 1 << 24, &raw, &rawlen, &why), 0);
	q = pprof__read(raw, rawlen, err, sizeof(err));
	cr_assert(q, "%s", err);
	while (profile__next(q, &pos, &e)) {
		if (!profile__label_value(q, &e.labels, "trace_id"))
			continue;
		for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			cr_assert_str_eq(profile__label_value(q, &e.labels, want[i][0]), want[i][1], "%s", want[i][0]);
		cr_assert_null(profile__label_value(q, &e.labels, "span_name"));
		checked++;
	}
	cr_assert_eq(checked, 1);
	profile__free(q);
	free(raw);
	free(gz);
	profile__free(p);
}

/* report --by without -o: the values by samples, their top functions; none last. */
Test(requests, by_table_lists_values_with_their_top_functions)
{
	struct profile *p = requests_recording();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_eq(by_table__print(p, "endpoint", 20, f), 0);
	fclose(f);
	cr_assert_str_eq(buf, "ENDPOINT                                   SAMPLES   SHARE  TOP FUNCTIONS (self)\n"
			      "GET /checkout                                    3   75.0% checkout 100%\n"
			      "GET /browse                                      1   25.0% browse 100%\n");
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	cr_assert_eq(by_table__print(p, "request_id", 1, f), 0);
	fclose(f);
	cr_assert_str_eq(buf, "REQUEST_ID                                 SAMPLES   SHARE  TOP FUNCTIONS (self)\n"
			      "r1                                               3   75.0% checkout 100%\n"
			      "(1 more values; --top N shows more)\n");
	free(buf);
	profile__free(p);
}
