/* The bounded JSON reader and the runtimes' state parsers on it, from memory. */
#include "unit.h"

#include "system/json_field.h"
#include "system/runtime_state.h"

#define ID1 "5b84082deb38b50b4a449139bcfb21c088319a8a4336846c5d08e272dc7eff25"
#define ID2 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static struct json_value root_of(const char *s)
{
	struct json_value v;

	cr_assert_eq(json_root(s, strlen(s), &v), 0, "not taken: %s", s);
	return v;
}

static bool refused(const char *s)
{
	struct json_value v;

	return json_root(s, strlen(s), &v) == -1;
}

Test(json_field, members_nested_and_typed)
{
	struct json_value r = root_of(" {\"ID\": \"abc\", \"State\": {\"Running\": true, \"Pid\": 3089, \"E\": -1.5e3},"
				      " \"Args\": [\"-c\", {\"x\": null}, [1, 2]], \"Name\": \"/web\"}\n"),
			  v, st, e;
	char s[64];
	bool b;
	uint64_t u;
	size_t pos = 0;
	int n = 0;

	cr_assert_eq(json_get(r, "ID", &v), 0);
	cr_assert_eq(json_string(v, s, sizeof(s)), 0);
	cr_assert_str_eq(s, "abc");
	cr_assert_eq(json_get(r, "State", &st), 0);
	cr_assert_eq(json_get(st, "Running", &v), 0);
	cr_assert_eq(json_bool(v, &b), 0);
	cr_assert(b);
	cr_assert_eq(json_get(st, "Pid", &v), 0);
	cr_assert_eq(json_u64(v, &u), 0);
	cr_assert_eq(u, 3089);
	cr_assert_eq(json_get(st, "E", &v), 0);
	cr_assert_eq(json_u64(v, &u), -1, "not a non-negative integer");
	cr_assert_eq(json_get(st, "ID", &v), -1, "members are the object's own, not its parent's");
	cr_assert_eq(json_get(r, "Missing", &v), -1);
	cr_assert_eq(json_bool(st, &b), -1);
	cr_assert_eq(json_string(st, s, sizeof(s)), -1);
	cr_assert_eq(json_get(r, "Args", &v), 0);
	while (json_next(v, &pos, &e) == 1)
		n++;
	cr_assert_eq(n, 3);
	cr_assert_eq(json_next(st, &pos, &e), -1, "an object is not an array");
	pos = 0;
	cr_assert_eq(json_next(root_of("[]"), &pos, &e), 0);
	cr_assert_eq(json_get(root_of("{}"), "a", &v), -1);
}

Test(json_field, strings_and_escapes)
{
	struct json_value v;
	char s[16];

	/* \u escapes as UTF-8; a pair of surrogates is one character; a lone one U+FFFD. */
	cr_assert_eq(json_string(root_of("\"a\\\"\\\\\\/\\n\\u00e9\\ud83d\\ude00\""), s, sizeof(s)), 0);
	cr_assert_str_eq(s, "a\"\\/\n\xc3\xa9\xf0\x9f\x98\x80");
	cr_assert_eq(json_string(root_of("\"\\ud800x\""), s, sizeof(s)), 0);
	cr_assert_str_eq(s, "\xef\xbf\xbdx");
	/* NUL cannot be in a C string: refused, not cut. */
	cr_assert_eq(json_string(root_of("\"ab\\u0000cd\""), s, sizeof(s)), -1);
	/* Exactly what fits, and one more. */
	cr_assert_eq(json_string(root_of("\"123456789012345\""), s, sizeof(s)), 0);
	cr_assert_eq(json_string(root_of("\"1234567890123456\""), s, sizeof(s)), -1);
	cr_assert_eq(json_string(root_of("\"\\u00e9\""), s, 2), -1, "a character is never cut");
	/* An escaped key is the key it decodes to; a repeated key's last value is taken (Go's). */
	cr_assert_eq(json_get(root_of("{\"N\\u0061me\": \"x\", \"Name\": \"y\"}"), "Name", &v), 0);
	cr_assert_eq(json_string(v, s, sizeof(s)), 0);
	cr_assert_str_eq(s, "y");
}

Test(json_field, malformed_documents_refused)
{
	static const char *const bad[] = {
		"",      "   ",    "{",        "{\"a\":}",    "{\"a\" 1}",     "{\"a\":1,}", "[1,]", "[1 2]",
		"{1:2}", "\"open", "\"a\\x\"", "\"\\u12g4\"", "\"tab\there\"", "01",         "1.",   "-",
		"1e",    "tru",    "nul",      "{} {}",       "[]]",           "{\"a\":1}x", "\"\\", "[\"a\",",
	};
	char deep[2 * JSON_MAX_DEPTH + 8], ok[2 * JSON_MAX_DEPTH + 1];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert(refused(bad[i]), "taken: '%s'", bad[i]);
	/* As deep as allowed, and one deeper. */
	memset(ok, '[', JSON_MAX_DEPTH);
	memset(ok + JSON_MAX_DEPTH, ']', JSON_MAX_DEPTH);
	ok[2 * JSON_MAX_DEPTH] = '\0';
	cr_assert_not(refused(ok));
	memset(deep, '[', JSON_MAX_DEPTH + 1);
	memset(deep + JSON_MAX_DEPTH + 1, ']', JSON_MAX_DEPTH + 1);
	deep[2 * JSON_MAX_DEPTH + 2] = '\0';
	cr_assert(refused(deep));
	/* Embedded NUL: the length is the document's, not strlen's. */
	struct json_value v;
	cr_assert_eq(json_root("{}\0{}", 5, &v), -1);
}

Test(json_field, numbers)
{
	uint64_t u;

	cr_assert_eq(json_u64(root_of("18446744073709551615"), &u), 0);
	cr_assert_eq(u, UINT64_MAX);
	cr_assert_eq(json_u64(root_of("18446744073709551616"), &u), -1);
	cr_assert_eq(json_u64(root_of("0"), &u), 0);
	cr_assert_eq(json_u64(root_of("-0"), &u), -1);
	cr_assert_eq(json_u64(root_of("1e3"), &u), -1);
}

Test(runtime_state, docker_config)
{
	struct runtime_container c;
	const char *doc =
		"{\"StreamConfig\":{},\"State\":{\"Running\":true,\"Paused\":false,\"Pid\":3089},"
		"\"ID\":\"" ID1 "\",\"Path\":\"python3\",\"Args\":[\"-c\",\"x\"],"
		"\"Config\":{\"Labels\":{\"Name\":\"/not-this\"}},\"Name\":\"/splitbox\",\"Driver\":\"overlay2\"}";
	char buf[1024];

	cr_assert_eq(runtime_parse_docker(doc, strlen(doc), &c), 0);
	cr_assert_str_eq(c.id, ID1);
	cr_assert_str_eq(c.name, "splitbox");
	cr_assert_eq(c.running, 1);
	cr_assert_eq(c.runtime, RUNTIME_DOCKER);
	/* A name with characters no runtime allows is not shown: the container stays, unnamed. */
	snprintf(buf, sizeof(buf), "{\"ID\":\"%s\",\"Name\":\"/evil\\u001b[2J\"}", ID1);
	cr_assert_eq(runtime_parse_docker(buf, strlen(buf), &c), 0);
	cr_assert_str_eq(c.name, "");
	cr_assert_eq(c.running, -1);
	snprintf(buf, sizeof(buf), "{\"ID\":\"%s\",\"Name\":\"web\"}", ID1);
	cr_assert_eq(runtime_parse_docker(buf, strlen(buf), &c), 0);
	cr_assert_str_eq(c.name, "", "docker's names start with '/'");
	/* Ids: 64 lowercase hex digits, nothing else. */
	static const char *const bad[] = {
		"{\"ID\":\"5b84082deb38\",\"Name\":\"/a\"}",
		"{\"ID\":\"../../etc/passwd\",\"Name\":\"/a\"}",
		"{\"ID\":\"" ID1 "0\",\"Name\":\"/a\"}",
		"{\"ID\":5,\"Name\":\"/a\"}",
		"{\"Name\":\"/a\"}",
		"[\"" ID1 "\"]",
		"{\"ID\":\"" ID1 "\",\"Name\":\"/a\"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(runtime_parse_docker(bad[i], strlen(bad[i]), &c), -1, "taken: %s", bad[i]);
	snprintf(buf, sizeof(buf), "{\"ID\":\"%s\"}", ID1);
	for (size_t i = 0; i < 64; i++)
		if (buf[7 + i] >= 'a')
			buf[7 + i] = (char)(buf[7 + i] - 'a' + 'A');
	cr_assert_eq(runtime_parse_docker(buf, strlen(buf), &c), -1, "upper case: %s", buf);
}

struct seen {
	struct runtime_container v[8];
	int n;
};

static void collect(void *ctx, const struct runtime_container *c)
{
	struct seen *s = ctx;

	if (s->n < 8)
		s->v[s->n++] = *c;
}

Test(runtime_state, storage_list)
{
	const char *doc =
		"[{\"id\":\"" ID1 "\",\"names\":[\"web\"],\"image\":\"x\",\"layer\":\"y\","
		"\"metadata\":\"{\\\"image-name\\\":\\\"python\\\",\\\"name\\\":\\\"web\\\"}\",\"created\":\"t\"},"
		"{\"id\":\"" ID2 "\",\"names\":[\"bad name\", \"k8s_POD_x_y\"]},"
		"{\"id\":\"nothex\",\"names\":[\"skipped\"]},"
		"{\"id\":\"" ID2 "\"}, 5, {\"names\":[\"noid\"]}]";
	struct seen s = { 0 };

	cr_assert_eq(runtime_parse_storage(doc, strlen(doc), collect, &s), 3);
	cr_assert_eq(s.n, 3);
	cr_assert_str_eq(s.v[0].id, ID1);
	cr_assert_str_eq(s.v[0].name, "web");
	cr_assert_eq(s.v[0].runtime, RUNTIME_PODMAN);
	cr_assert_str_eq(s.v[1].name, "k8s_POD_x_y", "the first name a runtime allows");
	cr_assert_str_eq(s.v[2].name, "");
	cr_assert_eq(runtime_parse_storage("{}", 2, collect, &s), -1);
	cr_assert_eq(runtime_parse_storage("[{]", 3, collect, &s), -1);
}

Test(runtime_state, nerdctl_name_file)
{
	struct runtime_container c;

	cr_assert_eq(runtime_parse_nerdctl("web", ID1, 64, &c), 0);
	cr_assert_str_eq(c.id, ID1);
	cr_assert_str_eq(c.name, "web");
	cr_assert_eq(c.runtime, RUNTIME_NERDCTL);
	cr_assert_eq(runtime_parse_nerdctl("web", ID1 "\n", 65, &c), 0);
	cr_assert_eq(runtime_parse_nerdctl("web", ID1 "x", 65, &c), -1);
	cr_assert_eq(runtime_parse_nerdctl("web", "5b84", 4, &c), -1);
	cr_assert_eq(runtime_parse_nerdctl("-web", ID1, 64, &c), -1, "not a name a runtime allows");
	cr_assert_eq(runtime_parse_nerdctl(".hidden", ID1, 64, &c), -1);
}

Test(runtime_state, names_allowed)
{
	char longest[CONTAINER_NAME_MAX + 1];

	cr_assert(runtime_name_valid("splitbox"));
	cr_assert(runtime_name_valid("a"));
	cr_assert(runtime_name_valid("web_1.prod-x"));
	cr_assert_not(runtime_name_valid(""));
	cr_assert_not(runtime_name_valid("_web"));
	cr_assert_not(runtime_name_valid("web/1"));
	cr_assert_not(runtime_name_valid("w\xc3\xa9"));
	memset(longest, 'a', sizeof(longest));
	longest[CONTAINER_NAME_MAX - 1] = '\0';
	cr_assert(runtime_name_valid(longest));
	longest[CONTAINER_NAME_MAX - 1] = 'a';
	longest[CONTAINER_NAME_MAX] = '\0';
	cr_assert_not(runtime_name_valid(longest));
}

#define ARGS(s) (s), sizeof(s) - 1

Test(runtime_state, dockerd_command_line)
{
	char root[256], config[256];

	runtime_dockerd_args(ARGS("dockerd\0--host\0unix:///tmp/e/docker.sock\0--data-root\0/var/cache/d\0"
				  "--config-file\0/tmp/e/daemon.json\0--bridge=none\0"),
			     root, sizeof(root), config, sizeof(config));
	cr_assert_str_eq(root, "/var/cache/d");
	cr_assert_str_eq(config, "/tmp/e/daemon.json");
	runtime_dockerd_args(ARGS("/usr/bin/dockerd\0--data-root=/a\0-g\0/b\0--config-file=/c\0"), root, sizeof(root),
			     config, sizeof(config));
	cr_assert_str_eq(root, "/b", "the last one given wins");
	cr_assert_str_eq(config, "/c");
	runtime_dockerd_args(ARGS("dockerd\0--graph=/old\0"), root, sizeof(root), config, sizeof(config));
	cr_assert_str_eq(root, "/old");
	runtime_dockerd_args(ARGS("dockerd\0-g/short\0"), root, sizeof(root), config, sizeof(config));
	cr_assert_str_eq(root, "/short");
	/* Relative paths, a value missing at the end, a flag that only starts the same, none. */
	runtime_dockerd_args(ARGS("dockerd\0--data-root\0relative\0--data-root-x=/no\0--data-root\0"), root,
			     sizeof(root), config, sizeof(config));
	cr_assert_str_eq(root, "");
	runtime_dockerd_args(ARGS("dockerd\0"), root, sizeof(root), config, sizeof(config));
	cr_assert_str_eq(root, "");
	cr_assert_str_eq(config, "");
	runtime_dockerd_args("", 0, root, sizeof(root), config, sizeof(config));
	cr_assert_str_eq(root, "");
	/* Not NUL-terminated at the end: the cut argument is not taken. */
	runtime_dockerd_args("dockerd\0--data-root\0/cut", 24, root, sizeof(root), config, sizeof(config));
	cr_assert_str_eq(root, "");
	/* Too long for the buffer: not taken, not cut. */
	runtime_dockerd_args(ARGS("dockerd\0--data-root=/0123456789\0"), root, 8, config, sizeof(config));
	cr_assert_str_eq(root, "");
}

/* podman's storage, from the exit command it hands conmon (as podman 4.3 writes it). */
Test(runtime_state, conmon_command_line)
{
	char root[256], run[256];

	runtime_conmon_args(ARGS("/usr/bin/conmon\0--api-version\0"
				 "1\0-c\0abc\0-n\0web\0--root\0/not/this\0"
				 "--exit-command\0/usr/bin/podman\0--exit-command-arg\0--root\0"
				 "--exit-command-arg\0/tmp/pm/root\0--exit-command-arg\0--runroot\0"
				 "--exit-command-arg\0/tmp/pm/run\0--exit-command-arg\0--log-level\0"
				 "--exit-command-arg\0warning\0"),
			    root, sizeof(root), run, sizeof(run));
	cr_assert_str_eq(root, "/tmp/pm/root", "conmon's own --root is runc's state, not podman's storage");
	cr_assert_str_eq(run, "/tmp/pm/run");
	runtime_conmon_args(ARGS("conmon\0--exit-command-arg\0--root=/a\0--exit-command-arg\0--runroot=/b\0"), root,
			    sizeof(root), run, sizeof(run));
	cr_assert_str_eq(root, "/a");
	cr_assert_str_eq(run, "/b");
	/* A value not behind its own --exit-command-arg, a relative one, a flag that only starts the same, none. */
	runtime_conmon_args(ARGS("conmon\0--exit-command-arg\0--root\0/x\0--exit-command-arg\0--runroot\0"
				 "--exit-command-arg\0rel\0--exit-command-arg\0--rootless=/y\0"),
			    root, sizeof(root), run, sizeof(run));
	cr_assert_str_eq(root, "");
	cr_assert_str_eq(run, "");
	runtime_conmon_args("", 0, root, sizeof(root), run, sizeof(run));
	cr_assert_str_eq(root, "");
	/* Cut short at the end: not taken. */
	runtime_conmon_args("conmon\0--exit-command-arg\0--root\0--exit-command-arg\0/cut", 56, root, sizeof(root), run,
			    sizeof(run));
	cr_assert_str_eq(root, "");
}

Test(runtime_state, settings_files)
{
	const char *toml = "# storage.conf\n[storage]\ndriver = \"overlay\"\n  runroot = \"/run/x\"  # comment\n"
			   "graphroot=\"/srv/graph\"\n[storage.options]\ngraphroot = \"/not/this\"\n";
	const char *top = "data_root = \"/srv/nerdctl\"\n[x]\ndata_root = \"/no\"\n";
	char out[64];

	cr_assert_eq(runtime_toml_string(toml, strlen(toml), "storage", "graphroot", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "/srv/graph");
	cr_assert_eq(runtime_toml_string(toml, strlen(toml), "storage", "runroot", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "/run/x");
	cr_assert_eq(runtime_toml_string(toml, strlen(toml), "storage", "rootless_storage_path", out, sizeof(out)), -1);
	cr_assert_eq(runtime_toml_string(toml, strlen(toml), "", "graphroot", out, sizeof(out)), -1);
	cr_assert_eq(runtime_toml_string(top, strlen(top), "", "data_root", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "/srv/nerdctl");
	cr_assert_eq(runtime_toml_string(ARGS("k = \"a\\\"b\"\n"), "", "k", out, sizeof(out)), -1, "escapes");
	cr_assert_eq(runtime_toml_string(ARGS("k = \"open\n"), "", "k", out, sizeof(out)), -1);
	cr_assert_eq(runtime_toml_string(ARGS("k = \"/a\" junk\n"), "", "k", out, sizeof(out)), -1);
	cr_assert_eq(runtime_toml_string(ARGS("k = \"0123456789\"\n"), "", "k", out, 8), -1);
	cr_assert_eq(runtime_json_string(ARGS("{\"data-root\": \"/srv/docker\", \"debug\": true}"), "data-root", out,
					 sizeof(out)),
		     0);
	cr_assert_str_eq(out, "/srv/docker");
	cr_assert_eq(runtime_json_string(ARGS("{\"data-root\": 5}"), "data-root", out, sizeof(out)), -1);
	cr_assert_eq(runtime_json_string(ARGS("not json"), "data-root", out, sizeof(out)), -1);
}
