// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filter.h"
#include "formats.h"
#include "outfile.h"
#include "read/pprof.h"
#include "report_args.h"
#include "top.h"
#include "util.h"

/* The whole file, at most PPROF_MAX_SIZE bytes; NULL after one error line. */
static uint8_t *read_input(const char *path, size_t *len)
{
	/* O_NONBLOCK: a FIFO is refused below, not waited on. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	struct stat st;

	if (fd < 0) {
		err_msg("cannot read '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err_msg("cannot read '%s': not a regular file", path);
		close(fd);
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (n > PPROF_MAX_SIZE) {
			err_msg("cannot read '%s': larger than %llu MiB", path, PPROF_MAX_SIZE >> 20);
			goto fail;
		}
		xgrow(&buf, &cap, n + 65536, 1);
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err_msg("cannot read '%s': %s", path, strerror(errno));
			goto fail;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	*len = n;
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

static int write_output(const struct report_opts *o, const struct profile *p)
{
	struct write_opts wo = {
		.threads = o->threads, .containers = o->containers, .title = o->input, .processes = o->processes
	};
	struct outfile out = { 0 };

	FILE *f;

	if (outfile__open(&out, o->output) || !(f = outfile__file(&out))) {
		outfile__abort(&out);
		return -1;
	}
	if (write_profile(p, o->format, &wo, f)) {
		err_msg("cannot write '%s': %s", o->output, strerror(errno));
		outfile__abort(&out);
		return -1;
	}
	if (outfile__commit(&out))
		return -1;
	fprintf(stderr, "pyebpf: wrote %s (%llu samples, %zu stacks)\n", o->output,
		(unsigned long long)profile__total(p), profile__nstacks(p));
	return 0;
}

int report_main(int argc, char **argv)
{
	struct report_opts o;
	struct profile *in = NULL, *p = NULL;
	uint8_t *data = NULL;
	char why[256];
	size_t len;
	int ret = 1, perr;

	perr = report_args__parse(argc, argv, &o);
	if (perr)
		return perr > 0 ? 0 : 2;
	data = read_input(o.input, &len);
	if (!data)
		goto out;
	in = pprof__read(data, len, why, sizeof(why));
	if (!in) {
		err_msg("cannot read '%s': %s", o.input, why);
		goto out;
	}
	if (filter__drops_samples(&o.filter) || o.filter.no_kernel || o.filter.functions) {
		uint64_t dropped;

		p = filter__apply(&o.filter, in, &dropped);
		fprintf(stderr, "pyebpf: the filters kept %llu of %llu samples\n",
			(unsigned long long)profile__total(p), (unsigned long long)profile__total(in));
	}
	if (o.output ? write_output(&o, p ? p : in) : top__print(p ? p : in, o.top, stdout)) {
		if (!o.output)
			err_msg("cannot print the table: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	free(data);
	profile__free(in);
	profile__free(p);
	report_args__free(&o);
	return ret;
}
