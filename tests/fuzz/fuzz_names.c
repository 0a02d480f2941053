/*
 * libFuzzer target for the parsers of names and lists that hardening added:
 * interval file names (what pruning may delete), the text escaper (every
 * name from a profiled process passes it), id lists (-p, --tid), --since /
 * --until times, the start an interval's name tells, and /etc/passwd and
 * /etc/group read as text (serve --user in the static binary). Any crash
 * or sanitizer report fails `make fuzz`; the escaper's output is checked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "archive/rotation.h"
#include "base/util.h"
#include "base/wallclock.h"
#include "base/escape.h"
#include "system/accounts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), out[512], bad[64];
	uint32_t *ids = NULL;
	size_t n = 0;
	uint64_t seq;

	memcpy(s, data, size);
	s[size] = '\0';
	if (rotation_parse_name(s, &seq))
		(void)rotation_name_time(s);
	struct time_arg t;
	if (time_arg_parse(s, &t) == 0 && t.wall)
		(void)time_arg_epoch(&t, &t, 0);
	text_escape(s, out, sizeof(out));
	/* What reaches a terminal holds no control character. */
	for (const unsigned char *p = (const unsigned char *)out; *p; p++)
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0))
			abort();
	parse_id_list(s, &ids, &n, bad, sizeof(bad));
	{
		uid_t uid;
		gid_t gid, groups[4];

		/* The input as both files (not NUL-terminated past size). */
		(void)accounts__user((const char *)data, size, "nobody", &uid, &gid);
		if (accounts__groups((const char *)data, size, "nobody", 65534, groups, 4) > 4)
			abort();
	}
	free(ids);
	free(s);
	return 0;
}
