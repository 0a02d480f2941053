// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

int outfile__open(struct outfile *o, const char *path)
{
	const char *slash = strrchr(path, '/');
	struct stat st;
	int fd, n;

	memset(o, 0, sizeof(*o));
	o->path = path;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		err_msg("cannot write '%s': it is a directory", path);
		return -1;
	}
	if (slash)
		n = snprintf(o->tmp, sizeof(o->tmp), "%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
	else
		n = snprintf(o->tmp, sizeof(o->tmp), ".%s.XXXXXX", path);
	if (n < 0 || (size_t)n >= sizeof(o->tmp)) {
		err_msg("cannot write '%s': path too long", path);
		return -1;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		err_msg("cannot write '%s': %s", path, strerror(errno));
		o->tmp[0] = '\0';
		return -1;
	}
	fchmod(fd, 0644);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		err_msg("cannot write '%s': %s", path, strerror(errno));
		close(fd);
		outfile__abort(o);
		return -1;
	}
	return 0;
}

int outfile__commit(struct outfile *o)
{
	int err = 0;

	if (fflush(o->f) || ferror(o->f) || fsync(fileno(o->f)))
		err = errno ? errno : EIO;
	if (fclose(o->f) && !err)
		err = errno ? errno : EIO;
	o->f = NULL;
	if (!err && rename(o->tmp, o->path))
		err = errno;
	if (err) {
		err_msg("cannot write '%s': %s", o->path, strerror(err));
		outfile__abort(o);
		return -1;
	}
	o->tmp[0] = '\0';
	return 0;
}

void outfile__abort(struct outfile *o)
{
	if (o->f) {
		fclose(o->f);
		o->f = NULL;
	}
	if (o->tmp[0]) {
		unlink(o->tmp);
		o->tmp[0] = '\0';
	}
}
