// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The replay benchmark: what pyebpf's userspace costs on a host with N CPUs
 * sampled at F Hz, measured on a 2-CPU machine. Records captured once from
 * the ring buffer (`PYEBPF_RAW_OUT=FILE pyebpf record ...`) are fed to the
 * same ingest path `record` uses, re-stamped with the time they are fed, at
 * N x F samples a second, spread over N CPU numbers, with thread churn (each
 * non-main thread gets a new tid every --thread-life seconds, staggered) and
 * process churn (--execs per second: an exec event for one of the recorded
 * processes, whose state is then detected and read again, as for a new one).
 * The recorded processes must still be alive (stopped is fine): their code
 * objects are read from their memory, as in a recording.
 *
 *   replay [--native] --cpus N --hz F --seconds S [--warmup W] [--thread-life S]
 *          [--execs E] [--interval S [--out FILE]] [--virtual] RAW...
 *
 * --interval writes a pprof every S seconds and starts a new one, as
 * --continuous does; --virtual feeds as fast as it can with timestamps
 * N x F apart (an hour of a large host in a minute or two). Prints one line:
 * CPU as % of one core, µs per sample, RSS after warm-up and at the end,
 * peak RSS, and whether it kept up (the backlog at the end).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "record/ingest.h"
#include "profile/profile.h"
#include "base/util.h"
#include "write/pprof.h"

#define NS 1000000000ULL

struct record {
	uint32_t size;
	uint32_t pid, tid; /* as recorded: the churn renames tid */
	uint64_t off_for;  /* an off-CPU sample: how long it had been off the CPU */
	uint8_t *data;
};

struct replay {
	struct record *recs;
	size_t nrecs, cap;
	uint32_t *pids; /* distinct pids of the samples: the exec churn's targets */
	size_t npids;
};

struct opts {
	bool native, virt;
	uint64_t cpus, hz, seconds, warmup, thread_life, execs, interval;
	const char *out;
};

static void load(struct replay *r, const char *path)
{
	FILE *f = fopen(path, "re");
	uint32_t n;

	if (!f)
		die("%s: %s", path, strerror(errno));
	while (fread(&n, sizeof(n), 1, f) == 1) {
		struct record rec = { .size = n, .data = xmalloc(n ? n : 1) };

		if (n < sizeof(struct pyebpf_event_header) || fread(rec.data, 1, n, f) != n)
			die("%s: a truncated record", path);
		const struct pyebpf_sample *s = (const void *)rec.data;

		rec.pid = s->h.pid;
		rec.tid = s->h.tid;
		if (n >= offsetof(struct pyebpf_sample, stack) && s->h.type == PYEBPF_EVENT_SAMPLE &&
		    (s->flags & PYEBPF_SAMPLE_OFFCPU))
			rec.off_for = s->h.ts_ns - s->off.since_ns;
		xgrow(&r->recs, &r->cap, r->nrecs + 1, sizeof(*r->recs));
		r->recs[r->nrecs++] = rec;
	}
	fclose(f);
}

/* The pids of the samples: the exec churn picks among them. */
static void index_records(struct replay *r)
{
	size_t cap = 0;

	for (size_t i = 0; i < r->nrecs; i++) {
		const struct pyebpf_event_header *h = (const void *)r->recs[i].data;
		size_t k;

		if (h->type != PYEBPF_EVENT_SAMPLE)
			continue;
		for (k = 0; k < r->npids && r->pids[k] != h->pid; k++)
			;
		if (k == r->npids) {
			xgrow(&r->pids, &cap, r->npids + 1, sizeof(*r->pids));
			r->pids[r->npids++] = h->pid;
		}
	}
}

/* A thread's tid in generation g of its churn (main threads keep theirs). */
static uint32_t churned_tid(uint32_t pid, uint32_t tid, uint64_t t, uint64_t life_ns)
{
	uint64_t stagger, gen;

	if (!life_ns || tid == pid)
		return tid;
	stagger = (tid * 2654435761ULL) % life_ns;
	gen = (t + stagger) / life_ns;
	return (uint32_t)((tid + gen * 104729) % 0x7fffffff) | 1;
}

/* Feed record i, as if it came now (t: ns since the replay's start). */
static void feed(struct replay *r, struct ingest *in, const struct opts *o, size_t i, uint64_t now, uint64_t t,
		 uint64_t seq)
{
	const struct record *rec = &r->recs[i % r->nrecs];
	struct pyebpf_sample *s = (void *)rec->data; /* re-stamped where it lies, as the ring buffer is read */

	s->h.ts_ns = now;
	s->h.cpu = (uint32_t)(seq % o->cpus);
	if (s->h.type == PYEBPF_EVENT_SAMPLE && rec->size >= sizeof(s->h) + 8) {
		s->h.tid = churned_tid(rec->pid, rec->tid, t, o->thread_life * NS);
		if (rec->size >= offsetof(struct pyebpf_sample, stack) && (s->flags & PYEBPF_SAMPLE_OFFCPU))
			s->off.since_ns = now > rec->off_for ? now - rec->off_for : 0;
	}
	ingest__event(in, rec->data, rec->size);
}

static void exec_event(struct replay *r, struct ingest *in, uint64_t now, uint64_t k)
{
	struct pyebpf_proc_event ev = { .h = { .type = PYEBPF_EVENT_EXEC, .ts_ns = now } };

	ev.h.pid = ev.h.tid = r->pids[k % r->npids];
	ingest__event(in, &ev, sizeof(ev));
}

/* kB of a /proc/self/status field (VmRSS, VmHWM). */
static uint64_t status_kb(const char *field)
{
	char line[256];
	uint64_t kb = 0;
	size_t n = strlen(field);
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			kb = strtoull(line + n + 1, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

static void write_interval(struct profile *prof, const struct opts *o)
{
	FILE *f = fopen(o->out ? o->out : "/dev/null", "we");

	if (!f || pprof__write(prof, f))
		die("writing %s failed", o->out ? o->out : "/dev/null");
	fclose(f);
	profile__clear_samples(prof);
}

static void usage(void)
{
	die("usage: replay [--native] --cpus N --hz F --seconds S [--warmup W] [--thread-life S] [--execs E] "
	    "[--interval S [--out FILE]] [--virtual] RAW...");
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "native", no_argument, NULL, 'n' },
		{ "virtual", no_argument, NULL, 'V' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "hz", required_argument, NULL, 'f' },
		{ "seconds", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "thread-life", required_argument, NULL, 't' },
		{ "execs", required_argument, NULL, 'e' },
		{ "interval", required_argument, NULL, 'i' },
		{ "out", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .cpus = 128, .hz = 99, .seconds = 20, .warmup = 3 };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		uint64_t *v = c == 'c'   ? &o->cpus
			      : c == 'f' ? &o->hz
			      : c == 's' ? &o->seconds
			      : c == 'w' ? &o->warmup
			      : c == 't' ? &o->thread_life
			      : c == 'e' ? &o->execs
			      : c == 'i' ? &o->interval
					 : NULL;

		if (c == 'n')
			o->native = true;
		else if (c == 'V')
			o->virt = true;
		else if (c == 'o')
			o->out = optarg;
		else if (!v || parse_u64(optarg, 0, 1000000, v))
			usage();
	}
	if (optind >= argc || !o->cpus || !o->hz || !o->seconds)
		usage();
}

int main(int argc, char **argv)
{
	struct opts o;
	struct replay r = { 0 };
	struct profile *prof = profile__new();
	struct ingest *in;
	uint64_t rate, total, fed = 0, start, warm_at, next_gc, next_exec, next_iv, execs = 0, max_lag = 0;
	uint64_t rss_warm = 0, rss_max_after = 0, fed_warm = 0;
	double cpu_warm = 0, cpu_end, secs;

	parse(argc, argv, &o);
	for (int i = optind; i < argc; i++)
		load(&r, argv[i]);
	if (!r.nrecs)
		die("no records in %s", argv[optind]);
	index_records(&r);
	profile__meta(prof)->period_ns = NS / o.hz;
	in = ingest__new(prof, &(struct ingest_config){ .native = o.native, .kallsyms = "/proc/kallsyms" }, NULL);
	rate = o.cpus * o.hz;
	total = rate * (o.warmup + o.seconds);
	start = now_ns();
	ingest__set_time_base(in, start);
	warm_at = start + o.warmup * NS;
	next_gc = start + NS;
	next_exec = o.execs ? start + NS / o.execs : UINT64_MAX;
	next_iv = o.interval ? start + o.interval * NS : UINT64_MAX;
	while (fed < total) {
		uint64_t now = now_ns(), t, due;

		/* Virtual time: samples N x F apart, fed as fast as they go. */
		t = o.virt ? fed * NS / rate : now - start;
		due = o.virt ? fed + 4096 : t * rate / NS;
		if (due > total)
			due = total;
		if (!o.virt && due > fed && due - fed > max_lag && start + t >= warm_at)
			max_lag = due - fed; /* the backlog: samples due but not yet fed */
		while (fed < due) {
			feed(&r, in, &o, fed, o.virt ? start + fed * NS / rate : now, t, fed);
			fed++;
		}
		if (!cpu_warm && start + t >= warm_at) { /* warm: the caches are full */
			cpu_warm = own_cpu_seconds();
			warm_at = now_ns();
			fed_warm = fed;
			rss_warm = status_kb("VmRSS");
		}
		if (start + t >= next_gc) {
			ingest__gc(in, start + t);
			next_gc += NS;
			if (rss_warm) {
				uint64_t kb = status_kb("VmRSS");

				rss_max_after = kb > rss_max_after ? kb : rss_max_after;
			}
		}
		while (start + t >= next_exec) {
			exec_event(&r, in, start + t, execs++);
			next_exec += NS / o.execs;
		}
		if (start + t >= next_iv) {
			write_interval(prof, &o);
			ingest__set_time_base(in, start + t);
			next_iv += o.interval * NS;
			fprintf(stderr, "replay: interval written at %.0f s, RSS %" PRIu64 " MB\n", (double)t / NS,
				status_kb("VmRSS") >> 10);
		}
		if (!o.virt) {
			struct timespec ts = { 0, 10000000 }; /* 10 ms: the consumer wakes for batches, never spins */

			nanosleep(&ts, NULL);
		}
	}
	cpu_end = own_cpu_seconds();
	secs = (double)(now_ns() - warm_at) / NS;
	{
		uint64_t rss_before_write = status_kb("VmRSS"), hwm_before = status_kb("VmHWM");
		uint64_t samples = ingest__stats(in)->samples;
		double per_sample = (cpu_end - cpu_warm) * 1e6 / (double)(fed - fed_warm);
		size_t stacks = profile__nstacks(prof), frames = profile__nframes(prof), log_len;
		size_t nevents = profile__nevents(prof);

		profile__event_log(prof, &log_len);

		if (o.interval || o.out)
			write_interval(prof, &o);
		printf("cpus=%" PRIu64 " hz=%" PRIu64 " rate=%" PRIu64 "/s native=%d samples=%" PRIu64 " bad=%" PRIu64
		       " cpu=%.2f%% us_per_sample=%.2f rss_warm=%" PRIu64 "MB rss_end=%" PRIu64 "MB rss_max=%" PRIu64
		       "MB hwm=%" PRIu64 "MB hwm_write=%" PRIu64
		       "MB max_lag_ms=%.0f keeps_up=%s stacks=%zu frames=%zu log_bytes_per_sample=%.2f\n",
		       o.cpus, o.hz, rate, o.native, samples, ingest__stats(in)->bad, (cpu_end - cpu_warm) * 100 / secs,
		       per_sample, rss_warm >> 10, rss_before_write >> 10, rss_max_after >> 10, hwm_before >> 10,
		       status_kb("VmHWM") >> 10, (double)max_lag * 1000 / (double)rate,
		       o.virt || max_lag < rate / 2 ? "yes" : "no", stacks, frames,
		       nevents ? (double)log_len / (double)nevents : 0.0);
	}
	ingest__free(in);
	profile__free(prof);
	for (size_t i = 0; i < r.nrecs; i++)
		free(r.recs[i].data);
	free(r.recs);
	free(r.pids);
	return 0;
}
