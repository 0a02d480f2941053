// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "serve/serve_user.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve/serve_dir.h"
#include "system/accounts.h"
#include "base/util.h"

#define DEFAULT_USER "nobody"
#define PASSWD_FILE "/etc/passwd"
#define GROUP_FILE "/etc/group"
/* More supplementary groups than anyone running serve needs. */
#define NGROUPS_MAX_SET 256

int serve_user__find(const char *name, struct serve_user *u)
{
	size_t len = 0;
	char *passwd;
	int found;

	memset(u, 0, sizeof(*u));
	u->given = name != NULL;
	if (!name)
		name = DEFAULT_USER;
	passwd = accounts__read(PASSWD_FILE, &len);
	if (!passwd) {
		err_msg("--user %s: cannot read %s: %s", name, PASSWD_FILE, strerror(errno));
		return -1;
	}
	found = strlen(name) < sizeof(u->name) && !accounts__user(passwd, len, name, &u->uid, &u->gid);
	free(passwd);
	if (!found) {
		err_msg("--user %s: no such user in %s", name, PASSWD_FILE);
		return -1;
	}
	snprintf(u->name, sizeof(u->name), "%s", name);
	return 0;
}

static int drop(const struct serve_user *u)
{
	uid_t r, e, s;
	gid_t gr, ge, gs;

	gid_t groups[NGROUPS_MAX_SET];
	size_t len = 0, ngroups = 1;
	char *group = accounts__read(GROUP_FILE, &len);

	/* The supplementary groups initgroups() would set, from the file alone. */
	groups[0] = u->gid;
	if (group)
		ngroups = accounts__groups(group, len, u->name, u->gid, groups, NGROUPS_MAX_SET);
	free(group);
	if (setgroups(ngroups, groups) || setresgid(u->gid, u->gid, u->gid) || setresuid(u->uid, u->uid, u->uid)) {
		err_msg("cannot run serve as user '%s': %s", u->name, strerror(errno));
		return -1;
	}
	/* Every id is the user's, and root cannot be taken back. */
	if (getresuid(&r, &e, &s) || getresgid(&gr, &ge, &gs) || r != u->uid || e != u->uid || s != u->uid ||
	    gr != u->gid || ge != u->gid || gs != u->gid || setuid(0) == 0 || seteuid(0) == 0) {
		err_msg("cannot run serve as user '%s': root could be taken back", u->name);
		return -1;
	}
	return 0;
}

/* Can the user read DIR and its newest interval file? */
static int check_readable(const struct serve_user *u, int dirfd, const char *dir)
{
	size_t n;
	struct serve_file *v = serve_dir__list(dirfd, &n);
	int fd, ret = 0;

	if (faccessat(dirfd, ".", R_OK | X_OK, 0)) {
		err_msg("serve drops root to user '%s', who cannot read '%s': make DIR readable to that user, "
			"choose another with --user NAME, or keep root with --user root",
			u->name, dir);
		ret = -1;
	} else if (n) {
		fd = openat(dirfd, v[n - 1].name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && errno == EACCES) {
			err_msg("serve drops root to user '%s', who cannot read '%s/%s': make DIR readable to that "
				"user, choose another with --user NAME, or keep root with --user root",
				u->name, dir, v[n - 1].name);
			ret = -1;
		}
		if (fd >= 0)
			close(fd);
	}
	serve_dir__free(v, n);
	return ret;
}

int serve_user__become(const struct serve_user *u, int dirfd, const char *dir)
{
	if (geteuid() != 0) {
		/* Not root: --user can only name who serve already runs as. */
		if (u->given && u->uid != geteuid()) {
			err_msg("--user %s needs root: serve runs as the user who starts it", u->name);
			return -1;
		}
		return 0;
	}
	if (u->uid == 0) /* --user root: by choice */
		return 0;
	if (drop(u))
		return -1;
	return check_readable(u, dirfd, dir);
}
