// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "record/cpus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cpulist__parse(const char *s, bool *flags, size_t max)
{
	memset(flags, 0, max * sizeof(*flags));
	while (*s && *s != '\n') {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s)
			return -1;
		s = end;
		if (*s == '-') {
			b = strtoul(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -1;
			s = end;
		}
		for (unsigned long i = a; i <= b && i < max; i++)
			flags[i] = true;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -1;
	}
	return 0;
}

int cpus__online(bool *flags, size_t max)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	return cpulist__parse(buf, flags, max) ? -EINVAL : 0;
}
