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
	cr_assert(strstr(s, "<tr id=f0-l5 style=\"--t:0.80;--s:0.32\">"),
		  "the profile's hottest line the darkest, self on its own scale: %s", s);
	cr_assert(strstr(s, "<tr id=f0-l2 style=\"--t:0.74;--s:0.80\">"), "%s", s);
	cr_assert(strstr(s, "47 samples ran its code (97.9%), 45 in it (self); hottest: <a href=\"#f0-l5\">line 5</a>"),
		  "%s", s);
	cr_assert(strstr(s, "the hottest line: 47 samples (97.9%) total, 40 self"), "the legend: %s", s);
	cr_assert(strstr(s, "app.py</a><td>47<td>97.9<td>45\n"), "the index: %s", s);
	cr_assert_null(strstr(s, "TOPSECRET"), "a link named .py to another file is not read");
	cr_assert(strstr(s, "evil.py</h2><p>1 samples ran its code (2.1%), 1 in it (self); hottest: <a "
			    "href=\"#f2-l1\">line 1</a>; source not shown: a link to a file that is not a .py"),
		  "%s", s);
	cr_assert(strstr(s, "gone.py</h2><p>2 samples ran its code (4.2%), 2 in it (self); hottest: <a "
			    "href=\"#f1-l7\">line 7</a>; source not shown: no longer on this host"),
		  "%s", s);
	cr_assert(strstr(s, "<td class=n>7<td class=c>2<td class=c>2<td><pre></pre>"), "sampled lines only: %s", s);
	cr_assert_null(strstr(s, "class=gap"), "no stretch of app.py is far from a sample: %s", s);
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

/* Lines far from every sample fold away behind a row saying how many; the
 * few around a sampled line stay. */
Test(heatmap, cold_stretches_fold_behind_a_row)
{
	char dir[] = "/tmp/pyebpf-heat-XXXXXX", src[128];
	struct profile *p = profile__new();
	struct sample_labels l = { .pid = 1 << 30 };
	FILE *f;

	cr_assert(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/long.py", dir);
	f = fopen(src, "w");
	for (int i = 1; i <= 40; i++)
		fprintf(f, "x%d = %d\n", i, i);
	fclose(f);
	profile__meta(p)->start_epoch_ns = epoch_now_ns();
	uint32_t at20 = py_frame(p, "<module>", src, 20);
	profile__add(p, &l, &at20, 1, 3);
	char *s = written(heatmap__write, p);

	cr_assert(strstr(s, "<tbody class=gap><tr><td colspan=4>&#8943; lines 1&#8211;16: no samples</tbody><tbody "
			    "class=cold>\n<tr><td class=n>1<td"),
		  "%s", s);
	cr_assert(strstr(s, "&#8943; lines 24&#8211;40: no samples"), "%s", s);
	cr_assert(strstr(s, "</tbody><tbody>\n<tr><td class=n>17<td"), "three lines of context: %s", s);
	cr_assert(
		strstr(s,
		       "<td class=n>23<td class=c><td class=c><td><pre>x23 = 23</pre></tr>\n</tbody><tbody class=gap>"),
		"%s", s);
	cr_assert(strstr(s, "<td class=n>40<td class=c><td class=c><td><pre>x40 = 40</pre>"), "every line is there: %s",
		  s);
	free(s);
	profile__free(p);
	unlink(src);
	rmdir(dir);
}
