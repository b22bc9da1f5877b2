// The one parser of a job's dlsched metadata (model/job_metadata.h): comment words and spank/dlsched's
// environment, with spank/dlsched's submit-time limits.
#include <check.h>

#include "check_main.h"

#include "model/job_metadata.h"

using namespace dlsched;

START_TEST(comment_words)
{
	JobMetadata m;
	parse_job_words(
		"run 7 model=resnet50 epochs=90,epoch_time_1gpu=1.5e2 gpus_max=8 gpus_min=2 "
		"deadline=1767225900",
		m);
	ck_assert_str_eq(m.model.c_str(), "resnet50");
	ck_assert_double_eq(m.epochs, 90);
	ck_assert_double_eq(m.epoch_time_1gpu, 150);
	// Both orders of the range.
	ck_assert_int_eq(m.gpus_min, 2);
	ck_assert_int_eq(m.gpus_max, 8);
	ck_assert(m.elastic());
	ck_assert_double_eq(m.deadline, 1767225900);
	ck_assert_uint_eq(m.problems.size(), 0);
	JobMetadata n;
	parse_job_words("gpus_min=2 gpus_max=8", n);
	ck_assert_int_eq(n.gpus_min, 2);
	ck_assert_int_eq(n.gpus_max, 8);
	// Not ours, or only a prefix of ours: left alone.
	JobMetadata none;
	parse_job_words("mymodel=x xepochs=3 note: epochs to 90", none);
	ck_assert(!none.any());
	ck_assert_uint_eq(none.problems.size(), 0);
}
END_TEST

START_TEST(bad_values_are_ignored_and_named)
{
	const char* bad[] = {"epochs=0",     "epochs=-3",     "epochs=1e8",
			     "epochs=0x10",  "epochs=inf",    "epochs=nan",
			     "epochs=12abc", "epochs=",       "epoch_time_1gpu=2e9",
			     "gpus_min=0",   "gpus_max=4097", "gpus_min=2.5",
			     "model=a/b",    "model=",        "deadline=-1",
			     "deadline=1.5"};
	for (const char* w : bad) {
		JobMetadata m;
		parse_job_words(w, m);
		ck_assert_msg(!m.any(), "%s was taken", w);
		ck_assert_msg(m.problems.size() == 1, "%s: %zu problems", w, m.problems.size());
		ck_assert_msg(
			m.problems[0].rfind(std::string(w).substr(0, std::string(w).find('=') + 1), 0) == 0,
			"%s: '%s'", w, m.problems[0].c_str());
	}
	JobMetadata longname;
	parse_job_words("model=" + std::string(65, 'a'), longname);
	ck_assert(longname.model.empty());
	JobMetadata max;
	parse_job_words("model=" + std::string(64, 'a') + " epochs=1e7 gpus_max=4096", max);
	ck_assert_uint_eq(max.model.size(), 64);
	ck_assert_double_eq(max.epochs, 1e7);
	ck_assert_int_eq(max.gpus_max, 4096);
	// A range the wrong way round is no range.
	JobMetadata wrong;
	parse_job_words("gpus_min=8 gpus_max=2", wrong);
	ck_assert_int_eq(wrong.gpus_min, 0);
	ck_assert_int_eq(wrong.gpus_max, 0);
	ck_assert_uint_eq(wrong.problems.size(), 1);
}
END_TEST

START_TEST(spank_environment_over_the_comment)
{
	JobMetadata m;
	parse_job_words("model=bert epochs=3 gpus_min=1 gpus_max=2", m);
	parse_job_env({"PATH=/bin", "DL_MODEL=resnet50", "SPANK_DL_EPOCHS=90", "DL_ELASTIC=2:8",
		       "DL_CHECKPOINT_DIR=/ck"},
		      m);
	ck_assert_str_eq(m.model.c_str(), "resnet50");
	ck_assert_double_eq(m.epochs, 90);
	ck_assert_int_eq(m.gpus_min, 2);
	ck_assert_int_eq(m.gpus_max, 8);
	ck_assert_uint_eq(m.problems.size(), 0);
	// DL_ELASTIC: both or neither; a bad one leaves the comment's range.
	for (const char* e :
	     {"DL_ELASTIC=8:2", "DL_ELASTIC=4", "DL_ELASTIC=0:4", "DL_ELASTIC=2:5000", "DL_ELASTIC=a:b"}) {
		JobMetadata k;
		parse_job_words("gpus_min=1 gpus_max=2", k);
		parse_job_env({e}, k);
		ck_assert_msg(k.gpus_min == 1 && k.gpus_max == 2, "%s: %d:%d", e, k.gpus_min, k.gpus_max);
		ck_assert_msg(k.problems.size() == 1, "%s: %zu problems", e, k.problems.size());
	}
}
END_TEST

// Issue 27 item 8: the comment word deadline= passes Slurm's --deadline check at submission, and
// the deadline first seen stands. Submitted (or to begin) at 1000 s.
START_TEST(deadline_words_are_judged_as_slurm_judges_deadline)
{
	const struct {
		double word, first_seen, time_min_s, want;
		const char* problem;
	} cases[] = {
		{0, 0, 0, 0, ""},        // no word
		{2000, 0, 0, 2000, ""},  // after the earliest start: counts
		{1000, 0, 0, 0,
		 "deadline=1000 ignored: not after the job's earliest start (1000), as Slurm refuses such a "
		 "--deadline"},
		{500, 0, 0, 0,
		 "deadline=500 ignored: not after the job's earliest start (1000), as Slurm refuses such a "
		 "--deadline"},
		// --time-min 10 min: the earliest it could end is 1600 s.
		{1600, 0, 600, 0,
		 "deadline=1600 ignored: not after the job's earliest start + --time-min (1600), as Slurm "
		 "refuses such a --deadline"},
		{1601, 0, 600, 1601, ""},
		// First seen at 5000: a comment changed later to 1200 (tighter: first place) is ignored.
		{1200, 5000, 0, 5000,
		 "deadline=1200 ignored: the deadline first seen, 5000, stands (a comment changed later does "
		 "not move it)"},
		{5000, 5000, 0, 5000, ""},
	};
	for (const auto& c : cases) {
		const DeadlineClaim got = judge_deadline_word(c.word, c.first_seen, 1000, c.time_min_s);
		ck_assert_msg(got.deadline == c.want, "word %.0f: deadline %.0f, want %.0f", c.word,
			      got.deadline, c.want);
		ck_assert_msg(got.problem == c.problem, "word %.0f: problem \"%s\"", c.word,
			      got.problem.c_str());
	}
}
END_TEST

int main()
{
	Suite* s = suite_create("metadata");
	TCase* tc = tcase_create("metadata");
	tcase_add_test(tc, comment_words);
	tcase_add_test(tc, bad_values_are_ignored_and_named);
	tcase_add_test(tc, spank_environment_over_the_comment);
	tcase_add_test(tc, deadline_words_are_judged_as_slurm_judges_deadline);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
