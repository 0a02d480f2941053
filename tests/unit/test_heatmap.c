/*
 * The heatmap writer over a profile made here, of a source file written
 * here: every line shown and escaped, sampled lines shaded with their total
 * (once per stack, recursion included) and self counts, files busiest
 * first; a file that is not a regular .py (a link named .py to another
 * file, a missing one) listed with its sampled lines and why, never read.
 */
#include "unit.h"

#include "base/util.h"
#include "write/heatmap.h"

static uint32_t py_frame(struct profile *p, const char *name, const char *file, uint32_t line)
{
	return profile__frame(p, &(struct frame){ .kind = FRAME_PYTHON,
						  .name = profile__str(p, name),
						  .module = profile__str(p, file),
						  .line = line,
						  .start_line = 1 });
}

Test(heatmap, lines_shaded_by_total_and_self_sources_read_only_when_py)
{
	char dir[] = "/tmp/pyebpf-heat-XXXXXX", src[128], other[128], link[128], secret[128];
	struct profile *p = profile__new();
	struct sample_labels l = { .pid = 1 << 30 }; /* no such process: this host's view */
	FILE *f;

	cr_assert(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/app.py", dir);
	snprintf(other, sizeof(other), "%s/gone.py", dir);
	snprintf(secret, sizeof(secret), "%s/secret.txt", dir);
	snprintf(link, sizeof(link), "%s/evil.py", dir);
	f = fopen(src, "w");
	fputs("def work(n):\n    return n < 3 and n & 1\n\ndef main():\n    work(1)\n", f);
	fclose(f);
	f = fopen(secret, "w");
	fputs("TOPSECRET\n", f);
	fclose(f);
	cr_assert_eq(symlink(secret, link), 0);
	profile__meta(p)->start_epoch_ns = epoch_now_ns();

	uint32_t main5 = py_frame(p, "main", src, 5), work2 = py_frame(p, "work", src, 2);
	uint32_t gone = py_frame(p, "helper", other, 7), evil = py_frame(p, "x", link, 1);
	profile__add(p, &l, (uint32_t[]){ main5, work2 }, 2, 30);
	profile__add(p, &l, (uint32_t[]){ main5, work2, work2 }, 3, 10); /* recursion: once per stack */
	profile__add(p, &l, (uint32_t[]){ main5 }, 1, 5);
	profile__add(p, &l, (uint32_t[]){ main5, gone }, 2, 2);
	profile__add(p, &l, (uint32_t[]){ evil }, 1, 1);
	char *s = written(heatmap__write, p);

	cr_assert(strstr(s,
			 "<td class=n>2<td class=c>40<td class=c>40<td><pre>    return n &lt; 3 and n &amp; 1</pre>"),
		  "line 2: total 40, self 40, escaped: %s", s);
	cr_assert(strstr(s, "<td class=n>5<td class=c>47<td class=c>5<td>"), "line 5: total 47, self 5: %s", s);
	cr_assert(strstr(s, "<td class=n>3<td class=c><td class=c><td><pre></pre>"), "unsampled lines shown bare: %s",
		  s);
	cr_assert(strstr(s, "rgba(255,90,0,0.80)"), "the busiest line of a file the darkest: %s", s);
	cr_assert_null(strstr(s, "TOPSECRET"), "a link named .py to another file is not read");
	cr_assert(strstr(s, "evil.py</h2><p>1 samples ran its code, 1 in it (self); source not shown: a link to a file "
			    "that is not a .py"),
		  "%s", s);
	cr_assert(strstr(s, "gone.py</h2><p>2 samples ran its code, 2 in it (self); source not shown: not readable"),
		  "%s", s);
	cr_assert(strstr(s, "<td class=n>7<td class=c>2<td class=c>2<td><pre></pre>"), "sampled lines only: %s", s);
	/* Busiest first: app.py (47) before gone.py (2) before evil.py (1). */
	cr_assert(strstr(s, "app.py</a>") < strstr(s, "gone.py</a>") &&
		  strstr(s, "gone.py</a>") < strstr(s, "evil.py</a>"));
	free(s);
	profile__free(p);
	unlink(link);
	unlink(secret);
	unlink(src);
	rmdir(dir);
}
