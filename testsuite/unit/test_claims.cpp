// A batch's claims against what Slurm knows of the job (profiledb/claims.h): each rule refuses the
// claim one tolerance past its bound and accepts the one at the bound. The job in every case: Slurm
// started it at 1000 on n[1-2]; the service's clock says 5000; 60 s of clock skew.
#include <string>
#include <vector>

#include "profiledb/claims.h"
#include "util/node_list.h"

extern "C" {
#include "check_main.h"
}

using namespace dlsched;
using namespace dlsched::db;

namespace {

const double kNow = 5000;

SlurmJob running()
{
	SlurmJob j;
	j.uid = 1001;
	j.submit_s = 900;
	j.start_s = 1000;
	j.state = "RUNNING";
	j.nodes = {"n1", "n2"};
	return j;
}

Batch batch(const std::string& node = "n1", int run = 0)
{
	Batch b;
	b.cluster = "dlsched";
	b.job_id = 7;
	b.step = "batch";
	b.node = node;
	b.run = run;
	return b;
}

EpochRecord epoch(int n, double start, double end, int run = 0)
{
	EpochRecord e;
	e.cluster = "dlsched";
	e.job_id = 7;
	e.run = run;
	e.epoch = n;
	e.gpus = 1;
	e.start_s = start;
	e.end_s = end;
	return e;
}

CheckpointRecord checkpoint(const std::string& kind, double epoch, double at)
{
	CheckpointRecord c;
	c.kind = kind;
	c.epoch = epoch;
	c.at_s = at;
	return c;
}

// Recorded: epochs 1..10 of run 0, 100 s each from 1000 (epoch 10 ends at 2000), a save at 10.
JobProfile ten_epochs()
{
	JobProfile p;
	for (int n = 1; n <= 10; ++n)
		p.epochs.push_back(epoch(n, 1000 + 100 * (n - 1), 1000 + 100 * n));
	p.checkpoints.push_back(checkpoint("save", 10, 2001));
	return p;
}

// "" when accepted, else the message.
std::string verdict(const Batch& b, const SlurmJob& j, const JobProfile* rec = nullptr)
{
	Status st = check_claims(b, j, rec, kNow);
	return st.is_ok() ? std::string() : st.message();
}

// Accepted: no refusal (its message printed otherwise). A bool, not the message's c_str(): the
// temporary string would be gone before ck_assert_str_eq read it.
bool accepted(const std::string& v)
{
	if (!v.empty())
		std::fprintf(stderr, "refused: %s\n", v.c_str());
	return v.empty();
}

bool refused_with(const std::string& v, const std::string& words)
{
	return v.find(words) != std::string::npos;
}

}  // namespace

START_TEST(times_lie_within_the_run)
{
	Batch b = batch();
	b.epochs = {epoch(1, 1000, 1100), epoch(2, 1100, 1200)};
	b.checkpoints = {checkpoint("save", 2, 1201)};
	ck_assert(accepted(verdict(b, running())));

	// In the future: now + 60 is the last second allowed.
	b.epochs = {epoch(1, 4900, 5060)};
	b.checkpoints.clear();
	ck_assert(accepted(verdict(b, running())));
	b.epochs = {epoch(1, 4900, 5061)};
	const std::string future = verdict(b, running());
	ck_assert_msg(refused_with(future, "epoch 1's end 5061.0 is in the future"), "%s", future.c_str());
	ck_assert(!check_not_future(b, kNow).is_ok());

	// Before the job started: start - 60 is the first second allowed.
	b.epochs = {epoch(1, 940, 1100)};
	ck_assert(accepted(verdict(b, running())));
	b.epochs = {epoch(1, 939, 1100)};
	const std::string early = verdict(b, running());
	ck_assert_msg(refused_with(early, "epoch 1's start 939.0 is before job 7 started"), "%s",
		      early.c_str());

	// After it ended: a checkpoint counts only while the job ran.
	SlurmJob ended = running();
	ended.state = "COMPLETED";
	ended.end_s = 3000;
	b.epochs.clear();
	b.checkpoints = {checkpoint("save", 1, 3060)};
	ck_assert(accepted(verdict(b, ended)));
	b.checkpoints = {checkpoint("save", 1, 3061)};
	const std::string late = verdict(b, ended);
	ck_assert_msg(refused_with(late, "is after job 7 ended (Slurm: COMPLETED, end 3000.0)"), "%s",
		      late.c_str());

	// A job that never started has nothing to report; a pending (requeued) one only its past.
	SlurmJob never = running();
	never.state = "CANCELLED";
	never.start_s = 0;
	never.nodes.clear();
	ck_assert(refused_with(verdict(b, never), "has not started"));
	SlurmJob requeued = running();
	requeued.state = "PENDING";
	requeued.nodes.clear();
	b.checkpoints = {checkpoint("save", 1, 4000)};
	ck_assert(accepted(verdict(b, requeued)));
	// Requeued at 3000: its last run's records come up to 3060, no later; an end in the future is
	// the backfill's estimate: only the future bounds them then.
	requeued.end_s = 3000;
	b.checkpoints = {checkpoint("save", 1, 3060)};
	ck_assert(accepted(verdict(b, requeued)));
	b.checkpoints = {checkpoint("save", 1, 3061)};
	ck_assert(refused_with(verdict(b, requeued),
			       "is after job 7's last run ended (Slurm: PENDING, end 3000.0)"));
	requeued.end_s = 9000;
	ck_assert(accepted(verdict(b, requeued)));
}
END_TEST

START_TEST(the_node_is_one_the_job_holds)
{
	Batch b = batch("n2");
	b.epochs = {epoch(1, 1000, 1100)};
	ck_assert(accepted(verdict(b, running())));
	b.node = "n3";
	const std::string v = verdict(b, running());
	ck_assert_msg(refused_with(v, "node n3 is not one of job 7's nodes"), "%s", v.c_str());
	// Slurm did not say which nodes: not checked.
	SlurmJob unknown = running();
	unknown.nodes.clear();
	ck_assert(accepted(verdict(b, unknown)));
	// Nor more GPUs than Slurm allocated (2): 2 is fine, 8 is not, the job record's too.
	SlurmJob two = running();
	two.gpus = 2;
	b.node = "n1";
	b.epochs = {epoch(1, 1000, 1100)};
	b.epochs[0].gpus = 2;
	ck_assert(accepted(verdict(b, two)));
	b.epochs[0].gpus = 8;
	const std::string gpus = verdict(b, two);
	ck_assert_msg(refused_with(gpus, "epoch 1 claims 8 GPUs; job 7 holds 2 (Slurm)"), "%s", gpus.c_str());
	b.epochs.clear();
	b.job = JobRecord();
	b.job->gpus = 4;
	b.job->start_s = 1000;
	ck_assert(refused_with(verdict(b, two), "the job record claims 4 GPUs; job 7 holds 2"));
}
END_TEST

START_TEST(progress_is_no_faster_than_plausible)
{
	const JobProfile rec = ten_epochs();
	Batch b = batch();
	// A save holds at most one epoch more than reported: 11 after epoch 10, not 11.5, never 90.
	b.checkpoints = {checkpoint("save", 11, 2050)};
	ck_assert(accepted(verdict(b, running(), &rec)));
	b.checkpoints = {checkpoint("save", 11.5, 2050)};
	ck_assert(refused_with(verdict(b, running(), &rec),
			       "the save at epoch 11.5 is ahead of job 7's progress"));
	b.checkpoints = {checkpoint("save", 90, 2050)};
	ck_assert(refused_with(verdict(b, running(), &rec), "its last epoch reported is 10"));
	// Its epochs in the same batch count: epochs 11 and 12, then a save at 13.
	b.epochs = {epoch(11, 2000, 2100), epoch(12, 2100, 2200)};
	b.checkpoints = {checkpoint("save", 13, 2250)};
	ck_assert(accepted(verdict(b, running(), &rec)));
	// A load resumes from at most what was saved or reported (+1).
	b.epochs.clear();
	b.checkpoints = {checkpoint("load", 11, 2050)};
	ck_assert(accepted(verdict(b, running(), &rec)));
	b.checkpoints = {checkpoint("load", 11.5, 2050)};
	ck_assert(refused_with(verdict(b, running(), &rec), "the load at epoch 11.5 is ahead"));

	// Nor do epoch numbers jump: epoch 89 right after 10 would make a save at 90 look fine.
	b.checkpoints.clear();
	b.epochs = {epoch(89, 2000, 2100)};
	ck_assert(refused_with(verdict(b, running(), &rec), "epoch 89 follows no epoch 88 of job 7"));
	b.checkpoints = {checkpoint("save", 90, 2101)};
	ck_assert(!verdict(b, running(), &rec).empty());
	// Unless the run resumed past it: a restart that loads epoch 11 (a save that never reached the
	// DB, one past the last recorded) goes on at 12.
	Batch resume = batch("n1", 1);
	resume.checkpoints = {checkpoint("load", 11, 2500)};
	resume.epochs = {epoch(12, 2500, 2600, 1)};
	ck_assert(accepted(verdict(resume, running(), &rec)));
	resume.checkpoints = {checkpoint("load", 10, 2500)};
	resume.epochs = {epoch(12, 2500, 2600, 1)};
	ck_assert(refused_with(verdict(resume, running(), &rec), "epoch 12 follows no epoch 11"));

	// Epochs do not overlap: epoch 11 may start at 2000 - 60, not before.
	b.checkpoints.clear();
	b.epochs = {epoch(11, 1940, 2100)};
	ck_assert(accepted(verdict(b, running(), &rec)));
	b.epochs = {epoch(11, 1939, 2100)};
	ck_assert(refused_with(verdict(b, running(), &rec),
			       "epoch 11 starts at 1939.0, before epoch 10 ended (2000.0)"));
	b.epochs = {epoch(1, 1000, 1100), epoch(2, 1000, 1100)};
	ck_assert(refused_with(verdict(b, running()), "epoch 2 starts at 1000.0, before epoch 1 ended"));

	// None shorter than a tenth of the job's first steady epochs (epochs 2-6: 100 GPU-s): 10 s,
	// not 9.
	b.epochs = {epoch(11, 2000, 2010)};
	ck_assert(accepted(verdict(b, running(), &rec)));
	b.epochs = {epoch(11, 2000, 2009)};
	ck_assert(
		refused_with(verdict(b, running(), &rec),
			     "epoch 11 took 9.0 s on 1 GPU(s), under a tenth of job 7's first steady epochs "
			     "(median 100.0 GPU-s)"));
	// In GPU-seconds: on 8 GPUs an epoch may be 8 times quicker (12.5 s: 100 GPU-s), not 80 times.
	b.epochs = {epoch(11, 2000, 2012.5)};
	b.epochs[0].gpus = 8;
	ck_assert(accepted(verdict(b, running(), &rec)));
	b.epochs = {epoch(11, 2000, 2001)};
	b.epochs[0].gpus = 8;
	ck_assert(refused_with(verdict(b, running(), &rec), "epoch 11 took 1.0 s on 8 GPU(s)"));
	// Quick epochs accepted (or forged) after the first ones never lower the bound: epochs 11-30 of
	// 10.5 s each recorded, the bound stays 10 s (the first five steady epochs' median).
	JobProfile pulled = rec;
	for (int n = 11; n <= 30; ++n)
		pulled.epochs.push_back(epoch(n, 2000 + 10.5 * (n - 11), 2000 + 10.5 * (n - 10)));
	b.epochs = {epoch(31, 2210, 2219)};
	ck_assert(refused_with(verdict(b, running(), &pulled), "(median 100.0 GPU-s)"));
	// But a restart's first epoch may be the rest of one: any length; its second may not.
	Batch r = batch("n1", 1);
	r.epochs = {epoch(11, 2500, 2505, 1)};
	ck_assert(accepted(verdict(r, running(), &rec)));
	r.epochs = {epoch(11, 2500, 2505, 1), epoch(12, 2505, 2510, 1)};
	ck_assert(refused_with(verdict(r, running(), &rec), "epoch 12 took 5.0 s"));
	// Warm-ups do not count, and two steady epochs are needed: epochs 1 (a 500 s warm-up) and 2
	// give no median yet, so a quick epoch 3 is fine; with epoch 3 recorded, the median is 100 s.
	JobProfile young;
	young.epochs = {epoch(1, 1000, 1500), epoch(2, 1500, 1600)};
	b.epochs = {epoch(3, 1600, 1601)};
	ck_assert(accepted(verdict(b, running(), &young)));
	young.epochs.push_back(epoch(3, 1600, 1700));
	b.epochs = {epoch(4, 1700, 1701)};
	ck_assert(refused_with(verdict(b, running(), &young), "first steady epochs (median 100.0 GPU-s)"));
}
END_TEST

// A job too young for a reference of its own (fewer than two steady epochs): other users' jobs of
// its model bound it, else (no other user ran it) the model's profile, else nothing.
START_TEST(a_young_job_is_held_to_its_model)
{
	auto job_of = [](const std::string& user, double epoch_s) {
		JobProfile p;
		p.job.user = user;
		for (int n = 1; n <= 4; ++n)
			p.epochs.push_back(epoch(n, 1000 + epoch_s * (n - 1), 1000 + epoch_s * n));
		return p;
	};
	// alice ran the model twice (100 GPU-s an epoch), bob once (300): the median over other users'.
	const std::vector<JobProfile> history = {job_of("alice", 100), job_of("alice", 100),
						 job_of("bob", 300)};
	std::string what;
	ck_assert_double_eq_tol(model_reference_gpu_s(history, "mallory", 60, &what), 100, 1e-9);
	ck_assert_str_eq(what.c_str(), "other users' jobs of its model");
	// For alice, only bob's job is another user's.
	ck_assert_double_eq_tol(model_reference_gpu_s(history, "alice", 60, &what), 300, 1e-9);
	// A model nobody else ran: its profile (60 GPU-s), else no bound at all.
	ck_assert_double_eq_tol(model_reference_gpu_s({job_of("mallory", 1)}, "mallory", 60, &what), 60,
				1e-9);
	ck_assert_str_eq(what.c_str(), "its model's profile");
	ck_assert_double_eq_tol(model_reference_gpu_s({}, "mallory", 0, &what), 0, 1e-9);

	// A new job's second epoch on 1 GPU: at least a twentieth of the reference (100: 5 s; 60: 3 s).
	// Its first (a warm-up) may be any length.
	Batch b = batch();
	b.epochs = {epoch(1, 1000, 1000.5), epoch(2, 1000.5, 1005.5)};
	Status st =
		check_claims(b, running(), nullptr, kNow, kClockSkewS, 100, "other users' jobs of its model");
	ck_assert_msg(st.is_ok(), "%s", st.message().c_str());
	b.epochs = {epoch(1, 1000, 1000.5), epoch(2, 1000.5, 1005)};
	st = check_claims(b, running(), nullptr, kNow, kClockSkewS, 100, "other users' jobs of its model");
	ck_assert(!st.is_ok() &&
		  refused_with(st.message(), "under a twentieth of other users' jobs of its model"));
	b.epochs = {epoch(1, 1000, 1000.5), epoch(2, 1000.5, 1003.5)};
	st = check_claims(b, running(), nullptr, kNow, kClockSkewS, 60, "its model's profile");
	ck_assert_msg(st.is_ok(), "%s", st.message().c_str());
	b.epochs = {epoch(1, 1000, 1000.5), epoch(2, 1000.5, 1003.4)};
	st = check_claims(b, running(), nullptr, kNow, kClockSkewS, 60, "its model's profile");
	ck_assert(!st.is_ok() &&
		  refused_with(st.message(), "under a twentieth of its model's profile (60.0 GPU-s)"));
	// Without any reference the quick epoch passes: what --profiles closes (dlsched-ingestd(8)).
	st = check_claims(b, running(), nullptr, kNow, kClockSkewS, 0);
	ck_assert(st.is_ok());
}
END_TEST

START_TEST(node_lists_expand)
{
	struct Case {
		const char* list;
		bool ok;
		std::vector<std::string> nodes;
	} cases[] = {
		{"n1", true, {"n1"}},
		{"n[1-3,05]", true, {"n1", "n2", "n3", "n05"}},
		{"a1,b[2-3]", true, {"a1", "b2", "b3"}},
		{"", true, {}},
		{"n[1-", false, {}},
		{"n[3-1]", false, {}},
	};
	for (const Case& c : cases) {
		std::vector<std::string> got;
		ck_assert_msg(expand_node_list(c.list, got) == c.ok, "%s", c.list);
		if (c.ok)
			ck_assert_msg(got == c.nodes, "%s", c.list);
	}
}
END_TEST

int main()
{
	Suite* s = suite_create("claims");
	TCase* tc = tcase_create("claims");
	tcase_add_test(tc, times_lie_within_the_run);
	tcase_add_test(tc, the_node_is_one_the_job_holds);
	tcase_add_test(tc, progress_is_no_faster_than_plausible);
	tcase_add_test(tc, a_young_job_is_held_to_its_model);
	tcase_add_test(tc, node_lists_expand);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
