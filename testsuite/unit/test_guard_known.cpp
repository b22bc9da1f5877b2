// dlsched-guard's view of the jobs it replays (contribs/guard/known.h, contribs/train/sacct.h): each
// job at the length sched/dlsched's view had for it at the evaluation, from the profile DB as it
// stood then (a record written after the evaluation is never read), and the backlog at the
// window's start carried with the epochs it had left then. Hand-built sacct lines and a real
// SQLite profile DB.
#include <sys/stat.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "contribs/guard/known.h"
#include "contribs/train/sacct.h"
#include "predict/profile_reader.h"
#include "profiledb/profile_db.h"
#include "testsuite/unit/temp_path.h"
#include "util/trusted_file.h"
#include "workload/workload.h"

extern "C" {
#include "check_main.h"
}

using namespace dlsched;

namespace {

const double kNow = 100000;    // the evaluation
const double kWindow = 20000;  // GuardWindow=
const double kStart = kNow - kWindow;

// A job's epochs in the profile DB: `n` epochs of `epoch_s` on `gpus` GPUs from `from`.
void record(db::ProfileDb& w, std::int64_t id, const char* model, double from, int n, double epoch_s,
	    int first_epoch = 1)
{
	db::JobRecord r;
	r.cluster = "lab", r.job_id = id, r.model = model, r.gpus = 1, r.epochs_total = 10;
	r.user = "u" + std::to_string(id), r.submit_s = from, r.start_s = from;
	ck_assert(w.put_job(r).is_ok());
	double t = from;
	for (int e = first_epoch; e < first_epoch + n; ++e) {
		db::EpochRecord er;
		er.cluster = "lab", er.job_id = id, er.run = 0, er.epoch = e, er.gpus = 1;
		er.start_s = t;
		er.end_s = t += epoch_s;
		ck_assert(w.add_epoch(er).is_ok());
	}
}

train::SacctGuardJob sjob(JobId id, int model, double submit, double start = -1, double end = -1)
{
	train::SacctGuardJob s;
	s.job.id = id;
	s.job.model = model;
	s.job.submit_time = submit;
	s.job.gpus_requested = s.job.gpus_min = s.job.gpus_max = 1;
	s.job.epochs_total = 10;
	s.job.epoch_time_1gpu = 0;  // no claim
	s.job.time_limit = 7500;    // 10 epochs of 500 s fit; a claim counts down to 750 s
	s.epochs_given = true;
	s.start = start;
	s.end = end;
	return s;
}

const GuardKnown* find(const std::vector<GuardKnown>& v, JobId id)
{
	for (const GuardKnown& k : v)
		if (k.job.id == id)
			return &k;
	return nullptr;
}

}  // namespace

START_TEST(sacct_time_limits)
{
	const struct {
		const char* cell;
		double want;
	} cases[] = {{"1-02:03:04", 93784}, {"02:03:04", 7384},          {"30:00", 1800},
		     {"45", 2700},          {"UNLIMITED", kNoTimeLimit}, {"Partition_Limit", kNoTimeLimit},
		     {"", kNoTimeLimit},    {"1-30:00", kNoTimeLimit},   {"00:00:00", kNoTimeLimit}};
	for (const auto& c : cases)
		ck_assert_msg(train::sacct_time_limit(c.cell) == c.want, "'%s': %g, want %g", c.cell,
			      train::sacct_time_limit(c.cell), c.want);
}
END_TEST

// What sacct recorded after the evaluation is not there: a start or an end after it, a job
// submitted after it; an unfinished job's length is its claim, never the run sacct measured later.
START_TEST(sacct_lines_as_of_the_evaluation)
{
	auto models = load_model_catalog(DLSCHED_PROFILES);
	ck_assert(models.is_ok());
	std::istringstream in(
		"JobID|Submit|Start|End|AllocTRES|ReqTRES|Comment|User|Timelimit\n"
		"1|2026-11-23T10:00:00|2026-11-23T10:00:00|2026-11-23T10:30:00|gres/"
		"gpu=2||epochs=3|a|01:00:00\n"
		"2|2026-11-23T10:00:00|2026-11-23T10:10:00|2026-11-23T13:00:00|gres/"
		"gpu=1||epoch_time_1gpu=60|b|UNLIMITED\n"
		"3|2026-11-23T11:00:00|2026-11-23T12:30:00|2026-11-23T13:00:00|gres/gpu=1|||c|10:00\n"
		"4|2026-11-23T12:30:00|2026-11-23T12:30:00|2026-11-23T13:00:00|gres/gpu=1|||d|10:00\n");
	const double now = 1795435200;  // 2026-11-23T12:00:00Z
	auto jobs = train::sacct_guard_jobs(in, "test", *models, now);
	ck_assert_msg(jobs.is_ok(), "%s", jobs.status().message().c_str());
	ck_assert_uint_eq(jobs->size(), 3);  // not 4: submitted after
	const train::SacctGuardJob &a = (*jobs)[0], &b = (*jobs)[1], &c = (*jobs)[2];
	ck_assert(a.start > 0 && a.end > a.start && a.epochs_given && a.job.time_limit == 3600);
	ck_assert(a.job.epoch_time_1gpu == 0);  // no claim: unknown, not its run
	ck_assert(b.start > 0 && b.end == -1);  // ended after: still running
	ck_assert(b.job.epoch_time_1gpu == 60 && !b.epochs_given && b.job.time_limit == kNoTimeLimit);
	ck_assert(c.start == -1 && c.end == -1);  // started after: still pending
	ck_assert(c.job.time_limit == 600);
}
END_TEST

// A pending job whose model's history says it is long is estimated long; a running job at its own
// epochs; records written after the evaluation change nothing, and count once it is later.
START_TEST(lengths_from_the_profile_db_as_of_the_evaluation)
{
	auto loaded = load_model_catalog(DLSCHED_PROFILES);
	ck_assert(loaded.is_ok());
	const ModelCatalog& models = loaded.value();
	const int cifar = models.find("cifar10"), imagenet = models.find("imagenet");
	ck_assert_int_ge(cifar, 0);
	ck_assert_int_ge(imagenet, 0);
	const std::string path = test::temp_path("dlsched-guard-known", "profiles.db");
	{
		auto w = db::ProfileDb::open_writer(path);
		ck_assert(w.is_ok());
		record(*w, 1, "cifar10", kNow - 9000, 5, 500);  // history before the evaluation
		record(*w, 3, "cifar10", kNow + 100, 5, 5000);  // after it
		record(*w, 4, "cifar10", kNow + 200, 5, 5000);
		record(*w, 20, "imagenet", kNow - 2000, 2, 900);  // job 20's own epochs
		record(*w, 20, "imagenet", kNow + 10, 3, 10, 3);  // ... and later, much faster ones
	}
	std::vector<train::SacctGuardJob> jobs = {sjob(10, cifar, kNow - 500),
						  sjob(20, imagenet, kNow - 3000, kNow - 2000)};
	guard::KnownOptions o;
	o.now = kNow, o.window = kWindow, o.cluster = "lab";
	// Without the profile DB: the model profile's epoch time, raised to the time limit's floor.
	const std::vector<GuardKnown> none = guard::known_at(jobs, models, o);
	o.profile_db = path;
	guard::KnownSummary sum;
	const std::vector<GuardKnown> known = guard::known_at(jobs, models, o, &sum);
	ck_assert_msg(sum.profile_db_note.empty(), "%s", sum.profile_db_note.c_str());
	ck_assert_uint_eq(sum.from_db, 2);
	const GuardKnown *pending = find(known, 10), *running = find(known, 20);
	ck_assert(pending && running && find(none, 10));
	ck_assert(!pending->finished && !running->finished);
	ck_assert_msg(std::fabs(pending->job.epoch_time_1gpu / 500 - 1) < 0.3, "pending: %g s per epoch",
		      pending->job.epoch_time_1gpu);
	ck_assert_msg(find(none, 10)->job.epoch_time_1gpu < 200, "no DB: %g",
		      find(none, 10)->job.epoch_time_1gpu);
	ck_assert_msg(std::fabs(running->job.epoch_time_1gpu / 900 - 1) < 0.3, "running: %g s per epoch",
		      running->job.epoch_time_1gpu);
	// Later, jobs 3 and 4's long epochs are part of the history (capped at the time limit).
	o.now = kNow + 30000;
	jobs[0].job.submit_time = o.now - 500;
	const std::vector<GuardKnown> later = guard::known_at(jobs, models, o);
	ck_assert_msg(find(later, 10)->job.epoch_time_1gpu > 1.2 * pending->job.epoch_time_1gpu,
		      "later: %g, at the evaluation %g", find(later, 10)->job.epoch_time_1gpu,
		      pending->job.epoch_time_1gpu);

	// profile_as_of itself.
	auto r = db::ProfileDb::open_reader(path);
	ck_assert(r.is_ok());
	auto p = r->job("lab", 20, 0);
	ck_assert(p.is_ok());
	ck_assert_uint_eq(p->epochs.size(), 5);
	const db::JobProfile then = predict::profile_as_of(*p, kNow);
	ck_assert_uint_eq(then.epochs.size(), 2);
	ck_assert(then.epochs.back().end_s <= kNow);
}
END_TEST

// A profile DB every user can write is refused as sched/dlsched refuses it: the lengths fall back
// and the reason is given.
START_TEST(a_world_writable_profile_db_is_refused)
{
	auto loaded = load_model_catalog(DLSCHED_PROFILES);
	ck_assert(loaded.is_ok());
	const std::string path = test::temp_path("dlsched-guard-known", "open.db");
	{
		auto w = db::ProfileDb::open_writer(path);
		ck_assert(w.is_ok());
		record(*w, 1, "cifar10", kNow - 9000, 5, 500);
	}
	ck_assert_int_eq(chmod(path.c_str(), 0666), 0);
	trust_files_owned_by(0);
	guard::KnownOptions o;
	o.now = kNow, o.window = kWindow, o.cluster = "lab", o.profile_db = path;
	guard::KnownSummary sum;
	const std::vector<GuardKnown> known =
		guard::known_at({sjob(10, loaded->find("cifar10"), kNow - 500)}, *loaded, o, &sum);
	trust_any_file();
	ck_assert_msg(sum.profile_db_note.find("writable by every user") != std::string::npos, "%s",
		      sum.profile_db_note.c_str());
	ck_assert_uint_eq(sum.from_db, 0);
	ck_assert(known.size() == 1 && known[0].job.epoch_time_1gpu < 200);
}
END_TEST

// The backlog at the window's start: a job running then carries the epochs it had not reported by
// then, one pending then all of them; one done before the window is not replayed.
START_TEST(the_backlog_at_the_window_start)
{
	auto loaded = load_model_catalog(DLSCHED_PROFILES);
	ck_assert(loaded.is_ok());
	const ModelCatalog& models = loaded.value();
	const int cifar = models.find("cifar10");
	const std::string path = test::temp_path("dlsched-guard-known", "backlog.db");
	{
		auto w = db::ProfileDb::open_writer(path);
		ck_assert(w.is_ok());
		record(*w, 30, "cifar10", kStart - 1600, 3, 500);  // 3 epochs by the start
		record(*w, 30, "cifar10", kStart + 100, 7, 500, 4);
	}
	std::vector<train::SacctGuardJob> jobs = {
		sjob(30, cifar, kStart - 2000, kStart - 1600, kStart + 3600),  // running at the start
		sjob(31, cifar, kStart - 1000, kStart + 500),                  // pending at the start
		sjob(32, cifar, kStart - 5000, kStart - 4000, kStart - 100),   // done before it
		sjob(33, cifar, kStart + 10, kStart + 20, kStart + 5020),      // in the window
		sjob(34, cifar, kStart - 3000, kStart - 2500, kStart + 500)};  // no records: by time
	guard::KnownOptions o;
	o.now = kNow, o.window = kWindow, o.cluster = "lab", o.profile_db = path;
	guard::KnownSummary sum;
	const std::vector<GuardKnown> known = guard::known_at(jobs, models, o, &sum);
	ck_assert_uint_eq(known.size(), 4);
	ck_assert_uint_eq(sum.carried, 3);
	ck_assert(find(known, 32) == nullptr);
	ck_assert(find(known, 30)->carried && find(known, 30)->epochs_left_then == 7);
	ck_assert(find(known, 31)->carried && find(known, 31)->epochs_left_then == 10);
	ck_assert(!find(known, 33)->carried);
	// 34 ran 2,500 s of its 3,000 s by the start (measured: it ended since): 1/6 of it left.
	ck_assert_msg(std::fabs(find(known, 34)->epochs_left_then - 10.0 / 6) < 1e-6, "%g",
		      find(known, 34)->epochs_left_then);
	// The snapshot replays them from the window's start.
	std::vector<GuardKnown> shifted = known;
	for (GuardKnown& k : shifted)
		k.job.submit_time -= kStart;
	const std::vector<Job> w = guard_snapshot(shifted, kWindow, kWindow);
	ck_assert_uint_eq(w.size(), 4);
	ck_assert(w[0].submit_time == 0 && w[0].id == 30 && w[0].epochs_total == 7);
}
END_TEST

int main()
{
	Suite* s = suite_create("guard_known");
	TCase* tc = tcase_create("guard_known");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, sacct_time_limits);
	tcase_add_test(tc, sacct_lines_as_of_the_evaluation);
	tcase_add_test(tc, lengths_from_the_profile_db_as_of_the_evaluation);
	tcase_add_test(tc, a_world_writable_profile_db_is_refused);
	tcase_add_test(tc, the_backlog_at_the_window_start);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
