/*
 * The interpreters the tests run against: every pyenv build, /usr/bin/python3.*,
 * and what .ci/pythons.sh provisions in PYEBPF_PYTHONS_DIR (default
 * /var/cache/pyebpf/pythons): Debian sid's 3.14 and 3.15, the free-threaded
 * 3.13t, 3.14t and 3.15t (DIR/3.14t/bin/python3.14t; those it could build).
 */
#ifndef PYEBPF_TEST_PYTHONS_H
#define PYEBPF_TEST_PYTHONS_H

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct python {
	char path[512]; /* the interpreter binary */
	char lib[512];  /* its libpython (pyenv builds), "" for a static one */
	int major, minor;
	int free_threaded; /* python3.13t, 3.14t, 3.15t: a --disable-gil build */
};

/* Does pyebpf read this interpreter's asyncio tasks? 3.11+, free-threaded
 * builds too: 3.13t's are in _asyncio's sets as on 3.13; 3.14t+ keep the
 * per-thread lists of 3.14, found through their own .AsyncioDebug section. */
static inline int python_has_asyncio_tasks(const struct python *py)
{
	return py->major == 3 && py->minor >= 11;
}

/* Where .ci/pythons.sh puts its interpreters. */
static inline const char *pythons_dir(void)
{
	const char *d = getenv("PYEBPF_PYTHONS_DIR");

	return d && *d ? d : "/var/cache/pyebpf/pythons";
}

/* Fill up to max interpreters; returns how many. */
static inline int find_pythons(struct python *out, int max)
{
	const char *root = getenv("PYENV_ROOT");
	char pattern[600];
	glob_t g;
	int n = 0;

	snprintf(pattern, sizeof(pattern), "%s/versions/*/bin/python[23].[0-9]*",
		 root && *root ? root : "/root/.pyenv");
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && n < max; i++) {
			const char *p = g.gl_pathv[i], *b = strrchr(p, '/') + 1;
			struct python *py = &out[n];

			/* python3.9, not python3.9-config or python3.9m */
			if (sscanf(b, "python%d.%d", &py->major, &py->minor) != 2 || strchr(b + 7, '-') ||
			    b[strlen(b) - 1] == 'm')
				continue;
			py->free_threaded = 0;
			snprintf(py->path, sizeof(py->path), "%s", p);
			char libpat[600];
			glob_t lg;
			snprintf(libpat, sizeof(libpat), "%.*s/lib/libpython%d.%d*.so.1.0", (int)(b - p - 5), p,
				 py->major, py->minor);
			py->lib[0] = '\0';
			if (glob(libpat, 0, NULL, &lg) == 0) {
				snprintf(py->lib, sizeof(py->lib), "%s", lg.gl_pathv[0]);
				globfree(&lg);
			}
			n++;
		}
		globfree(&g);
	}
	snprintf(pattern, sizeof(pattern),
		 "{/usr/bin/python3.[0-9]*,%s/sid/usr/bin/python3.[0-9]*,%s/3.*t/bin/python3.*t}", pythons_dir(),
		 pythons_dir());
	if (glob(pattern, GLOB_BRACE, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && n < max; i++) {
			struct python *py = &out[n];
			const char *b = strrchr(g.gl_pathv[i], '/') + 1;
			char t = 0;

			/* python3.14, python3.13t; not python3.14-config */
			if (sscanf(b, "python%d.%d%c", &py->major, &py->minor, &t) < 2 || strchr(b, '-') ||
			    (t && t != 't'))
				continue;
			py->free_threaded = t == 't';
			snprintf(py->path, sizeof(py->path), "%s", g.gl_pathv[i]);
			py->lib[0] = '\0';
			n++;
		}
		globfree(&g);
	}
	return n;
}

#endif
