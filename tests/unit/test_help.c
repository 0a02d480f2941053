/*
 * Each verb's help and its parser's option table say the same: every option
 * the parser takes is in the help (and so in the man page, made from the
 * help), and every option line of the help documents one the parser takes.
 */
#include "unit.h"

#include <getopt.h>

#include "archive/report_args.h"
#include "live/dump_args.h"
#include "live/live_top_args.h"
#include "push/push_main_args.h"
#include "record/record_args.h"
#include "serve/serve_args.h"

/* Does the help name "--NAME" as a whole word? */
static bool names(const char *help, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(help, "--"); p; p = strstr(p + 2, "--"))
		if (!strncmp(p + 2, name, n) && !(p[2 + n] == '-' || (p[2 + n] >= 'a' && p[2 + n] <= 'z')))
			return true;
	return false;
}

static bool in_table(const struct option *o, const char *name, size_t n)
{
	for (; o->name; o++)
		if (strlen(o->name) == n && !strncmp(o->name, name, n))
			return true;
	return false;
}

static void agree(const char *verb, char *help, const struct option *opts)
{
	for (const struct option *o = opts; o->name; o++)
		cr_expect(names(help, o->name), "pyebpf %s takes --%s, which its help does not name", verb, o->name);
	/* The help's option lines ("  -o, --output FILE", "      --comm NAME"): each documents one the parser takes. */
	for (const char *line = help; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *p = line + strspn(line, " ");
		size_t n;

		if (p == line)
			continue;
		if (p[0] == '-' && p[1] != '-' && p[2] == ',' && p[3] == ' ')
			p += 4;
		if (strncmp(p, "--", 2))
			continue;
		n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-");
		if (n)
			cr_expect(in_table(opts, p + 2, n),
				  "pyebpf %s's help documents --%.*s, which its parser does not take", verb, (int)n,
				  p + 2);
	}
	free(help);
}

Test(help, every_verbs_help_and_parser_agree)
{
	agree("record", record_args__help(), record_args__options());
	agree("report", report_args__help(), report_args__options());
	agree("top", live_top_args__help(), live_top_args__options());
	agree("dump", dump_args__help(), dump_args__options());
	agree("push", push_main_args__help(), push_main_args__options());
	agree("serve", serve_args__help(), serve_args__options());
}
