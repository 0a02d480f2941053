/* Line numbers equal CPython's own (co_lines(), dis) for every offset of real code, per version. */
#include "unit.h"

#include "python/linetable.h"
#include "python/offsets.h"
#include "../pythons.h"

static enum py_linetable_format format_of(int major, int minor)
{
	if (major == 2)
		return PY_LNOTAB_27;
	if (minor <= 9)
		return PY_LNOTAB_36;
	return minor == 10 ? PY_LINETABLE_310 : PY_LOCATIONS_311;
}

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;

	if (!strcmp(s, "-"))
		return 0;
	for (; s[0] && s[1] && n < max; s += 2) {
		unsigned v;
		sscanf(s, "%2x", &v);
		out[n++] = (uint8_t)v;
	}
	return n;
}

static void check_interpreter(const struct python *py)
{
	char cmd[1024], *line = NULL, *tabhex = NULL;
	size_t cap = 0, codes = 0, offsets = 0;
	static uint8_t tab[1 << 20];
	enum py_linetable_format fmt = format_of(py->major, py->minor);
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s ../tests/fixtures/dump_lines.py", py->path);
	f = popen(cmd, "r");
	cr_assert(f);
	while (getline(&line, &cap, f) > 0) {
		int first;
		size_t len;

		tabhex = realloc(tabhex, strlen(line) + 1);
		cr_assert_eq(sscanf(line, "code %d %s", &first, tabhex), 2, "%s: bad line %s", py->path, line);
		len = unhex(tabhex, tab, sizeof(tab));
		cr_assert(getline(&line, &cap, f) > 0);
		char *p = line, *end;
		for (;;) {
			long off = strtol(p, &end, 10);
			if (end == p)
				break;
			p = end;
			long want = strtol(p, &end, 10);
			cr_assert_neq(end, p);
			p = end;
			int got = py_line_for_offset(fmt, tab, len, first, (int)off);
			cr_assert_eq(got, want, "%s: code at line %d, offset %ld: line %d, CPython says %ld", py->path,
				     first, off, got, want);
			offsets++;
		}
		codes++;
	}
	free(line);
	free(tabhex);
	cr_assert_eq(pclose(f), 0, "%s failed", cmd);
	cr_assert_gt(codes, 500, "%s: only %zu code objects", py->path, codes);
	cr_log_info("%s: %zu code objects, %zu offsets agree\n", py->path, codes, offsets);
}

Test(linetable, agrees_with_every_installed_interpreter, .timeout = 300)
{
	struct python pys[32];
	int n = find_pythons(pys, 32);

	if (!n)
		cr_skip_test("no Python interpreter installed");
	for (int i = 0; i < n; i++)
		check_interpreter(&pys[i]);
}

Test(linetable, negative_offset_is_the_first_line)
{
	cr_assert_eq(py_line_for_offset(PY_LOCATIONS_311, (const uint8_t *)"", 0, 17, -2), 17);
}
