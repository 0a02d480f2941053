/*
 * libFuzzer target for what pushing reads from outside: a backend's answer
 * (an OTLP ExportProfilesServiceResponse, whose message reaches stderr), a
 * journal in the spool (pyebpf's own file, but in a directory others may
 * write), URLs, --label values, cgroup paths (pod UIDs), target-given
 * names made into label values, and an interval file's comments (one per
 * line of the input): the stored service name and labels a push reads back. Any crash or sanitizer report fails `make
 * fuzz`; cleaned text is checked to be printable UTF-8.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "system/cgroups.h"
#include "push/endpoint.h"
#include "push/journal.h"
#include "push/otlp_req.h"
#include "push/series.h"
#include "profile/profile.h"
#include "base/util.h"

/* Valid UTF-8 with no control character, or abort. */
static void check_clean(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t len = *p < 0x80             ? 1
			     : (*p & 0xe0) == 0xc0 ? 2
			     : (*p & 0xf0) == 0xe0 ? 3
			     : (*p & 0xf8) == 0xf0 ? 4
						   : 0;

		if (!len || (len == 1 && (*p < 0x20 || *p == 0x7f)) || (len == 2 && p[0] == 0xc2 && p[1] < 0xa0) ||
		    (len == 3 && p[0] == 0xe2 && p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae))
			abort();
		for (size_t i = 1; i < len; i++)
			if ((p[i] & 0xc0) != 0x80)
				abort();
		p += len;
	}
}

/* The series of a one-sample profile whose comments are s's lines: every
 * label printable. One profile for every input, its samples and comments
 * cleared after each: a new one each time slows the whole target 4x. */
static void stored_identity(const char *s)
{
	static struct profile *p;
	static struct sample_labels l;
	static uint32_t frame;
	struct series_config none = { 0 };
	char *lines = xstrdup(s), *save = NULL;
	struct push_series *series;
	size_t n;

	if (!p) {
		struct frame f = { .kind = FRAME_PYTHON };

		p = profile__new();
		f.name = profile__str(p, "f");
		f.module = profile__str(p, "m.py");
		frame = profile__frame(p, &f);
		l.comm = profile__str(p, "python3");
	}
	for (char *line = strtok_r(lines, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		profile__add_comment(p, line);
	profile__add(p, &l, &frame, 1, 1);
	series = series_split(p, &none, &n);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < series[i].nlabels; k++) {
			check_clean(series[i].labels[k].name);
			check_clean(series[i].labels[k].value);
		}
	series_free(series, n);
	free(lines);
	profile__clear_samples(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), out[256], why[512] = "";
	struct push_journal *j = push_journal__new_memory();
	struct push_endpoint e;
	struct series_label l;
	static FILE *null;

	if (!null)
		null = fopen("/dev/null", "w");
	memcpy(s, data, size);
	s[size] = '\0';
	otlp_partial_success_note(null, "http://backend", "name", data, size);
	push_journal__parse(j, (const char *)data, size);
	push_journal__close(j);
	if (!push_endpoint__parse(&e, size & 1 ? PUSH_OTLP : PUSH_PYROSCOPE, s, why, sizeof(why))) {
		char key[17];

		push_endpoint__key(&e, s, key);
		push_endpoint__free(&e);
	} else {
		check_clean(why); /* the reason is printed: the URL's bytes must not reach a terminal raw */
	}
	if (!series_parse_label(s, &l, why, sizeof(why)))
		free((char *)l.name);
	check_clean(utf8_clean(s, out, sizeof(out)));
	(void)k8s_pod_uid_of(s, out, sizeof(out));
	if (strstr(s, "pyebpf ")) /* the comments' prefix (push/series.h): the others' speed kept */
		stored_identity(s);
	free(s);
	return 0;
}
