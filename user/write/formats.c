// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "write/formats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/gzip.h"
#include "base/util.h"
#include "profile/label_frames.h"
#include "write/flamegraph.h"
#include "write/folded.h"
#include "write/gecko.h"
#include "write/heatmap.h"
#include "write/pprof.h"
#include "write/speedscope.h"
#include "write/trace.h"

const char formats_usage[] =
	"                          format by extension: .folded or .txt (folded stacks),\n"
	"                          .pb.gz or .pprof (pprof: go tool pprof, Pyroscope; lossless),\n"
	"                          .speedscope.json (speedscope, one profile per thread),\n"
	"                          .svg (interactive flame graph), .json or .json.gz\n"
	"                          (Chrome trace timeline: Perfetto, chrome://tracing),\n"
	"                          .gecko.json (Firefox Profiler: a track per thread, waits as markers)\n"
	"      --format FORMAT     folded, pprof, speedscope, svg, trace, trace.gz or gecko,\n"
	"                          whatever the extension\n";

static const struct {
	const char *ext, *name;
	enum output_format f;
} formats[] = {
	/* Longest extensions first: .speedscope.json before .json. */
	{ ".speedscope.json", "speedscope", FORMAT_SPEEDSCOPE },
	{ ".gecko.json", "gecko", FORMAT_GECKO },
	{ ".heatmap.html", "heatmap", FORMAT_HEATMAP },
	{ ".json.gz", "trace.gz", FORMAT_TRACE_GZ },
	{ ".pb.gz", "pprof", FORMAT_PPROF },
	{ ".pprof", NULL, FORMAT_PPROF },
	{ ".folded", "folded", FORMAT_FOLDED },
	{ ".txt", NULL, FORMAT_FOLDED },
	{ ".svg", "svg", FORMAT_SVG },
	{ ".json", "trace", FORMAT_TRACE },
};

/* A character device or FIFO (through symlinks): written into, named freely. */
static bool is_stream(const char *path)
{
	struct stat st;

	return !stat(path, &st) && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

int output_format_from_path(const char *path, enum output_format *f)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!*base) {
		err_msg("output path '%s' names a directory, not a file", path);
		return -1;
	}
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (str_ends_with(base, formats[i].ext)) {
			*f = formats[i].f;
			return 0;
		}
	/* No extension, "-", a device or a pipe: folded stacks, the text format. */
	if (!strchr(base, '.') || !strcmp(path, "-") || is_stream(path)) {
		*f = FORMAT_FOLDED;
		return 0;
	}
	err_msg("cannot tell the output format of '%s' (known extensions: .folded, .txt, .pb.gz, .pprof, "
		".speedscope.json, .gecko.json, .heatmap.html, .svg, .json, .json.gz; or give --format)",
		path);
	return -1;
}

int output_format_from_name(const char *name, enum output_format *f)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (formats[i].name && !strcmp(name, formats[i].name)) {
			*f = formats[i].f;
			return 0;
		}
	err_msg("unknown format '%s' for --format (folded, pprof, speedscope, svg, trace, trace.gz, gecko, heatmap)",
		name);
	return -1;
}

/* The trace, built in memory and compressed whole. */
static int write_trace_gz(const struct profile *p, FILE *out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int ret;

	if (!mem)
		die("out of memory");
	ret = trace__write(p, mem);
	fclose(mem);
	if (!ret)
		ret = gzip__write((const uint8_t *)buf, len, out);
	free(buf);
	return ret ? ret : stream_finish(out);
}

static int write_one(const struct profile *p, enum output_format f, const struct write_opts *o, FILE *out);

/* --by KEY: folded draws its "[KEY=VALUE]" frames itself and pprof has the
 * labels (-tagfocus); the heatmap shades lines, not trees. The other trees
 * get the frames from a copy. */
static bool draws_label_frames(enum output_format f)
{
	return f == FORMAT_SVG || f == FORMAT_SPEEDSCOPE || f == FORMAT_GECKO || f == FORMAT_TRACE ||
	       f == FORMAT_TRACE_GZ;
}

int write_profile(const struct profile *p, enum output_format f, const struct write_opts *o, FILE *out)
{
	if (o->by && draws_label_frames(f)) {
		struct profile *by = profile__label_frames(p, o->by);
		int ret = write_one(by, f, o, out);

		profile__free(by);
		return ret;
	}
	return write_one(p, f, o, out);
}

static int write_one(const struct profile *p, enum output_format f, const struct write_opts *o, FILE *out)
{
	struct folded_opts fo = { .threads = o->threads,
				  .containers = o->containers,
				  .processes = o->processes,
				  .diff = o->diff,
				  .by = o->by };
	struct flamegraph_opts go = { .threads = o->threads,
				      .containers = o->containers,
				      .title = o->title,
				      .processes = o->processes,
				      .diff = o->diff };

	switch (f) {
	case FORMAT_PPROF:
		return pprof__write(p, out);
	case FORMAT_SPEEDSCOPE:
		return speedscope__write(p, out);
	case FORMAT_SVG:
		return flamegraph__write(p, &go, out);
	case FORMAT_TRACE:
		return trace__write(p, out);
	case FORMAT_TRACE_GZ:
		return write_trace_gz(p, out);
	case FORMAT_GECKO:
		return gecko__write(p, out);
	case FORMAT_HEATMAP:
		return heatmap__write(p, out);
	case FORMAT_FOLDED:
		break;
	}
	return folded__write(p, &fo, out);
}

bool output_format_without_time(enum output_format f)
{
	return f == FORMAT_PPROF || f == FORMAT_FOLDED || f == FORMAT_SVG || f == FORMAT_SPEEDSCOPE;
}
