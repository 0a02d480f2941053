/*
 * libFuzzer target for the parsers of names and lists that hardening added:
 * interval file names (what pruning may delete), the text escaper (every
 * name from a profiled process passes it), id lists (-p, --tid), --since /
 * --until times, the start an interval's name tells, and /etc/passwd and
 * /etc/group read as text (serve --user in the static binary), and the
 * container runtimes' state (docker's config.v2.json, containers/storage's
 * lists, nerdctl's name files, dockerd's command line, daemon.json and
 * TOML settings) through the bounded JSON reader. Any crash or sanitizer
 * report fails `make fuzz`; the escaper's output is checked, and so is
 * every id and name the runtime parsers keep.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "archive/rotation.h"
#include "base/util.h"
#include "base/wallclock.h"
#include "base/escape.h"
#include "system/accounts.h"
#include "system/json_field.h"
#include "system/runtime_state.h"

/* What a runtime parser keeps is an id and a name of the runtimes' own characters, nothing else. */
static void check_kept(const struct runtime_container *c)
{
	if (!runtime_id_valid(c->id) || (c->name[0] && !runtime_name_valid(c->name)))
		abort();
}

static void kept_cb(void *ctx, const struct runtime_container *c)
{
	(void)ctx;
	check_kept(c);
}

/* Every value of a document, through each accessor, to a bounded depth. */
static void visit(struct json_value v, int depth)
{
	static const char *const keys[] = { "ID", "Name", "State", "Running", "id", "names", "data-root", "" };
	struct json_value m;
	char s[8];
	bool b;
	uint64_t u;
	size_t pos = 0;

	if (depth > JSON_MAX_DEPTH + 1)
		abort(); /* json_root refuses deeper documents */
	if (json_string(v, s, sizeof(s)) == 0 && strlen(s) >= sizeof(s))
		abort();
	(void)json_bool(v, &b);
	(void)json_u64(v, &u);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (json_get(v, keys[i], &m) == 0) {
			if (m.p < v.p || m.p + m.n > v.p + v.n)
				abort();
			visit(m, depth + 1);
		}
	while (json_next(v, &pos, &m) == 1) {
		if (m.p < v.p || m.p + m.n > v.p + v.n)
			abort();
		visit(m, depth + 1);
	}
}

static void runtime_files(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct runtime_container c;
	struct json_value root;
	char a[64], b[64];

	if (json_root(text, size, &root) == 0)
		visit(root, 0);
	if (runtime_parse_docker(text, size, &c) == 0)
		check_kept(&c);
	(void)runtime_parse_storage(text, size, kept_cb, NULL);
	if (runtime_parse_nerdctl("web", text, size, &c) == 0)
		check_kept(&c);
	runtime_dockerd_args(text, size, a, sizeof(a), b, sizeof(b));
	if ((a[0] && a[0] != '/') || (b[0] && b[0] != '/'))
		abort();
	runtime_conmon_args(text, size, a, sizeof(a), b, sizeof(b));
	if ((a[0] && a[0] != '/') || (b[0] && b[0] != '/'))
		abort();
	if (runtime_toml_string(text, size, "storage", "graphroot", a, sizeof(a)) == 0 && strlen(a) >= sizeof(a))
		abort();
	(void)runtime_json_string(text, size, "data-root", a, sizeof(a));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), out[512], bad[64];
	uint32_t *ids = NULL;
	size_t n = 0;
	uint64_t seq;

	memcpy(s, data, size);
	s[size] = '\0';
	if (rotation_parse_name(s, &seq))
		(void)rotation_name_time(s);
	struct time_arg t;
	if (time_arg_parse(s, &t) == 0 && t.wall)
		(void)time_arg_epoch(&t, &t, 0);
	text_escape(s, out, sizeof(out));
	/* What reaches a terminal holds no control character. */
	for (const unsigned char *p = (const unsigned char *)out; *p; p++)
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0))
			abort();
	parse_id_list(s, &ids, &n, bad, sizeof(bad));
	{
		uid_t uid;
		gid_t gid, groups[4];

		/* The input as both files (not NUL-terminated past size). */
		(void)accounts__user((const char *)data, size, "nobody", &uid, &gid);
		if (accounts__groups((const char *)data, size, "nobody", 65534, groups, 4) > 4)
			abort();
	}
	runtime_files(data, size);
	free(ids);
	free(s);
	return 0;
}
