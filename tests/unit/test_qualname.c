#include "unit.h"

#include "python/qualname.h"

static const char src[] = "import os\n"                          /* 1 */
			  "\n"                                   /* 2 */
			  "class Outer:\n"                       /* 3 */
			  "    x = 1\n"                          /* 4 */
			  "    def method(self):\n"              /* 5 */
			  "        def helper():\n"              /* 6 */
			  "            return [i for i in ()]\n" /* 7 */
			  "        return helper\n"              /* 8 */
			  "\n"                                   /* 9 */
			  "    @staticmethod\n"                  /* 10 */
			  "    # a comment at column 4\n"        /* 11 */
			  "    def static(a,\n"                  /* 12 */
			  "b):\n"                                /* 13 */
			  "        pass\n"                       /* 14 */
			  "\n"                                   /* 15 */
			  "    class Inner:\n"                   /* 16 */
			  "        async def run(self):\n"       /* 17 */
			  "            if True:\n"               /* 18 */
			  "                f = lambda: 1\n"      /* 19 */
			  "\n"                                   /* 20 */
			  "def top():\n"                         /* 21 */
			  "    s = \"\"\"\n"                     /* 22 */
			  "class Fake:\n"                        /* 23: inside a string */
			  "\"\"\"\n"                             /* 24 */
			  "    def inner(x=(1,\n"                /* 25 */
			  "2)): pass\n";                         /* 26 */

static void expect(int line, const char *name, const char *want)
{
	char *got = py_qualname_from_source(src, sizeof(src) - 1, line, name);

	if (!want) {
		cr_assert_null(got, "%s at %d: %s", name, line, got);
		return;
	}
	cr_assert(got, "%s at %d: nothing derived", name, line);
	cr_assert_str_eq(got, want);
	free(got);
}

Test(qualname, like_cpython_dunder_qualname)
{
	expect(5, "method", "Outer.method");
	expect(6, "helper", "Outer.method.<locals>.helper");
	expect(7, "<listcomp>", "Outer.method.<locals>.helper.<locals>.<listcomp>");
	expect(10, "static", "Outer.static"); /* first line is the decorator */
	expect(17, "run", "Outer.Inner.run");
	expect(19, "<lambda>", "Outer.Inner.run.<locals>.<lambda>");
}

Test(qualname, nothing_to_add_or_wrong_source)
{
	expect(21, "top", NULL);                   /* module level: co_name is the qualname */
	expect(25, "inner", "top.<locals>.inner"); /* not Fake.inner: that class is in a string */
	expect(1, "<module>", NULL);
	expect(5, "not_here", NULL); /* the source changed since: no guess */
	expect(500, "method", NULL);
}
