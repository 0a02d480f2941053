/*
 * Helpers for the integration tests: they run the real pyebpf binary, as
 * root, with real BPF, against real processes. They run from build/.
 */
#ifndef PYEBPF_INTEG_H
#define PYEBPF_INTEG_H

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PYEBPF "./pyebpf"
#define BUSY "fixtures/busy"

struct run_result {
	int status;      /* exit code, or 128 + signal */
	char *out, *err; /* captured stdout and stderr */
	double seconds;  /* wall time */
};

/* Run argv to completion (killed after timeout_s). */
void run(const char *const argv[], double timeout_s, struct run_result *r);
void run_result_free(struct run_result *r);
/* Start argv in the background, stdout and stderr to /dev/null. */
pid_t spawn(const char *const argv[]);
/* Start argv in the background with stderr captured to err_path. */
pid_t spawn_capture(const char *const argv[], const char *err_path);
/* Wait for pid (killed after timeout_s); its exit code or 128 + signal. */
int wait_exit(pid_t pid, double timeout_s);
void kill_wait(pid_t pid);
/* The text of a file (malloc'd; "" when it cannot be read). */
char *file_text(const char *path);
/* The last non-empty line of text (a static buffer; "(nothing)" when none):
 * what a failed script or process said last, for an assertion's message. */
const char *last_line(const char *text);
/* Fail at once when a pyebpf process the test started with spawn or
 * spawn_capture (still not waited for) has exited with an error or a signal,
 * with its last stderr line; waiting_for names what the test waited for. */
void recorders_check(const char *waiting_for);
/* Wait until the file at path contains text (recorders_check meanwhile). */
void wait_for_text(const char *path, const char *text, double timeout_s);
/* What pyebpf prints on stderr once it samples. */
#define SAMPLING "pyebpf: sampling "
void sleep_s(double s);
/* Waits until something listens on 127.0.0.1:port (a server the test spawned), failing after limit seconds. */
void wait_for_port(int port, double limit);
/* The monotonic clock, in seconds. */
double mono(void);
/* An HTTP status from curl (extra options before the URL, 15 s at most);
 * *body (may be NULL) gets the body, *seconds (may be NULL) the time taken. */
int http(const char *url, const char *const extra[], char **body, double *seconds);

struct folded_line {
	char *stack; /* "comm;frame;...;frame" */
	uint64_t count;
};
struct folded {
	struct folded_line *lines;
	size_t n;
	uint64_t total;
};
/* Load a folded file, asserting every line is "STACK COUNT". */
void folded_load(const char *path, struct folded *f);
void folded_free(struct folded *f);
/* Samples whose stack starts with "comm;" or "comm [pid N];" (or is just that). */
uint64_t folded_comm_total(const struct folded *f, const char *comm);
/* Samples of comm whose stack contains `needle`. */
uint64_t folded_count(const struct folded *f, const char *comm, const char *needle);
/* Samples whose stack contains a, and b unless it is NULL. */
uint64_t count_all(const struct folded *f, const char *a, const char *b);
/* How many times needle occurs in s. */
int occurrences(const char *s, const char *needle);
/* The line of the "# LINE:name" marker in a script. */
int script_marker(const char *script, const char *name);
/* "func (script:LINE)" for a marker (from a ring of 4 static buffers). */
const char *script_frame(const char *script, const char *func, const char *mark);
/*
 * pyebpf record -F 999 -o <temporary file> [opts...] -- python script
 * [args...] (both lists NULL-terminated, opts may be NULL): it must exit 0
 * with over 200 samples, loaded into f. r keeps the run's stdout and
 * stderr; free it with run_result_free.
 */
void record_script(const char *const opts[], const char *python, const char *script, const char *const args[],
		   double timeout_s, struct folded *f, struct run_result *r);

struct python;
/*
 * record_script for n interpreters, at_once of them at a time in one
 * recording: `sh` starts them on the script side by side, and each one's
 * samples (by pid; the process frame "comm", as record_script's) go into
 * f[i], its stdout into outs[i] (malloc'd; outs may be NULL). Each must exit
 * 0 with over 200 samples. A recording of many interpreters takes the time
 * of one: the per-interpreter loops were most of CI's time. A CPU-bound
 * workload wants at_once near the cores' count (each gets its share of
 * them); a sleeping one takes every interpreter at once.
 */
void record_pythons(const char *const opts[], const struct python *pys, int n, int at_once, const char *script,
		    const char *const args[], double timeout_s, struct folded f[], char *outs[]);
/* at_once: a share measured within 4 points wants a core for each
 * interpreter (two here); a workload that keeps one core busy, checked for
 * its frames, can have half of one; one that mostly waits, every one. */
#define AT_ONCE_SHARE 2
#define AT_ONCE_CPU 4
#define AT_ONCE_ALL 64

/* A recording made with --processes each, split by process: the lines of
 * pids[i] into out[i] with the process frame "comm"; the others dropped.
 * all is emptied (its lines move). */
void folded_split_by_pid(struct folded *all, const long pids[], int n, struct folded out[]);
/* A Python suite's set-up: the workload's absolute path into script
 * (PATH_MAX bytes) and every installed interpreter into pys (at most max);
 * the suite is skipped when there is none. Returns how many there are. */
int setup_pythons(const char *workload, char *script, struct python *pys, int max);
/* A fresh temporary directory (static buffer) and a path inside it. */
const char *temp_dir(void);
char *temp_path(const char *dir, const char *name);
/* Entries of dir whose names start with prefix ("": all), . and .. aside. */
int count_files(const char *dir, const char *prefix);
/* Files in dir whose name starts with '.': leftover temporaries. */
int dot_files(const char *dir);
/* A test's backend (tests/backends/KIND.sh: pyroscope, otelcol, tls)
 * started in dir on 127.0.0.1:port, extra flags after; stop_started (a
 * test's .fini) stops those it started however it ended. */
void backend_start(const char *kind, const char *dir, int port, const char *const extra[]);
void backend_stop(const char *kind, const char *dir);
void stop_started(void);
/* A leaf function's total in the Pyroscope stub's /stub/totals answer
 * ("functions":{"NAME":N}); 0 when absent. */
long long stub_func_total(const char *json, const char *name);

#endif
