// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "profile/filter_args.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/offcpu.h"
#include "pyebpf.h"
#include "base/escape.h"
#include "base/util.h"
#include "base/wallclock.h"
#include "system/container_find.h"

const char filter_args_usage[] =
	"Filters (repeatable where they name things):\n"
	"      --tid TID[,TID...]  only these threads (native tids)\n"
	"      --thread NAME|TID   only this thread: Python thread name, else OS name, or tid\n"
	"      --exclude-thread NAME|TID\n"
	"                          leave out a thread by name or native tid\n"
	"      --comm NAME         only processes of this name (as in ps -o comm)\n"

	"      --since WHEN        only samples from then: seconds into the recording, or a\n"
	"                          wall-clock time (14:00, 2026-11-23T14:00:05; Z for UTC)\n"
	"      --until WHEN        only samples before then (the same forms; a bare time\n"
	"                          is on --since's date, else today)\n"
	"      --label KEY=VALUE   only samples with this label (each --label must hold):\n"
	"                          endpoint=\"GET /checkout\", trace_id=, span_id=,\n"
	"                          span_name=, or the variable record's --context-label named\n"
	"      --trace-id ID       only the samples of this trace (32 hex digits, either case)\n"
	"      --gil               only samples of threads holding the GIL\n"
	"      --reason R[,R...]   (--mode wall/off-cpu) only time off the CPU for these\n"
	"                          reasons: runqueue, sleep, io, lock, gil, other; cpu: on it\n"
	"      --no-kernel         leave out kernel frames\n"
	"      --python-only       only Python frames; samples without any are left out\n"
	"                          (off-CPU reasons stay labels, not frames)\n"
	"      --functions         one frame per Python function, not per line (py-spy's --nolineno)\n";

static void push_str(const char ***v, size_t *n, const char *s)
{
	size_t cap = *n;

	xgrow(v, &cap, *n + 1, sizeof(**v));
	(*v)[(*n)++] = s;
}

static int push_ids(uint32_t **v, size_t *n, const char *arg, const char *opt, const char *what)
{
	char bad[64];

	if (!parse_id_list(arg, v, n, bad, sizeof(bad)))
		return 0;
	if (!*bad)
		err_msg("invalid %s list '%s' for %s (expected %s[,%s...])", what, arg, opt, what, what);
	else
		err_msg("invalid %s '%s' for %s (expected %s[,%s...])", what, bad, opt, what, what);
	return -1;
}

int filter_args__pids(struct filter *f, const char *arg, const char *opt)
{
	return push_ids(&f->pids, &f->npids, arg, opt, "PID");
}

/* --since and --until as written: wall-clock times are made epoch times
 * once both are known (a bare time takes the other's date). */
static struct time_arg since_arg, until_arg;

int filter_args__time(const char *arg, const char *opt, struct time_arg *t)
{
	if (time_arg_parse(arg, t) == 0)
		return 0;
	if (t->why) {
		err_msg("invalid time '%s' for %s: %s", arg, opt, t->why);
		return -1;
	}
	err_msg("invalid time '%s' for %s (seconds into the recording, or a time: 14:20, 2026-11-23T14:00:05, "
		"with Z for UTC)",
		arg, opt);
	return -1;
}

/* A name for a list option: 1, or -1 after one line when it is empty. */
static int push_name(const char ***v, size_t *n, const char *arg, const char *opt)
{
	if (!*arg) {
		err_msg("empty value for %s", opt);
		return -1;
	}
	push_str(v, n, arg);
	return 1;
}

/* Ids that names stood for: they outlive every filter (its strings must), and stay few. */
static char **named_ids;
static size_t nnamed_ids, named_cap;

static bool all_hex(const char *s)
{
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
			return false;
	return true;
}

/*
 * report --container: samples keep the container's id (the start of it will
 * do) and its name. A name matches the samples recorded under it (every
 * container of that name, across restarts and recreations), and stands for
 * the id of the container of that name on this host now, running or
 * stopped, as docker's own commands take one (a recording made before
 * names were kept has only ids). Resolved once all options are read (a
 * --help among them reads no runtime's state).
 */
static int container_names(struct filter *f)
{
	if (f->ncontainers)
		f->container_names = xcalloc(f->ncontainers, sizeof(*f->container_names));
	for (size_t i = 0; i < f->ncontainers; i++) {
		const char *arg = f->containers[i];
		char id[128], why[2048];
		int r = container_id_by_name(&container_sources_host, arg, id, sizeof(id), why, sizeof(why));

		if (r < 0) {
			err_msg("--container: %s", why);
			return -1;
		}
		if (runtime_name_valid(arg))
			f->container_names[f->ncontainer_names++] = arg;
		if (r == 0 && !all_hex(arg))
			continue; /* a name no runtime knows now: the recording's own names only */
		/* Ids are written in lower case: an id's start given in upper case is taken as the same. */
		if (r == 0 && strlen(arg) >= sizeof(id))
			continue; /* longer than any id: it matches none, as given */
		if (r == 0) {
			size_t k;

			for (k = 0; arg[k]; k++)
				id[k] = (char)tolower((unsigned char)arg[k]);
			id[k] = '\0';
		}
		if (strcmp(id, arg) != 0) {
			xgrow(&named_ids, &named_cap, nnamed_ids + 1, sizeof(*named_ids));
			named_ids[nnamed_ids] = xstrdup(id);
			f->containers[i] = named_ids[nnamed_ids++];
		}
	}
	return 0;
}

/* "io,lock" -> the bits of those reasons; "cpu" is time on the CPU. */
static int parse_reasons(const char *arg, uint32_t *out)
{
	char buf[256], *save = NULL;

	if (strlen(arg) >= sizeof(buf) || !*arg) {
		err_msg("invalid reason list for --reason (runqueue, sleep, io, lock, gil, other or cpu)");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *r = strtok_r(buf, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
		enum offcpu_reason why = offcpu_reason_parse(r);

		if (why == OFFCPU_NONE && strcmp(r, "cpu") != 0) {
			err_msg("unknown reason '%.64s' for --reason (runqueue, sleep, io, lock, gil, other or cpu)",
				r);
			return -1;
		}
		*out |= 1u << why;
	}
	return 0;
}

int filter_args__option(struct filter *f, int opt, const char *arg)
{
	switch (opt) {
	case OPT_FILTER_TID:
		return push_ids(&f->tids, &f->ntids, arg, "--tid", "TID") ? -1 : 1;
	case OPT_FILTER_THREAD:
		return push_name(&f->threads, &f->nthreads, arg, "--thread");
	case OPT_FILTER_EXCLUDE_THREAD:
		return push_name(&f->exclude_threads, &f->nexclude, arg, "--exclude-thread");
	case OPT_FILTER_COMM:
		/* The kernel keeps 15 bytes of a name: a longer one never matches. */
		if (strlen(arg) > PYEBPF_COMM_LEN - 1) {
			err_msg("--comm '%s' is longer than a process name can be (15 bytes): the kernel calls it "
				"'%.15s'",
				arg, arg);
			return -1;
		}
		return push_name(&f->comms, &f->ncomms, arg, "--comm");
	case OPT_FILTER_SINCE:
		f->timed = true;
		if (filter_args__time(arg, "--since", &since_arg))
			return -1;
		f->since_ns = since_arg.wall ? 0 : since_arg.offset_ns;
		return 1;
	case OPT_FILTER_UNTIL:
		f->timed = true;
		if (filter_args__time(arg, "--until", &until_arg))
			return -1;
		f->until_ns = until_arg.wall ? UINT64_MAX : until_arg.offset_ns;
		return 1;
	case OPT_FILTER_CONTAINER:
		return push_name(&f->containers, &f->ncontainers, arg, "--container");
	case OPT_FILTER_LABEL: {
		const char *eq = strchr(arg, '=');

		if (!eq || eq == arg || eq - arg > 64) {
			char shown[80];

			err_msg("--label wants KEY=VALUE (endpoint=/checkout), not '%s'",
				text_escape(arg, shown, sizeof(shown)));
			return -1;
		}
		push_str(&f->labels, &f->nlabels, arg);
		return 1;
	}
	case OPT_FILTER_TRACE_ID:
		if (strlen(arg) != 32 || strspn(arg, "0123456789abcdefABCDEF") != 32) {
			char shown[80];

			err_msg("--trace-id wants a trace's 32 hex digits, not '%s'",
				text_escape(arg, shown, sizeof(shown)));
			return -1;
		}
		f->trace_id = arg;
		return 1;
	case OPT_FILTER_GIL:
		f->gil_only = true;
		return 1;
	case OPT_FILTER_REASON:
		return parse_reasons(arg, &f->reasons) ? -1 : 1;
	case OPT_FILTER_NO_KERNEL:
		f->no_kernel = true;
		return 1;
	case OPT_FILTER_PYTHON_ONLY:
		f->python_only = true;
		return 1;
	case OPT_FILTER_FUNCTIONS:
		f->functions = true;
		return 1;
	default:
		return 0;
	}
}

int filter_args__check(struct filter *f)
{
	int64_t now = epoch_now_ns();

	if (container_names(f))
		return -1;
	if (since_arg.given && since_arg.wall)
		f->since_epoch_ns = time_arg_epoch(&since_arg, &until_arg, now);
	if (until_arg.given && until_arg.wall)
		f->until_epoch_ns = time_arg_epoch(&until_arg, &since_arg, now);
	if (f->until_epoch_ns <= f->since_epoch_ns) {
		char a[64], b[64];

		epoch_format(f->since_epoch_ns, a, sizeof(a));
		epoch_format(f->until_epoch_ns, b, sizeof(b));
		err_msg("--until %s is not after --since %s", b, a);
		return -1;
	}
	if (f->until_ns != UINT64_MAX && f->until_ns < f->since_ns) {
		err_msg("--until %.3f is before --since %.3f", f->until_ns / 1e9, f->since_ns / 1e9);
		return -1;
	}
	return 0;
}

/* getopt_long's ':' (a value is missing) or '?' (unknown option) as one
 * error line naming the verb's help. */
static void bad_option(const char *verb, int c, char **argv)
{
	if (c == ':')
		err_msg("option '%s' needs a value (see 'pyebpf %s --help')", argv[optind - 1], verb);
	else if (optopt)
		err_msg("unknown option '-%c' (see 'pyebpf %s --help')", optopt, verb);
	else
		err_msg("unknown option '%s' (see 'pyebpf %s --help')", argv[optind - 1], verb);
}

void args_begin(void)
{
	memset(&since_arg, 0, sizeof(since_arg));
	memset(&until_arg, 0, sizeof(until_arg));
	optind = 1;
	opterr = 0;
}

int args_next(int argc, char **argv, const char *shortopts, const struct option *longopts, struct filter *f,
	      const char *verb)
{
	int c, handled;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == ':' || c == '?') {
			bad_option(verb, c, argv);
			return ARGS_FAIL;
		}
		handled = filter_args__option(f, c, optarg);
		if (handled < 0)
			return ARGS_FAIL;
		if (!handled)
			return c;
	}
	return ARGS_END;
}

int args_output(const char *arg, const char **out)
{
	if (!*arg) {
		err_msg("empty output path for -o");
		return -1;
	}
	*out = arg;
	return 0;
}
