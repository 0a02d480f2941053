// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "system/runtime_state.h"

#include <stdio.h>
#include <string.h>

#include "system/json_field.h"

const char *runtime_kind_name(enum runtime_kind k)
{
	switch (k) {
	case RUNTIME_DOCKER:
		return "docker";
	case RUNTIME_PODMAN:
		return "podman";
	case RUNTIME_NERDCTL:
		return "nerdctl";
	default:
		return "cgroup";
	}
}

bool runtime_id_valid(const char *s)
{
	size_t i;

	for (i = 0; i < CONTAINER_ID_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[i] == '\0';
}

static bool name_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (!first && (c == '_' || c == '.' || c == '-'));
}

bool runtime_name_valid(const char *s)
{
	size_t i;

	for (i = 0; i < CONTAINER_NAME_MAX && s[i]; i++)
		if (!name_char(s[i], i == 0))
			return false;
	return i > 0 && i < CONTAINER_NAME_MAX;
}

/* A string member of obj into out if it is one and fits; else out is "" and -1. */
static int string_member(struct json_value obj, const char *key, char *out, size_t size)
{
	struct json_value v;

	out[0] = '\0';
	if (json_get(obj, key, &v) || json_string(v, out, size)) {
		out[0] = '\0';
		return -1;
	}
	return 0;
}

int runtime_parse_docker(const char *buf, size_t len, struct runtime_container *c)
{
	struct json_value root, state, v;
	char name[CONTAINER_NAME_MAX + 1];
	bool running;

	memset(c, 0, sizeof(*c));
	c->runtime = RUNTIME_DOCKER;
	c->running = -1;
	if (json_root(buf, len, &root) || string_member(root, "ID", c->id, sizeof(c->id)) || !runtime_id_valid(c->id)) {
		c->id[0] = '\0';
		return -1;
	}
	/* Docker keeps a name as a path of its link tree: "/web". */
	if (!string_member(root, "Name", name, sizeof(name)) && name[0] == '/' && runtime_name_valid(name + 1))
		snprintf(c->name, sizeof(c->name), "%s", name + 1);
	if (!json_get(root, "State", &state) && !json_get(state, "Running", &v) && !json_bool(v, &running))
		c->running = running;
	return 0;
}

int runtime_parse_storage(const char *buf, size_t len, void (*fn)(void *ctx, const struct runtime_container *c),
			  void *ctx)
{
	struct json_value root, entry, names, v;
	size_t pos = 0, npos;
	int n = 0, r;

	if (json_root(buf, len, &root) || root.p[0] != '[')
		return -1;
	while ((r = json_next(root, &pos, &entry)) == 1) {
		struct runtime_container c = { .runtime = RUNTIME_PODMAN, .running = -1 };

		if (string_member(entry, "id", c.id, sizeof(c.id)) || !runtime_id_valid(c.id))
			continue;
		npos = 0;
		if (!json_get(entry, "names", &names))
			while (!c.name[0] && json_next(names, &npos, &v) == 1)
				if (json_string(v, c.name, sizeof(c.name)) || !runtime_name_valid(c.name))
					c.name[0] = '\0';
		fn(ctx, &c);
		n++;
	}
	return r < 0 ? -1 : n;
}

int runtime_parse_nerdctl(const char *name, const char *buf, size_t len, struct runtime_container *c)
{
	memset(c, 0, sizeof(*c));
	c->runtime = RUNTIME_NERDCTL;
	c->running = -1;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\r' || buf[len - 1] == '\t'))
		len--;
	if (len != CONTAINER_ID_LEN || memchr(buf, '\0', len))
		return -1;
	memcpy(c->id, buf, len);
	c->id[len] = '\0';
	if (!runtime_id_valid(c->id) || !runtime_name_valid(name)) {
		c->id[0] = '\0';
		return -1;
	}
	snprintf(c->name, sizeof(c->name), "%s", name);
	return 0;
}

/* An absolute path argument into out (else out stays as it was). */
static void path_arg(const char *v, char *out, size_t size)
{
	if (v[0] == '/' && strlen(v) < size)
		snprintf(out, size, "%s", v);
}

void runtime_dockerd_args(const char *cmdline, size_t len, char *data_root, size_t dsize, char *config, size_t csize)
{
	static const char *const roots[] = { "--data-root", "--graph", "-g" };
	const char *end = cmdline + len, *a = cmdline;

	data_root[0] = config[0] = '\0';
	/* The arguments after the program's name; the last of each wins, as with dockerd's flags. */
	a = memchr(a, '\0', len) ? (const char *)memchr(a, '\0', len) + 1 : end;
	while (a < end) {
		const char *z = memchr(a, '\0', (size_t)(end - a));
		const char *next = z ? z + 1 : end, *val = NULL;
		size_t alen = z ? (size_t)(z - a) : (size_t)(end - a);
		int which = -1; /* 0: a data root, 1: the config file */

		if (!z) /* the last argument cut short: not taken */
			break;
		if (!strcmp(a, "--"))
			break;
		for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]) && which < 0; i++) {
			size_t n = strlen(roots[i]);

			if (!strncmp(a, roots[i], n) && (a[n] == '=' || !a[n] || (n == 2 && alen > 2))) {
				which = 0;
				val = a[n] == '=' ? a + n + 1 : a[n] ? a + n : NULL;
			}
		}
		if (which < 0 && !strncmp(a, "--config-file", 13) && (a[13] == '=' || !a[13])) {
			which = 1;
			val = a[13] == '=' ? a + 14 : NULL;
		}
		if (which >= 0 && !val && next < end && memchr(next, '\0', (size_t)(end - next))) {
			val = next;
			next += strlen(next) + 1;
		}
		if (which >= 0 && val)
			path_arg(val, which ? config : data_root, which ? csize : dsize);
		a = next;
	}
}

/* The next whole argument after a (NUL-terminated, before end), or NULL. */
static const char *next_arg(const char *a, const char *end)
{
	const char *z = memchr(a, '\0', (size_t)(end - a));

	return z && z + 1 < end && memchr(z + 1, '\0', (size_t)(end - z - 1)) ? z + 1 : NULL;
}

void runtime_conmon_args(const char *cmdline, size_t len, char *graphroot, size_t gsize, char *runroot, size_t rsize)
{
	const char *end = cmdline + len, *a = len && memchr(cmdline, '\0', len) ? cmdline : NULL;

	graphroot[0] = runroot[0] = '\0';
	/* podman's own options, handed to conmon for its exit command: "--exit-command-arg" before each
	 * ("--root", then the path; or "--root=PATH"). */
	while (a && (a = next_arg(a, end))) {
		const char *opt, *val = NULL;

		if (strcmp(a, "--exit-command-arg") != 0 || !(opt = next_arg(a, end)))
			continue;
		a = opt;
		bool root = !strncmp(opt, "--root", 6), run = !strncmp(opt, "--runroot", 9);
		size_t n = root ? 6 : 9;

		if ((!root && !run) || (opt[n] && opt[n] != '='))
			continue;
		if (opt[n] == '=') {
			val = opt + n + 1;
		} else {
			const char *flag = next_arg(opt, end);

			if (!flag || strcmp(flag, "--exit-command-arg") != 0 || !(val = next_arg(flag, end)))
				continue;
			a = val;
		}
		path_arg(val, root ? graphroot : runroot, root ? gsize : rsize);
	}
}

int runtime_json_string(const char *buf, size_t len, const char *key, char *out, size_t size)
{
	struct json_value root;

	if (json_root(buf, len, &root))
		return -1;
	return string_member(root, key, out, size);
}

static const char *skip_blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

int runtime_toml_string(const char *buf, size_t len, const char *section, const char *key, char *out, size_t size)
{
	const char *p = buf, *end = buf + len;
	size_t klen = strlen(key), slen = strlen(section);
	bool in = !*section;
	int found = -1;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q;

		if (!eol)
			eol = end;
		q = skip_blank(p, eol);
		if (q < eol && *q == '[') {
			/* "[storage]" (not "[storage.options]"). */
			in = (size_t)(eol - q) > slen + 1 && !strncmp(q + 1, section, slen) && q[1 + slen] == ']';
		} else if (in && (size_t)(eol - q) > klen && !strncmp(q, key, klen)) {
			q = skip_blank(q + klen, eol);
			if (q < eol && *q == '=') {
				const char *v = skip_blank(q + 1, eol), *close;

				if (v < eol && *v == '"' && (close = memchr(v + 1, '"', (size_t)(eol - v - 1))) &&
				    !memchr(v, '\\', (size_t)(close - v)) && !memchr(v, '\0', (size_t)(close - v)) &&
				    (size_t)(close - v - 1) < size) {
					q = skip_blank(close + 1, eol);
					if (q == eol || *q == '#' || *q == '\r') {
						memcpy(out, v + 1, (size_t)(close - v - 1));
						out[close - v - 1] = '\0';
						found = 0;
					}
				}
			}
		}
		p = eol + 1;
	}
	return found;
}
