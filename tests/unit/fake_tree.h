/*
 * Trees shaped like a machine's, for tests of what pyebpf reads from one:
 * directories and files under a temporary base, and docker's state of a
 * container in a data root (test_containers.c, test_container_watch.c).
 */
#ifndef PYEBPF_UNIT_FAKE_TREE_H
#define PYEBPF_UNIT_FAKE_TREE_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "unit.h"

static inline void mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	mkdir(buf, 0755);
}

/* base/FMT...: one of four buffers, so a call can take a few. */
static inline const char *at(const char *base, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline const char *at(const char *base, const char *fmt, ...)
{
	static char bufs[4][PATH_MAX];
	static int next;
	char *b = bufs[next++ % 4];
	va_list ap;
	int n = snprintf(b, PATH_MAX, "%s/", base);

	va_start(ap, fmt);
	vsnprintf(b + n, PATH_MAX - (size_t)n, fmt, ap);
	va_end(ap);
	return b;
}

/* text into path, its directories made. */
static inline void put(const char *path, const char *text)
{
	char dir[PATH_MAX];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	mkdir_p(dir);
	f = fopen(path, "w");
	cr_assert(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

/* docker's config.v2.json of a container, in root's data_root/containers/dir_id/. */
static inline void docker_config(const char *root, const char *data_root, const char *dir_id, const char *id,
				 const char *name, bool running)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "{\"StreamConfig\":{},\"State\":{\"Running\":%s,\"Pid\":%d},\"ID\":\"%s\",\"Path\":\"python3\","
		 "\"Name\":\"/%s\",\"Driver\":\"overlay2\"}",
		 running ? "true" : "false", running ? 4242 : 0, id, name);
	put(at(root, "%s/containers/%s/config.v2.json", data_root, dir_id), text);
}

#endif
