#include "unit.h"

#include "frames.h"
#include "profile/profile.h"
#include "write/folded.h"

static char *folded_text_opts(const struct profile *p, const struct folded_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_eq(folded__write(p, o, f), 0);
	fclose(f);
	return buf;
}

static char *folded_text(const struct profile *p)
{
	return folded_text_opts(p, NULL);
}

Test(profile, interning_and_aggregation)
{
	struct profile *p = profile__new();
	uint32_t a = profile__str(p, "main");

	cr_assert_eq(profile__str(p, ""), 0);
	cr_assert_eq(profile__str(p, "main"), a);
	cr_assert_str_eq(profile__str_at(p, a), "main");

	uint32_t f1 = frame(p, FRAME_NATIVE, "main", "/bin/x", 0, 0);
	uint32_t f2 = frame(p, FRAME_NATIVE, "work", "/bin/x", 0, 0);
	cr_assert_eq(frame(p, FRAME_NATIVE, "main", "/bin/x", 0, 0), f1);
	cr_assert_neq(frame(p, FRAME_KERNEL, "main", "/bin/x", 0, 0), f1);

	struct sample_labels l1 = { .pid = 10, .tid = 11, .comm = profile__str(p, "x") };
	struct sample_labels l2 = { .pid = 10, .tid = 12, .comm = l1.comm };
	uint32_t st[] = { f1, f2 };
	profile__add(p, &l1, st, 2, 1);
	profile__add(p, &l1, st, 2, 1);
	profile__add(p, &l2, st, 2, 3);
	profile__add(p, &l1, st, 1, 1);
	cr_assert_eq(profile__total(p), 6);
	cr_assert_eq(profile__nstacks(p), 3);

	size_t pos = 0, seen = 0;
	struct profile_entry e;
	while (profile__next(p, &pos, &e)) {
		seen++;
		if (e.labels.tid == 11 && e.nframes == 2)
			cr_assert_eq(e.count, 2);
		if (e.labels.tid == 12)
			cr_assert_eq(e.count, 3);
	}
	cr_assert_eq(seen, 3);
	profile__free(p);
}

/* The string table holds only UTF-8: a thread name the kernel cut in the
 * middle of a character becomes U+FFFD there, so no writer or backend sees
 * the bad byte (a protobuf string must be UTF-8). */
Test(profile, strings_are_utf8)
{
	struct profile *p = profile__new();
	uint32_t ok = profile__str(p, "работник-1");

	cr_assert_str_eq(profile__str_at(p, ok), "работник-1");
	cr_assert_str_eq(profile__str_at(p, profile__str(p, "работн\xd0")), "работн\xef\xbf\xbd");
	cr_assert_str_eq(profile__str_at(p, profile__str(p, "\xff\xfe.py")), "\xef\xbf\xbd\xef\xbf\xbd.py");
	cr_assert_eq(profile__str(p, "работн\xd0"), profile__str(p, "работн\xef\xbf\xbd"));
	profile__free(p);
}

Test(folded, golden_output)
{
	struct profile *p = profile__new();
	uint32_t comm = profile__str(p, "python3");
	uint32_t k1 = frame(p, FRAME_KERNEL, "do_syscall_64", "", 0, 0);
	uint32_t k2 = frame(p, FRAME_KERNEL, "__x64_sys_read", "", 0, 0);
	uint32_t n1 = frame(p, FRAME_NATIVE, "main", "/usr/bin/python3", 0, 0);
	uint32_t n2 = frame(p, FRAME_NATIVE, "", "/usr/lib/libfoo.so.1", 0, 0x1a2b);
	uint32_t n3 = frame(p, FRAME_NATIVE, "", "", 0, 0);
	uint32_t py = frame(p, FRAME_PYTHON, "Model.fit", "/srv/app/model.py", 42, 0);
	uint32_t odd = frame(p, FRAME_NATIVE, "std::map<int;int>\nfoo", "/x", 0, 0);
	uint32_t mark = frame(p, FRAME_MARK, "[truncated]", "", 0, 0);

	struct sample_labels a = { .pid = 1, .tid = 1, .comm = comm };
	struct sample_labels b = { .pid = 2, .tid = 2, .comm = comm };
	uint32_t s1[] = { n1, py, k1, k2 };
	uint32_t s2[] = { mark, n1, n2, n3 };
	uint32_t s3[] = { n1, odd };
	profile__add(p, &a, s1, 4, 5);
	profile__add(p, &b, s1, 4, 2); /* another pid, same text: one line */
	profile__add(p, &a, s2, 4, 1);
	profile__add(p, &a, s3, 2, 3);
	profile__add(p, &a, s1, 0, 4); /* no frames at all */

	/* By default processes of one command are one tree: a stack two
	 * processes share is one line. */
	static const char merged_text[] =
		"python3 4\n"
		"python3;[truncated];main;libfoo.so.1+0x1a2b;[unknown] 1\n"
		"python3;main;Model.fit (/srv/app/model.py:42);do_syscall_64_[k];__x64_sys_read_[k] 7\n"
		"python3;main;std::map<int:int>\\x0afoo 3\n";
	char *text = folded_text(p);
	cr_assert_str_eq(text, merged_text);
	free(text);
	struct folded_opts merged = { .processes = PROCESSES_MERGED };
	text = folded_text_opts(p, &merged);
	cr_assert_str_eq(text, merged_text);
	free(text);
	/* --processes each tells them apart. */
	struct folded_opts each = { .processes = PROCESSES_EACH };
	text = folded_text_opts(p, &each);
	cr_assert_str_eq(
		text, "python3 [pid 1] 4\n"
		      "python3 [pid 1];[truncated];main;libfoo.so.1+0x1a2b;[unknown] 1\n"
		      "python3 [pid 1];main;Model.fit (/srv/app/model.py:42);do_syscall_64_[k];__x64_sys_read_[k] 5\n"
		      "python3 [pid 1];main;std::map<int:int>\\x0afoo 3\n"
		      "python3 [pid 2];main;Model.fit (/srv/app/model.py:42);do_syscall_64_[k];__x64_sys_read_[k] 2\n");
	free(text);
	profile__free(p);
}

Test(folded, empty_profile_writes_nothing)
{
	struct profile *p = profile__new();
	char *text = folded_text(p);

	cr_assert_str_eq(text, "");
	free(text);
	profile__free(p);
}

/* Three identical workers of one master (gunicorn): by default one tree
 * under their command, so the endpoint they all serve is one tower of all
 * their samples; --processes each gives each worker its tree. */
Test(folded, workers_of_one_command_are_one_tree_unless_each)
{
	struct profile *p = profile__new();
	uint32_t gu = profile__str(p, "gunicorn");
	uint32_t run = frame(p, FRAME_PYTHON, "Arbiter.run", "/g/arbiter.py", 10, 1);
	uint32_t handle = frame(p, FRAME_PYTHON, "SyncWorker.handle", "/g/sync.py", 20, 1);
	uint32_t view = frame(p, FRAME_PYTHON, "report", "/srv/app.py", 9, 5);
	uint32_t master[] = { run }, worker[] = { handle, view };

	struct sample_labels m = { .pid = 100, .tid = 100, .comm = gu };
	profile__add(p, &m, master, 1, 2);
	for (uint32_t pid = 101; pid <= 103; pid++) {
		struct sample_labels l = { .pid = pid, .tid = pid, .comm = gu };
		profile__add(p, &l, worker, 2, pid - 100);
	}
	char *text = folded_text(p);
	cr_assert_str_eq(text, "gunicorn;Arbiter.run (/g/arbiter.py:10) 2\n"
			       "gunicorn;SyncWorker.handle (/g/sync.py:20);report (/srv/app.py:9) 6\n");
	free(text);
	struct folded_opts each = { .processes = PROCESSES_EACH };
	text = folded_text_opts(p, &each);
	cr_assert_str_eq(text, "gunicorn [pid 100];Arbiter.run (/g/arbiter.py:10) 2\n"
			       "gunicorn [pid 101];SyncWorker.handle (/g/sync.py:20);report (/srv/app.py:9) 1\n"
			       "gunicorn [pid 102];SyncWorker.handle (/g/sync.py:20);report (/srv/app.py:9) 2\n"
			       "gunicorn [pid 103];SyncWorker.handle (/g/sync.py:20);report (/srv/app.py:9) 3\n");
	free(text);

	struct process_split *s = process_split__new(p, PROCESSES_MERGED);
	char name[64];
	cr_assert_not(process_split__by_pid(s));
	process_split__name(s, p, gu, 101, name, sizeof(name));
	cr_assert_str_eq(name, "gunicorn");
	process_split__free(s);
	s = process_split__new(p, PROCESSES_EACH);
	cr_assert(process_split__by_pid(s));
	process_split__name(s, p, gu, 101, name, sizeof(name));
	cr_assert_str_eq(name, "gunicorn [pid 101]");
	process_split__free(s);
	profile__free(p);
}

Test(folded, processes_option_values)
{
	enum process_frames m = PROCESSES_EACH;

	cr_assert_eq(process_frames_parse("merged", &m), 0);
	cr_assert_eq(m, PROCESSES_MERGED);
	cr_assert_eq(process_frames_parse("each", &m), 0);
	cr_assert_eq(m, PROCESSES_EACH);
	/* The old default's name: scripts that pass it get today's default. */
	cr_assert_eq(process_frames_parse("auto", &m), 0);
	cr_assert_eq(m, PROCESSES_MERGED);
	cr_assert_eq(process_frames_parse("every", &m), -1);
}

/* With --threads a thread has one frame, named as its latest sample names
 * it (its first ones may predate its Python name); a process that named
 * itself (multiprocessing) shows that name beside its pid (--processes
 * each), for all its samples. */
Test(folded, one_name_per_thread_and_the_process_s_own_name)
{
	struct profile *p = profile__new();
	uint32_t py = profile__str(p, "python3.12"), f = frame(p, FRAME_NATIVE, "main", "/bin/x", 0, 0);
	struct sample_labels early = { .pid = 7, .tid = 7, .comm = py, .thread = profile__str(p, "python3.12") };
	struct sample_labels late = early,
			     other = { .pid = 8, .tid = 8, .comm = py, .thread = profile__str(p, "MainThread") };

	late.thread = profile__str(p, "MainThread");
	late.process = profile__str(p, "SpawnPoolWorker-1");
	profile__add_at(p, &early, &f, 1, 1, 1000);
	profile__add_at(p, &late, &f, 1, 2, 2000);
	profile__add_at(p, &other, &f, 1, 1, 3000);
	struct folded_opts o = { .threads = 1, .processes = PROCESSES_EACH };
	char *text = folded_text_opts(p, &o);
	cr_assert_str_eq(text, "python3.12 [pid 7, SpawnPoolWorker-1];MainThread [tid 7];main 3\n"
			       "python3.12 [pid 8];MainThread [tid 8];main 1\n");
	free(text);
	/* Merged, the name goes with the pid: the thread frames keep the tids. */
	o.processes = PROCESSES_MERGED;
	text = folded_text_opts(p, &o);
	cr_assert_str_eq(text, "python3.12;MainThread [tid 7];main 3\n"
			       "python3.12;MainThread [tid 8];main 1\n");
	free(text);
	profile__free(p);
}
