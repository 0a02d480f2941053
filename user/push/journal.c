// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "push/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hashmap.h"
#include "archive/rotation.h"
#include "base/util.h"

struct push_journal {
	int dirfd;  /* not owned; -1: in memory */
	int fd;     /* the journal, appended to; -1: in memory */
	int lockfd; /* its lock file, held while open: one pusher per directory and backend */
	char name[64];
	char *describe;
	size_t appended;        /* lines written since it was last compacted */
	struct hashmap *states; /* interval file name -> enum journal_state */
	size_t counts[4];
};

struct push_journal *push_journal__new_memory(void)
{
	struct push_journal *j = xcalloc(1, sizeof(*j));

	j->dirfd = j->fd = j->lockfd = -1;
	j->states = hashmap__new();
	return j;
}

static void set_state(struct push_journal *j, const char *name, enum journal_state st)
{
	bool created;
	uint64_t *v = hashmap__put(j->states, name, strlen(name), &created);

	if (!created)
		j->counts[*v]--;
	*v = st;
	j->counts[st]++;
}

enum journal_state push_journal__state(const struct push_journal *j, const char *name)
{
	const uint64_t *v = hashmap__get(j->states, name, strlen(name));

	return v ? (enum journal_state) * v : JOURNAL_UNSENT;
}

size_t push_journal__count(const struct push_journal *j, enum journal_state st)
{
	return j->counts[st];
}

/* One line: "sent NAME", "maybe NAME" or "rejected NAME STATUS"; false when it is not one. */
static bool parse_line(struct push_journal *j, const char *line, size_t len)
{
	char buf[160], word[16], name[128];
	uint64_t seq;
	long status;
	int n = 0;

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, line, len);
	buf[len] = 0;
	if (sscanf(buf, "%15s %127s%n", word, name, &n) != 2 || !rotation_parse_name(name, &seq))
		return false;
	if ((!strcmp(word, "sent") || !strcmp(word, "maybe")) && !buf[n]) {
		set_state(j, name, !strcmp(word, "sent") ? JOURNAL_SENT : JOURNAL_MAYBE);
		return true;
	}
	if (!strcmp(word, "rejected") && sscanf(buf + n, " %ld", &status) == 1 && status >= 0 && status < 600) {
		set_state(j, name, JOURNAL_REJECTED);
		return true;
	}
	return false;
}

size_t push_journal__parse(struct push_journal *j, const char *data, size_t len)
{
	size_t bad = 0;

	while (len) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl ? (size_t)(nl - data) : len;

		if (n && data[0] != '#' && !parse_line(j, data, n))
			bad++;
		n += nl ? 1 : 0;
		data += n;
		len -= n;
	}
	return bad;
}

/* The whole journal file, bounded; NULL with *len 0 when there is none. */
static char *read_journal(int dirfd, const char *name, size_t *len, char *why, size_t whylen)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *buf;
	size_t n = 0;
	ssize_t r;

	*len = 0;
	if (fd < 0) {
		if (errno != ENOENT)
			snprintf(why, whylen, "cannot read the push journal %s: %s", name, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size > JOURNAL_MAX_SIZE) {
		snprintf(why, whylen, "the push journal %s is not a regular file of ours within %llu MB: move it away",
			 name, (unsigned long long)(JOURNAL_MAX_SIZE >> 20));
		close(fd);
		return NULL;
	}
	buf = xmalloc((size_t)st.st_size + 1);
	while (n < (size_t)st.st_size && (r = read(fd, buf + n, (size_t)st.st_size - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = 0;
	*len = n;
	return buf;
}

/* Forget the files that are gone: their lines would only grow the journal. */
static void forget_gone(struct push_journal *j)
{
	char **gone = NULL;
	size_t n = 0, cap = 0, pos = 0, klen;
	const void *key;
	uint64_t v;

	while (hashmap__next(j->states, &pos, &key, &klen, &v)) {
		char name[128];
		struct stat st;

		snprintf(name, sizeof(name), "%.*s", (int)klen, (const char *)key);
		if (fstatat(j->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && errno == ENOENT) {
			xgrow(&gone, &cap, n + 1, sizeof(*gone));
			gone[n++] = xstrdup(name);
		}
	}
	for (size_t i = 0; i < n; i++) {
		j->counts[push_journal__state(j, gone[i])]--;
		hashmap__remove(j->states, gone[i], strlen(gone[i]));
		free(gone[i]);
	}
	free(gone);
}

/* The journal written anew (beside it, then renamed over it). */
static int compact(struct push_journal *j, const char *describe)
{
	char tmp[96];
	FILE *f;
	int fd;
	size_t pos = 0, klen;
	const void *key;
	uint64_t v;

	forget_gone(j);
	snprintf(tmp, sizeof(tmp), "%s.tmp", j->name);
	/* Ours alone (the lock is held): a stale one from a crash goes first. */
	unlinkat(j->dirfd, tmp, 0);
	fd = openat(j->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fprintf(f, "# pyebpf push journal: %s\n", describe);
	/* A rejected file's status is not kept in memory: 400 stands for it (not taken). */
	while (hashmap__next(j->states, &pos, &key, &klen, &v))
		fprintf(f,
			v == JOURNAL_SENT    ? "sent %.*s\n"
			: v == JOURNAL_MAYBE ? "maybe %.*s\n"
					     : "rejected %.*s 400\n",
			(int)klen, (const char *)key);
	if (fflush(f) || fsync(fd)) {
		fclose(f);
		unlinkat(j->dirfd, tmp, 0);
		return -1;
	}
	fclose(f);
	return renameat(j->dirfd, tmp, j->dirfd, j->name);
}

struct push_journal *push_journal__open(int dirfd, const char *key, const char *describe, char *why, size_t whylen)
{
	struct push_journal *j = push_journal__new_memory();
	size_t len;
	char *data;

	char lockname[64];

	why[0] = 0;
	j->dirfd = dirfd;
	j->describe = xstrdup(describe);
	snprintf(j->name, sizeof(j->name), ".pyebpf-push-%s.journal", key);
	/* Two pushers of one directory to one backend would each send what the
	 * other has not marked yet: the second is refused. */
	snprintf(lockname, sizeof(lockname), ".pyebpf-push-%s.lock", key);
	j->lockfd = openat(dirfd, lockname, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (j->lockfd < 0 || flock(j->lockfd, LOCK_EX | LOCK_NB)) {
		snprintf(why, whylen,
			 errno == EWOULDBLOCK ? "another pyebpf is pushing this directory to %s (it holds %s)"
					      : "cannot lock %2$s for %1$s: %3$s",
			 describe, lockname, strerror(errno));
		push_journal__close(j);
		return NULL;
	}
	data = read_journal(dirfd, j->name, &len, why, whylen);
	if (why[0]) {
		push_journal__close(j);
		return NULL;
	}
	if (data)
		push_journal__parse(j, data, len);
	free(data);
	if (compact(j, describe) ||
	    (j->fd = openat(dirfd, j->name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		snprintf(why, whylen, "cannot write the push journal %s: %s", j->name, strerror(errno));
		push_journal__close(j);
		return NULL;
	}
	return j;
}

void push_journal__close(struct push_journal *j)
{
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);
	if (j->lockfd >= 0)
		close(j->lockfd); /* and the lock with it */
	free(j->describe);
	hashmap__free(j->states);
	free(j);
}

void push_journal__set(struct push_journal *j, const char *name, enum journal_state st)
{
	set_state(j, name, st);
}

int push_journal__append(struct push_journal *j, const char *name, enum journal_state st, long status)
{
	char line[192];
	int n = st == JOURNAL_SENT    ? snprintf(line, sizeof(line), "sent %s\n", name)
		: st == JOURNAL_MAYBE ? snprintf(line, sizeof(line), "maybe %s\n", name)
				      : snprintf(line, sizeof(line), "rejected %s %ld\n", name, status);

	if (j->fd < 0)
		return 0;
	j->appended++;
	if (n < 0 || (size_t)n >= sizeof(line) || write(j->fd, line, (size_t)n) != n || fdatasync(j->fd))
		return -1;
	return 0;
}

int push_journal__mark(struct push_journal *j, const char *name, enum journal_state st, long status)
{
	push_journal__set(j, name, st);
	return push_journal__append(j, name, st, status);
}

bool push_journal__stale(const struct push_journal *j)
{
	return j->fd >= 0 && j->appended > 1000 && j->appended > 2 * hashmap__size(j->states);
}

int push_journal__compact(struct push_journal *j)
{
	int fd;

	if (compact(j, j->describe))
		return -1;
	/* The new file, appended to from here. */
	fd = openat(j->dirfd, j->name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	close(j->fd);
	j->fd = fd;
	j->appended = 0;
	return 0;
}
