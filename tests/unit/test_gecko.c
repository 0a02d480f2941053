/*
 * The Gecko writer over a profile made here: a row per sample (the format
 * has no weight), a period apart; Python frames located at their function's
 * first line with the sampled line in the row; waits as one marker per run
 * of the same reason; names from the latest sample. tests/gecko_check.py
 * checks a real recording's file as the Firefox Profiler's importer reads it
 * (tests/integ/test_report.c).
 */
#include "unit.h"

#include "profile/offcpu.h"
#include "write/gecko.h"

Test(gecko, rows_a_period_apart_frames_by_function_waits_as_markers)
{
	const uint64_t ms = 1000000ULL;
	struct profile *p = profile__new();
	struct sample_labels l = { .pid = 100, .tid = 101 };
	uint32_t work, wait;
	char *s;

	profile__meta(p)->period_ns = 10 * ms;
	profile__meta(p)->start_epoch_ns = 1000 * ms;
	l.comm = profile__str(p, "app");
	l.thread = profile__str(p, "worker");
	work = profile__frame(p, &(struct frame){ .kind = FRAME_PYTHON,
						  .name = profile__str(p, "work"),
						  .module = profile__str(p, "app.py"),
						  .line = 12,
						  .start_line = 10 });
	wait = profile__frame(p, &(struct frame){ .kind = FRAME_MARK, .name = profile__str(p, "[off-cpu: sleep]") });
	/* On the CPU: three samples, the last standing for a skipped tick too. */
	profile__add_at(p, &l, &work, 1, 1, 0);
	profile__add_at(p, &l, &work, 1, 1, 10 * ms);
	profile__add_at(p, &l, &work, 1, 2, 30 * ms);
	/* Asleep from 40 ms for 5 ticks, then again at once for 2: one marker. */
	uint32_t slept[] = { work, wait };
	l.offcpu = OFFCPU_SLEEP;
	profile__add_at(p, &l, slept, 2, 5, 40 * ms);
	profile__add_at(p, &l, slept, 2, 2, 90 * ms);
	l.offcpu = 0;
	l.thread = profile__str(p, "renamed");
	profile__add_at(p, &l, &work, 1, 1, 120 * ms);
	/* Off the CPU unsampled (CPU mode) until 200 ms; a wait of 3 ticks
	 * from 210 ms that a CPU sample at 235 ms ends early. */
	profile__add_at(p, &l, &work, 1, 1, 200 * ms);
	l.offcpu = OFFCPU_SLEEP;
	profile__add_at(p, &l, slept, 2, 3, 210 * ms);
	l.offcpu = 0;
	profile__add_at(p, &l, &work, 1, 1, 235 * ms);
	s = written(gecko__write, p);

	cr_assert(strstr(s, "\"version\":27,\"startTime\":1000.000,"), "%.200s", s);
	cr_assert(strstr(s, "\"interval\":10.000,"));
	cr_assert(strstr(s, "\"name\":\"renamed\",\"processName\":\"app [pid 100]\",\"processType\":\"default\","
			    "\"pid\":100,\"tid\":101,"),
		  "named by the latest sample: %s", s);
	cr_assert_eq(occurrences_of(s, ".000,0]"), 20, "a row per sample, and the empty ones: %s", s);
	cr_assert(strstr(s, "[0,120.000,0],\n[null,130.000,0],\n[0,200.000,0]"),
		  "the time unsampled between two CPU samples is no sample's: %s", s);
	cr_assert(strstr(s, "[0,235.000,0],\n[null,245.000,0]]"), "the last sample a period long: %s", s);
	cr_assert(strstr(s, ",210.000,235.000,1,3,{\"type\":\"OffCPU\""), "a wait ends where the CPU sample is: %s", s);
	cr_assert(strstr(s, "[0,0.000,0]") && strstr(s, "[0,20.000,0]") && strstr(s, "[0,30.000,0]"),
		  "a skipped tick a period before its sample: %s", s);
	cr_assert(strstr(s, "[1,40.000,0]") && strstr(s, "[1,80.000,0]") && strstr(s, "[1,100.000,0]"),
		  "a wait's rows from its start, a period apart: %s", s);
	cr_assert(strstr(s, ",40.000,110.000,1,3,{\"type\":\"OffCPU\",\"reason\":\"sleep\"}]"),
		  "one marker for the two waits back to back: %s", s);
	cr_assert_eq(occurrences_of(s, "\"type\":\"OffCPU\""), 2);
	cr_assert(strstr(s, "\"work (app.py:10)\""), "located at the function's first line: %s", s);
	cr_assert(strstr(s, "[1,false,null,null,12,null,0,0]"), "the sampled line in the row: %s", s);
	free(s);
	profile__free(p);
}

Test(gecko, an_empty_profile_is_a_valid_file)
{
	struct profile *p = profile__new();
	char *s = written(gecko__write, p);

	cr_assert(strstr(s, "\"threads\":[\n]}"), "%s", s);
	free(s);
	profile__free(p);
}

/* A thread sampled with no frame at all (exiting, its memory gone) still ran
 * then: a null stack is the importer's "not sampled", so it gets a frame. */
Test(gecko, a_sample_without_frames_is_still_a_sample)
{
	const uint64_t ms = 1000000ULL;
	struct profile *p = profile__new();
	struct sample_labels l = { .pid = 100, .tid = 101 };
	char *s;

	profile__meta(p)->period_ns = 10 * ms;
	profile__add_at(p, &l, NULL, 0, 2, 10 * ms);
	s = written(gecko__write, p);
	cr_assert(strstr(s, "[0,0.000,0],\n[0,10.000,0],\n[null,20.000,0]]"), "two rows of a stack: %s", s);
	cr_assert(strstr(s, "\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[\n[null,0]]}"), "%s", s);
	cr_assert(strstr(s, "[1,false,null,null,null,null,4,0]]}") &&
			  strstr(s, "\"stringTable\":[\"\",\"[no stack]\"]"),
		  "one frame, \"[no stack]\", of the Other category: %s", s);
	free(s);
	profile__free(p);
}
