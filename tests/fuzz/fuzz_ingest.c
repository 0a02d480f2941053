/*
 * libFuzzer target for the ingest path: arbitrary bytes as one ring-buffer
 * record, through the sample decoder, the symbolizers and --native unwinding,
 * and --mode memory's ledger (its samples, and memory given back or moved).
 * The record's pid and tid are made this process's own, so the symbolizers
 * really run (over this binary's maps and symbols) instead of giving up on
 * a pid that does not exist; any crash or sanitizer report fails `make fuzz`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/ingest.h"
#include "pyebpf.h"

static struct profile *prof;
static struct ingest *in;
/* Aligned like ring-buffer records, and as large as the largest one. */
static uint64_t rec[(sizeof(struct pyebpf_sample_buf) + 7) / 8];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pyebpf_event_header *h = (struct pyebpf_event_header *)rec;

	if (!in) {
		struct ingest_config c = { .native = true, .kallsyms = "/proc/kallsyms", .memory = true };

		prof = profile__new();
		in = ingest__new(prof, &c, NULL);
	}
	if (size > sizeof(rec))
		size = sizeof(rec);
	memcpy(rec, data, size);
	if (size >= sizeof(*h)) {
		h->pid = (uint32_t)getpid();
		h->tid = h->pid;
		/* exit events free the process: its state is rebuilt by the next sample */
	}
	ingest__event(in, rec, size);
	/* What is held, into the profile, as each interval's end does. */
	if (size && data[0] == PYEBPF_EVENT_MEM)
		ingest__mem_held(in);
	/* Bounded memory over millions of runs: the profile starts over now and then. */
	if (profile__nstacks(prof) > 100000)
		profile__clear_samples(prof);
	return 0;
}
