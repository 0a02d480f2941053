/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The profile: symbolized samples aggregated by (labels, stack) into entries,
 * and the timeline of samples (when, which entry) that timelines and the
 * lossless pprof archive need. Strings and frames are interned once; every
 * writer reads the same profile.
 */
#ifndef PYEBPF_PROFILE_H
#define PYEBPF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum frame_kind {
	FRAME_NATIVE = 0, /* user-space machine code */
	FRAME_KERNEL = 1,
	FRAME_PYTHON = 2,
	FRAME_MARK = 3, /* a note in the stack, e.g. "[truncated]" */
};

/* String id 0 is always the empty string. */
struct frame {
	uint32_t kind;       /* enum frame_kind */
	uint32_t name;       /* function name; 0 when unknown */
	uint32_t module;     /* native: mapped file path; python: source file */
	uint32_t line;       /* python: line number */
	uint32_t start_line; /* python: the function's first line (co_firstlineno) */
	uint32_t reserved;   /* zero: frames are hashed as bytes, no padding allowed */
	uint64_t offset;     /* native frame with no symbol: address within module */
};

#define LABEL_GIL_KNOWN 0x1 /* the GIL state of the thread could be read */
#define LABEL_GIL_HELD 0x2  /* ... and the thread held it */
#define LABEL_BASE 0x4      /* report --diff-base: a sample of the base (before) side */
#define LABEL_TASK 0x8      /* task time of an asyncio task (task_sampler.h), not a thread's time */
/* A memory profile's (profile_meta.mem_sample_bytes): sample points of
 * memory still held at the profile's end, as at their growth; an entry
 * without the flag counts points of growth during the profile. */
#define LABEL_MEM_HELD 0x10
/* ... and sample points held at its process's high-water mark (the moment
 * its total held was highest; each process's own moment). */
#define LABEL_MEM_PEAK 0x20
/* The entries of a moment, not of growth: what is held at the end or at the peak. */
#define LABEL_MEM_MOMENT (LABEL_MEM_HELD | LABEL_MEM_PEAK)

/* Hashed as bytes: no padding allowed. */
struct sample_labels {
	uint32_t pid;
	uint32_t tid;
	uint32_t comm;           /* string id: the process (task) name */
	uint32_t thread;         /* string id: the Python thread name, else the OS thread name */
	uint32_t flags;          /* LABEL_* */
	uint32_t python;         /* string id: the CPython version ("3.12.1"); 0: not Python */
	uint32_t container;      /* string id: the container id from the cgroup path; 0: none */
	uint32_t cgroup_path;    /* string id: the process's cgroup v2 path; 0: unknown */
	uint32_t ns_pid;         /* the pid inside the process's own pid namespace; 0: unknown */
	uint32_t offcpu;         /* enum offcpu_reason: why the thread was off the CPU; 0: it was on it */
	uint32_t process;        /* string id: the name the process gives itself (multiprocessing's); 0: none */
	uint32_t k8s_pod;        /* string id: "NAMESPACE/POD" of a Kubernetes pod (either may be empty); 0: none */
	uint32_t container_name; /* string id: the container's name (Kubernetes', else its runtime's); 0: none */
	uint32_t request;        /* which request (profile__request_at): its labels' id; 0: none */
	uint64_t cgroup;         /* cgroup v2 id of the task; 0: unknown */
};

/*
 * Which request a sample belongs to (docs/requests.md): string ids, 0: none.
 * Interned per profile as one id (sample_labels.request): six labels that
 * most samples lack would grow every entry by 24 bytes.
 */
struct sample_request {
	uint32_t trace_id;  /* the current OpenTelemetry span's trace id, 32 hex digits */
	uint32_t span_id;   /* ... its span id, 16 hex digits (the innermost span) */
	uint32_t span_name; /* ... its name */
	uint32_t endpoint;  /* the request's local root span's name */
	uint32_t root_span; /* ... its span id, when known (what Pyroscope's span profiles select by) */
	uint32_t ctx_key;   /* --context-label: the variable's name ... */
	uint32_t ctx_value; /* ... and its value */
};

/* The request labels by name, as files and filters call them (trace_id,
 * span_id, span_name, endpoint, root_span_id; --context-label's is named
 * by its variable): the field of r that name is, NULL when none. */
uint32_t *sample_request__field(struct sample_request *r, const char *name);
extern const char *const request_label_names[5];
/* Each of r's strings through map (one profile's string id to another's). */
void sample_request__map(struct sample_request *r, uint32_t (*map)(void *ctx, uint32_t id), void *ctx);

/* What the whole recording was. */
struct profile_meta {
	uint64_t period_ns;     /* nanoseconds between samples on a CPU (1e9 / Hz) */
	int64_t start_epoch_ns; /* when recording started, since the epoch */
	int64_t duration_ns;
	int wall; /* --mode wall/off-cpu: samples may be off-CPU time; writers show wall time */
	/* --mode memory: a sample point stands for this many bytes (counts are
	 * points of memory growth and, LABEL_MEM_HELD, of memory still held,
	 * LABEL_MEM_PEAK, held at the high-water mark);
	 * 0: a profile of time. */
	uint64_t mem_sample_bytes;
	int value_unit; /* enum profile_unit: what a count is (a memory profile's view, mem_view.h) */
};

enum profile_unit {
	PROFILE_UNIT_SAMPLES = 0, /* samples, each period_ns of time */
	PROFILE_UNIT_BYTES,       /* bytes */
	PROFILE_UNIT_OBJECTS,     /* a count of things (memory's sample points) */
};

/* A mapped file, as far as it is known: for pprof's mappings. */
struct profile_module {
	uint32_t module;                    /* string id: its path */
	uint32_t build_id;                  /* string id: GNU build id in hex; 0: none known */
	bool exe;                           /* the main executable of a process */
	uint64_t start, limit, file_offset; /* its executable segments at their link addresses */
};

/* Samples are timed in nanoseconds since the start of the recording (kept to the microsecond). */
#define PROFILE_NO_TIME UINT64_MAX

/* One add: `count` samples of an entry at a time (or PROFILE_NO_TIME). */
struct profile_event {
	uint64_t time_ns;
	uint32_t entry;
	uint32_t count;
};

struct profile;

struct profile *profile__new(void);
void profile__free(struct profile *p); /* accepts NULL */

uint32_t profile__str(struct profile *p, const char *s);
/*
 * A string that is one request's (a trace's or span's id, a context
 * variable's value): an id with PROFILE_REQUEST_STR set, read by
 * profile__str_at like any, and gone at profile__clear_samples with the
 * samples and requests that used it, so that a recording that runs for days
 * keeps only its interval's. Names (span names, endpoints) are
 * profile__str's: few, and kept by id across intervals.
 */
#define PROFILE_REQUEST_STR 0x80000000u
uint32_t profile__request_str(struct profile *p, const char *s);
const char *profile__str_at(const struct profile *p, uint32_t id);
/* The id of a request's labels (0 for none of them), and the labels of an id. */
uint32_t profile__request(struct profile *p, const struct sample_request *r);
const struct sample_request *profile__request_at(const struct profile *p, uint32_t id);
/* The value of a request label of l by its key (trace_id, span_id,
 * span_name, endpoint, or --context-label's name); NULL: none. */
const char *profile__label_value(const struct profile *p, const struct sample_labels *l, const char *key);
uint32_t profile__frame(struct profile *p, const struct frame *f);
const struct frame *profile__frame_at(const struct profile *p, uint32_t id);

/*
 * A frame list (root first) interned: its stack id. Ids stay valid while
 * profile__stacks_gen() does not change (profile__clear_samples drops them).
 */
uint32_t profile__stack(struct profile *p, const uint32_t *frames, uint32_t n);
uint64_t profile__stacks_gen(const struct profile *p);
/* The frames of an interned stack (root first), n of them; NULL and 0 for no such stack. */
const uint32_t *profile__stack_frames(const struct profile *p, uint32_t stack, uint32_t *n);
/* Add `count` samples of an interned stack, at time_ns (or PROFILE_NO_TIME). */
void profile__add_stack_at(struct profile *p, const struct sample_labels *l, uint32_t stack, uint32_t count,
			   uint64_t time_ns);
/* Add `count` samples of a stack given root first, at time_ns (or PROFILE_NO_TIME). */
void profile__add_at(struct profile *p, const struct sample_labels *l, const uint32_t *frames, uint32_t n,
		     uint32_t count, uint64_t time_ns);
/* The same, untimed. */
void profile__add(struct profile *p, const struct sample_labels *l, const uint32_t *frames, uint32_t n, uint32_t count);

/*
 * Drop the samples (entries, stacks, events, comments) and the requests
 * with their own strings, keep the other strings and frames: the ids that
 * symbol caches hold stay valid (stack ids and request ids do not:
 * profile__stacks_gen() changes). Continuous mode starts each interval so.
 */
void profile__clear_samples(struct profile *p);
/* The same, but the requests carry[0..n) are made again in the new
 * tables, each id in carry replaced by its new one (the memory ledger's
 * sites hold memory, and their requests, across intervals). */
void profile__clear_samples_carrying(struct profile *p, uint32_t *carry, size_t n);
/* Notes about the recording (pprof comments), e.g. a lowered frequency. */
void profile__add_comment(struct profile *p, const char *text);
const char *const *profile__comments(const struct profile *p, size_t *n);

/* Note what is known of a file (fields left 0 keep what was noted before);
 * kept across profile__clear_samples(), like strings. */
void profile__note_module(struct profile *p, const struct profile_module *m);
const struct profile_module *profile__modules(const struct profile *p, size_t *n);
/* What was noted of a module (its path's string id), or NULL. */
const struct profile_module *profile__module(const struct profile *p, uint32_t module);

struct profile_meta *profile__meta(struct profile *p);
/* What the profile records, for a line that says so: "CPU time", "wall-clock time (...)", "memory (...)". */
const char *profile__kind(const struct profile *p);
const struct profile_meta *profile__meta_of(const struct profile *p);

uint64_t profile__total(const struct profile *p); /* samples */
size_t profile__nframes(const struct profile *p); /* distinct frames: ids 0 .. n-1 */
size_t profile__nstacks(const struct profile *p); /* distinct (labels, stack): entries 0 .. n-1 */
size_t profile__nstrs(const struct profile *p);   /* strings: ids 0 .. n-1 */
/*
 * Every add, in the order made, kept as a compact log (a few bytes an add:
 * an hour of a 128-CPU host is 45 million adds); times are kept to the
 * microsecond. Iterate with a cursor that starts zeroed.
 */
struct profile_event_cursor {
	size_t pos;
	uint64_t last_us;
};
bool profile__next_event(const struct profile *p, struct profile_event_cursor *c, struct profile_event *ev);
size_t profile__nevents(const struct profile *p);
/*
 * The log's bytes, as the pprof archive keeps them (write/pprof.h says how
 * they are laid out), and the decoder of such bytes: false at the end, or
 * with *bad set when they do not decode.
 */
const uint8_t *profile__event_log(const struct profile *p, size_t *len);
bool profile_log_next(const uint8_t *log, size_t len, struct profile_event_cursor *c, struct profile_event *ev,
		      bool *bad);

/* One add, placed on its thread's timeline. */
struct profile_thread_event {
	uint32_t pid, tid;
	uint64_t time_ns; /* PROFILE_NO_TIME: after the thread's timed adds */
	size_t event;     /* the add's place in the order made: ties keep their order */
	uint32_t entry, count;
};
/* The adds (only the timed ones if asked) by pid, tid, time, then order
 * made: the timelines of the trace and speedscope writers. Task time
 * (LABEL_TASK) is no thread's: left out. Free with free(). */
struct profile_thread_event *profile__events_by_thread(const struct profile *p, bool timed_only, size_t *n);

struct profile_entry {
	struct sample_labels labels;
	const uint32_t *frames; /* root first */
	uint32_t nframes;
	uint64_t count;
};
/* Iterate entries in the order first added: start with *pos = 0. */
int profile__next(const struct profile *p, size_t *pos, struct profile_entry *e);
/* Entry `id` (0 .. profile__nstacks() - 1). */
void profile__entry(const struct profile *p, uint32_t id, struct profile_entry *e);

#endif
