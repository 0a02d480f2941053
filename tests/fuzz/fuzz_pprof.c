/*
 * libFuzzer target for the pprof reader: `pyebpf report` parses files it did
 * not write. Built with -fsanitize=fuzzer,address,undefined; any crash, leak,
 * sanitizer report, stack deeper than the reader's bound or input taking
 * more than 512 MB fails `make fuzz`.
 */
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "read/pprof.h"
#include "write/top.h"
#include "write/flamegraph.h"
#include "write/folded.h"
#include "write/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[256];
	struct profile *p = pprof__read(data, size, why, sizeof(why));
	FILE *null;

	if (!p)
		return 0;
	/* The reader's bounds hold for what it accepts (the RSS bound is
	 * -rss_limit_mb=512, see the Makefile). */
	struct profile_entry e;
	size_t pos = 0;
	while (profile__next(p, &pos, &e))
		if (e.nframes > PPROF_MAX_DEPTH)
			__builtin_trap();
	/* What was read must be safe to write in every format. */
	null = fopen("/dev/null", "w");
	if (null) {
		struct folded_opts fo = { .threads = 1 };
		struct flamegraph_opts go = { .threads = true };

		folded__write(p, &fo, null);
		flamegraph__write(p, &go, null);
		trace__write(p, null);
		top__print(p, 5, null);
		fclose(null);
	}
	profile__free(p);
	return 0;
}
