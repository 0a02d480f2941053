/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The spool's memory of what each backend has: in the continuous directory,
 * one file per backend, ".pyebpf-push-KEY.journal" (KEY: push_endpoint__key),
 * a line per interval file the backend took ("sent NAME"), may have taken
 * (its answer never came: "maybe NAME"; still unsent) or refused for
 * good ("rejected NAME STATUS"; status 0: the file could not be read). Appended and synced after each answer, so
 * a crash costs at most the one push in flight (sent again: see the README
 * for what each backend does with that). An interval file whose name is in
 * no line is unsent: the pusher sends it, and rotation keeps it (beyond
 * --keep; --max-disk still bounds the disk). Compacted when opened, and
 * when it has grown past twice what it needs: lines of files that are gone
 * are dropped. A lock file beside it (.pyebpf-push-KEY.lock, flock) keeps a
 * second pusher of the same directory and backend out. No network here.
 */
#ifndef PYEBPF_PUSH_JOURNAL_H
#define PYEBPF_PUSH_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A journal larger than this is not ours: refused, not read. */
#define JOURNAL_MAX_SIZE (64ULL << 20)

enum journal_state {
	JOURNAL_UNSENT = 0,
	JOURNAL_SENT,
	JOURNAL_REJECTED,
	JOURNAL_MAYBE, /* sent whole, but no answer came (cut short, timed out): the backend may have it */
};

struct push_journal;

/*
 * Open (create) the journal of backend `key` in the directory dirfd (not
 * owned); `describe` (the backend's URL) heads a new file. NULL with the
 * reason in why.
 */
struct push_journal *push_journal__open(int dirfd, const char *key, const char *describe, char *why, size_t whylen);
void push_journal__close(struct push_journal *j); /* accepts NULL */

enum journal_state push_journal__state(const struct push_journal *j, const char *name);
/* Record an answer (JOURNAL_SENT, or JOURNAL_REJECTED with its HTTP status) and sync it; 0 or -1 (errno). */
int push_journal__mark(struct push_journal *j, const char *name, enum journal_state st, long status);
/* The same in two steps: in memory (quick: under the caller's lock), then
 * on disk (written and synced: outside it). */
void push_journal__set(struct push_journal *j, const char *name, enum journal_state st);
int push_journal__append(struct push_journal *j, const char *name, enum journal_state st, long status);
/* Has it grown past twice what it still needs (files pruned since)? Then
 * compact it: the lines of files that are gone dropped, written anew. */
bool push_journal__stale(const struct push_journal *j);
int push_journal__compact(struct push_journal *j);

/* The lines of a journal's bytes into j (tests, and open): malformed lines are skipped, counted. */
size_t push_journal__parse(struct push_journal *j, const char *data, size_t len);
/* An empty journal with no file (tests). */
struct push_journal *push_journal__new_memory(void);
size_t push_journal__count(const struct push_journal *j, enum journal_state st);

#endif
