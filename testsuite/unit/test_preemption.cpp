// Preemption by priority class on hand-computed cases: the PickyMan-style `overhead` policy, Slurm's
// `preempt-qos` order, and the overhead estimator both hosts use (predict/overhead.h). Each case
// says why the expected victims are the right ones.
#include <fstream>

#include <check.h>

#include <cmath>
#include <cstdio>

#include "check_main.h"

#include "predict/overhead.h"
#include "predict/profile_reader.h"
#include "temp_path.h"
#include "view_builder.h"

using namespace dlsched;
using namespace dlsched::test;

namespace {

// A running job of the normal class whose stop would take `to_safe` s to its safe point, then 1 s to
// write; resuming 10 s. 100 epochs of 60 s: it never ends first in these cases.
Job& victim(World& w, JobId id, std::vector<NodeShare> where, double to_safe)
{
	Job& j = w.running(id, 0, std::move(where), 100);
	j.qos = "normal";
	j.preempt_cost.to_safe_point = to_safe;
	j.preempt_cost.checkpoint_write = 1;
	j.preempt_cost.resume = 10;
	j.preempt_cost.since_checkpoint = 60 - to_safe;
	return j;
}

// A new profile DB at `path` holding job 7 of cluster "c" with one checkpoint save (epoch, time).
void write_saved_job(const std::string& path, double epoch, double at_s)
{
	auto db = db::ProfileDb::open_writer(path);
	ck_assert(db.is_ok());
	db::JobRecord r;
	r.cluster = "c", r.job_id = 7, r.model = "m", r.gpus = 1, r.epochs_total = 10;
	ck_assert(db->put_job(r).is_ok());
	db::CheckpointRecord c;
	c.cluster = "c", c.job_id = 7, c.run = 0, c.epoch = epoch, c.kind = "save", c.bytes = 1000,
	c.seconds = 1;
	c.at_s = at_s;
	ck_assert(db->add_checkpoint(c).is_ok());
}

Job& high(World& w, JobId id, int gpus)
{
	Job& j = w.pending(id, 5, gpus);
	j.qos = "high";
	return j;
}

}  // namespace

START_TEST(overhead_stops_the_job_nearest_its_safe_point)
{
	World w({4});
	victim(w, 1, {{0, 1}}, 100);
	victim(w, 2, {{0, 1}}, 10);  // the soonest: 10 + 1 s
	victim(w, 3, {{0, 1}}, 50);
	victim(w, 4, {{0, 1}}, 30);
	high(w, 9, 1);
	expect_decisions(w, "pickyman", "requeue 2; prio 9=1");
}
END_TEST

START_TEST(overhead_prefers_the_oldest_among_victims_about_as_soon)
{
	World w({3});
	// Delays 11 s (job 1, submitted at 50), 12 s (job 2, submitted at 10) and 30 s (job 3, at 0).
	// 11 and 12 s are within one 5-s step (PreemptDelayTolerance): the older job 2 is stopped; job
	// 3, the oldest, is a step later. With no tolerance, the soonest, job 1.
	victim(w, 1, {{0, 1}}, 10).submit_time = 50;
	victim(w, 2, {{0, 1}}, 11).submit_time = 10;
	victim(w, 3, {{0, 1}}, 29).submit_time = 0;
	high(w, 9, 1).submit_time = 60;
	expect_decisions(w, "pickyman", "requeue 2; prio 9=1");
	expect_decisions(w, "pickyman", "requeue 1; prio 9=1", {{"PreemptDelayTolerance", "0"}});
}
END_TEST

START_TEST(overhead_frees_a_whole_node_at_its_latest_victim)
{
	World w({2, 2});
	// A 2-GPU job needs one node. n0: 20 s and 90 s -> the node frees at 91 s; n1: 40 s and 45 s
	// -> at 46 s. n1 wins although job 1 alone is the soonest.
	victim(w, 1, {{0, 1}}, 20);
	victim(w, 2, {{0, 1}}, 90);
	victim(w, 3, {{1, 1}}, 40);
	victim(w, 4, {{1, 1}}, 45);
	high(w, 9, 2);
	expect_decisions(w, "pickyman", "requeue 3; requeue 4; prio 9=1");
}
END_TEST

START_TEST(overhead_waits_for_a_job_that_ends_first)
{
	World w({2});
	victim(w, 1, {{0, 1}}, 100);
	// Job 2 has 1 epoch of 60 s left on 1 GPU (60 s) but is 100 s from a safe point: waiting for
	// it is sooner than stopping either job. Nothing is requeued.
	Job& ending = victim(w, 2, {{0, 1}}, 100);
	ending.epochs_done = 99;
	high(w, 9, 1);
	expect_decisions(w, "pickyman", "prio 9=1");
}
END_TEST

START_TEST(overhead_never_touches_jobs_that_cannot_be_requeued_or_are_stopping)
{
	World w({4});
	victim(w, 1, {{0, 1}}, 5).requeueable = false;          // the soonest, but --no-requeue
	victim(w, 2, {{0, 1}}, 8).checkpoint_requested_at = 0;  // stopping already: its GPU is freeing
	victim(w, 3, {{0, 1}}, 20);
	victim(w, 4, {{0, 1}}, 30);
	high(w, 9, 2);
	// Job 9 needs 2: job 2's freeing GPU and one more, the soonest of 3 and 4.
	expect_decisions(w, "pickyman", "requeue 3; prio 9=1");
}
END_TEST

START_TEST(overhead_stops_nothing_when_nothing_makes_room)
{
	World w({4});
	victim(w, 1, {{0, 2}}, 5);
	Job& other = w.running(2, 0, {{0, 2}});
	other.qos = "high";  // its own class: not a candidate
	high(w, 9, 4);       // needs all 4 GPUs, only 2 can be freed
	expect_decisions(w, "pickyman", "prio 9=1");
}
END_TEST

START_TEST(overhead_breaks_ties_by_job_id_and_respects_the_grace)
{
	World w({2});
	victim(w, 7, {{0, 1}}, 30);
	victim(w, 4, {{0, 1}}, 30);
	high(w, 9, 1);
	// Same delay and loss: the lower id.
	expect_decisions(w, "pickyman", "requeue 4; prio 9=1");
	// With a grace of 20 s neither reaches its safe point: both would be requeued at 20 s, losing
	// what they trained since their checkpoints (30 s each): still a tie, still job 4, and the
	// action carries the grace.
	Decisions d = make_scheduler("pickyman", {{"PreemptGrace", "20"}})->decide(w.view());
	ck_assert_uint_eq(d.actions.size(), 2);
	ck_assert_uint_eq(d.actions[0].job, 4);
	ck_assert_double_eq(d.actions[0].grace, 20);
}
END_TEST

START_TEST(preempt_qos_takes_out_the_fewest_nodes_then_the_oldest)
{
	World w({3, 3});
	// n0: job 1 (1 of its 2 GPUs), job 5, one GPU free; n1: job 1, job 3, job 6.
	victim(w, 1, {{0, 1}, {1, 1}}, 10);
	victim(w, 5, {{0, 1}}, 99);
	victim(w, 3, {{1, 1}}, 50);
	victim(w, 6, {{1, 1}}, 50);
	high(w, 9, 2);  // fits one node: pack keeps it on one
	// Slurm's order: one-node jobs first, by id (3, 5, 6), then the two-node job 1. Taking out 3
	// leaves one GPU free on each node: no fit; taking out 5 frees n0. The victims are those taken
	// out that share a node with the placement (n0): job 5 only - job 3 (n1) is spared. Reordering
	// (5 first) finds the same.
	expect_decisions(w, "preempt-qos", "requeue 5; prio 9=1");
	// The overhead policy stops job 1 instead: its safe point is the soonest (11 s), and it frees
	// the second GPU on n0.
	expect_decisions(w, "pickyman", "requeue 1; prio 9=1");
}
END_TEST

START_TEST(high_class_jobs_go_first_and_lower_classes_never_preempt)
{
	World w({2});
	victim(w, 1, {{0, 1}}, 10);
	victim(w, 2, {{0, 1}}, 10);
	Job& n = w.pending(3, 1, 1);
	n.qos = "normal";
	high(w, 9, 1);  // submitted after job 3, ahead of it by class
	expect_decisions(w, "pickyman", "requeue 1; prio 9=2; prio 3=1");
	// Without a high job nobody preempts.
	World w2({2});
	victim(w2, 1, {{0, 1}}, 10);
	victim(w2, 2, {{0, 1}}, 10);
	w2.pending(3, 1, 1).qos = "normal";
	expect_decisions(w2, "pickyman", "prio 3=1");
}
END_TEST

START_TEST(estimated_cost_from_the_profile)
{
	ModelCatalog models;
	ModelProfile p;
	p.name = "m";
	p.points = {{1, 1, 1}, {2, 1, 2}};
	p.checkpoint_mb = 500;
	const int m = models.add(p);
	Job j;
	j.model = m;
	j.state = JobState::kRunning;
	j.gpus_allocated = 2;
	j.placement = {{0, 2}};
	j.epochs_total = 10;
	j.epochs_done = 2.25;
	j.epoch_time_1gpu = 200;    // 100 s per epoch on its 2 GPUs
	predict::OverheadParams o;  // 500 MB/s both ways, warm-up 0.1 of an epoch, epoch safe points
	PreemptionCost c = predict::profile_cost(j, models, o);
	ck_assert_double_eq_tol(c.to_safe_point, 75, 1e-9);     // the rest of epoch 3
	ck_assert_double_eq_tol(c.since_checkpoint, 25, 1e-9);  // since the boundary at 2
	ck_assert_double_eq_tol(c.checkpoint_write, 1, 1e-9);   // 500 MB at 500 MB/s
	ck_assert_double_eq_tol(c.resume, 11, 1e-9);            // 1 s read + 10 s warm-up
	// Near the end: the safe point is the job's end.
	j.epochs_done = 9.9;
	ck_assert_double_eq_tol(predict::profile_cost(j, models, o).to_safe_point, 10, 1e-9);
	// Iteration safe points: it stops at once.
	o.epoch_safe_points = false;
	ck_assert_double_eq_tol(predict::profile_cost(j, models, o).to_safe_point, 0, 1e-9);
	// WarmupSeconds=: a new process's start, the same for every epoch length.
	o.warmup_seconds = 15;
	ck_assert_double_eq_tol(predict::profile_cost(j, models, o).resume, 1 + 10 + 15, 1e-9);
	j.epoch_time_1gpu = 2000;  // 1,000 s per epoch: the share grows, the start does not
	ck_assert_double_eq_tol(predict::profile_cost(j, models, o).resume, 1 + 100 + 15, 1e-9);
}
END_TEST

START_TEST(estimated_cost_from_measurements)
{
	ModelCatalog models;
	ModelProfile p;
	p.name = "m";
	p.points = {{1, 1, 1}, {2, 1, 2}};
	p.checkpoint_mb = 500;
	const int m = models.add(p);
	Job j;
	j.model = m;
	j.state = JobState::kRunning;
	j.gpus_allocated = 1;
	j.placement = {{0, 1}};
	j.epochs_total = 10;
	j.epochs_done = 4;
	j.epoch_time_1gpu = 500;  // the profile's guess, overridden by the measured 100 s
	predict::JobMeasurements own;
	own.runs.push_back({1, 1, {100, 102, 98}});  // steady epochs: mean 100, sd 2
	own.saves = {{1000000000, 2}};               // 1 GB in 2 s
	own.loads = {{1000000000, 4}};               // 1 GB in 4 s
	own.warmups = {{120, 100}};                  // first epoch 20% slower
	predict::JobEvidence e;
	e.own = &own;
	e.last_epoch_end_s = 1000;
	e.last_checkpoint_s = 900;
	e.checkpoint_bytes = 500000000;
	const PreemptionCost c = predict::measured_cost(j, models, predict::OverheadParams(), e, 1030);
	ck_assert(c.measured);
	// 30 s into a 100-s epoch: 70 s to its end; 130 s since the checkpoint, but an epoch boundary
	// (a checkpoint at each) was 30 s ago.
	ck_assert_double_eq_tol(c.to_safe_point, 70, 1e-9);
	ck_assert_double_eq_tol(c.since_checkpoint, 30, 1e-9);
	ck_assert_double_eq_tol(c.checkpoint_write, 1, 1e-9);  // 0.5 GB at 2 s/GB
	ck_assert_double_eq_tol(c.resume, 2 + 20, 1e-9);       // read 0.5 GB at 4 s/GB, 20% of 100 s
	ck_assert(c.stddev > 0);
	// A job (or model) that saved at fractions of an epoch stops at its next iteration: at once,
	// while no preemption says how long the signal and the iteration take.
	e.fractional_saves = true;
	ck_assert_double_eq_tol(
		predict::measured_cost(j, models, predict::OverheadParams(), e, 1030).to_safe_point, 0, 1e-9);
	// The cluster's past preemptions: 0.3 s on average from the request to the save.
	predict::History cluster;
	cluster.stop_waits = {0.2, 0.4};
	e.cluster = &cluster;
	ck_assert_double_eq_tol(
		predict::measured_cost(j, models, predict::OverheadParams(), e, 1030).to_safe_point, 0.3,
		1e-9);
	// Its model's come first (the iteration is the model's): 0.6 s.
	predict::History h;
	h.stop_waits = {0.5, 0.7};
	e.model = &h;
	PreemptionCost w = predict::measured_cost(j, models, predict::OverheadParams(), e, 1030);
	ck_assert_double_eq_tol(w.to_safe_point, 0.6, 1e-9);
	// With its own: pooled with its model's.
	own.stop_waits = {1.0};
	w = predict::measured_cost(j, models, predict::OverheadParams(), e, 1030);
	ck_assert_double_eq_tol(w.to_safe_point, (0.5 + 0.7 + 1.0) / 3, 1e-9);
	// Epoch safe points: the rest of the epoch, whatever the waits.
	e.fractional_saves = false;
	ck_assert_double_eq_tol(
		predict::measured_cost(j, models, predict::OverheadParams(), e, 1030).to_safe_point, 70,
		1e-9);
	// Asked 0.4 s into the 1-s save of the epoch that ended at t=1000: that save answers in 0.6 s.
	e.save_pending = true;
	w = predict::measured_cost(j, models, predict::OverheadParams(), e, 1000.4);
	ck_assert_double_eq_tol(w.to_safe_point, 0, 1e-9);
	ck_assert_double_eq_tol(w.checkpoint_write, 0.6, 1e-9);
	ck_assert_double_eq_tol(w.since_checkpoint, 0, 1e-9);
	// Past the save's time, it is not being written (any more): the epoch's rest and a new save.
	w = predict::measured_cost(j, models, predict::OverheadParams(), e, 1030);
	ck_assert_double_eq_tol(w.to_safe_point, 70, 1e-9);
	ck_assert_double_eq_tol(w.checkpoint_write, 1, 1e-9);
}
END_TEST

START_TEST(no_warm_up_predicted_from_noise)
{
	// First epochs as often 3% faster as 3% slower than the steady ones: no warm-up, only the read.
	ModelCatalog models;
	ModelProfile p;
	p.name = "m";
	p.points = {{1, 1, 1}};
	p.checkpoint_mb = 500;
	const int m = models.add(p);
	Job j;
	j.model = m;
	j.state = JobState::kRunning;
	j.gpus_allocated = 1;
	j.placement = {{0, 1}};
	j.epochs_total = 10;
	j.epochs_done = 4;
	j.epoch_time_1gpu = 100;
	predict::JobMeasurements own;
	own.runs.push_back({1, 1, {100, 100, 100}});
	own.loads = {{1000000000, 4}};
	own.warmups = {{103, 100}, {97, 100}, {103, 100}, {97, 100}};
	predict::JobEvidence e;
	e.own = &own;
	e.checkpoint_bytes = 500000000;
	ck_assert_double_eq_tol(predict::measured_cost(j, models, predict::OverheadParams(), e, 1030).resume,
				2, 1e-9);
	// A real warm-up: 10% and 14% of an epoch, 12 s on average.
	own.warmups = {{110, 100}, {114, 100}};
	ck_assert_double_eq_tol(predict::measured_cost(j, models, predict::OverheadParams(), e, 1030).resume,
				2 + 12, 1e-9);
	// WarmupSeconds= comes before the first epoch, where the measured warm-ups begin: it adds.
	predict::OverheadParams start;
	start.warmup_seconds = 8;
	ck_assert_double_eq_tol(predict::measured_cost(j, models, start, e, 1030).resume, 2 + 12 + 8, 1e-9);

	// Nothing measured for it or its model: the cluster's storage and warm-ups (as a share of an
	// epoch: 30% of a 50-s epoch is 15 s, here 30 s), not the configured 500 MB/s and 10%.
	own.loads.clear();
	own.warmups.clear();
	predict::History cluster;
	cluster.saves = {{1000000000, 8}};  // 1 GB in 8 s
	cluster.loads = {{1000000000, 6}};  // 1 GB in 6 s
	cluster.warmups = {{65, 50}};
	e.cluster = &cluster;
	const PreemptionCost c = predict::measured_cost(j, models, predict::OverheadParams(), e, 1030);
	ck_assert_double_eq_tol(c.checkpoint_write, 4, 1e-9);
	ck_assert_double_eq_tol(c.resume, 3 + 30, 1e-9);
	// Its own come first.
	own.saves = {{1000000000, 2}};
	ck_assert_double_eq_tol(
		predict::measured_cost(j, models, predict::OverheadParams(), e, 1030).checkpoint_write, 1,
		1e-9);
}
END_TEST

START_TEST(reader_fills_running_jobs_from_the_profile_db)
{
	ModelCatalog models;
	ModelProfile p;
	p.name = "m";
	p.points = {{1, 1, 1}, {2, 1, 2}};
	p.checkpoint_mb = 500;
	const int m = models.add(p);
	const std::string path = test::temp_path("dlsched-preemption", "profiles.db");
	{
		auto db = db::ProfileDb::open_writer(path);
		ck_assert(db.is_ok());
		db::JobRecord r;
		r.cluster = "c";
		r.job_id = 7;
		r.model = "m";
		r.gpus = 1;
		r.epochs_total = 10;
		ck_assert(db->put_job(r).is_ok());
		// Epochs 1-4 of run 0, 110 (warm-up), 100, 100, 100 s ending at t=1410; a save at epoch 4.
		double t = 1000;
		for (int e = 1; e <= 4; ++e) {
			db::EpochRecord er;
			er.cluster = "c", er.job_id = 7, er.run = 0, er.epoch = e, er.gpus = 1;
			er.start_s = t;
			er.end_s = t += e == 1 ? 110 : 100;
			ck_assert(db->add_epoch(er).is_ok());
		}
		db::CheckpointRecord c;
		c.cluster = "c", c.job_id = 7, c.run = 0, c.epoch = 4, c.kind = "save", c.bytes = 1000000000,
		c.seconds = 2, c.at_s = 1412;
		ck_assert(db->add_checkpoint(c).is_ok());
	}
	predict::ProfileReader reader(path, "c", 60);
	Job j;
	j.id = 7;
	j.model = m;
	j.state = JobState::kRunning;
	j.gpus_allocated = 1;
	j.placement = {{0, 1}};
	j.epochs_total = 10;
	j.epoch_time_1gpu = 300;  // the user's claim: the measured 100 s wins
	j.start_time = 1000;
	reader.refresh({&j}, models, 1450);
	ck_assert_str_eq(reader.status().c_str(), "");
	ck_assert(reader.apply(j, models, predict::OverheadParams(), 1450, true));
	ck_assert_double_eq_tol(j.epoch_time_1gpu, 100, 1e-9);
	// 40 s into epoch 5: 4.4 epochs done, 60 s to its end; writing its 1 GB checkpoint at the
	// measured 2 s per GB: 2 s; resume: reading 1 GB at the configured 500 MB/s (no load measured),
	// 2 s, + its measured warm-up, 10% of 100 s.
	ck_assert_double_eq_tol(j.epochs_done, 4.4, 1e-9);
	ck_assert_double_eq_tol(j.preempt_cost.to_safe_point, 60, 1e-9);
	ck_assert_double_eq_tol(j.preempt_cost.checkpoint_write, 2, 1e-9);
	ck_assert_double_eq_tol(j.preempt_cost.resume, 12, 1e-9);
	ck_assert_double_eq_tol(j.preempt_cost.since_checkpoint, 38, 1e-9);  // saved at 1412
	// The checkpoint report the two-step preemption waits for.
	ck_assert_double_eq(reader.checkpoint_since(7, 1400, 1450), 1412);
	ck_assert_double_eq(reader.checkpoint_since(7, 1413, 1450), -1);
	ck_assert_double_eq(reader.checkpoint_since(8, 0, 1450), -1);

	// A corrupt database: no error thrown, the reason kept, the profile's estimate used.
	{
		FILE* f = std::fopen(path.c_str(), "r+b");
		ck_assert_ptr_nonnull(f);
		std::fputs("this is not an SQLite database at all", f);
		std::fclose(f);
	}
	predict::ProfileReader bad(path, "c", 60);
	Job k = j;
	k.epoch_time_1gpu = 300;
	k.epochs_done = 4.5;
	bad.refresh({&k}, models, 1450);
	ck_assert(!bad.status().empty());
	ck_assert(!bad.apply(k, models, predict::OverheadParams(), 1450, true));
	ck_assert_double_eq_tol(k.preempt_cost.to_safe_point, 150, 1e-9);  // half of a 300-s epoch
	ck_assert_double_eq(bad.checkpoint_since(7, 0, 1450), -1);
	// No database at all: silent, the profile.
	predict::ProfileReader none("", "c", 60);
	none.refresh({&k}, models, 1450);
	ck_assert_str_eq(none.status().c_str(), "");
	// A database not created yet is looked for every cycle, not every ProfileRefresh seconds.
	const std::string later = test::temp_path("dlsched-preemption", "later.db");
	std::remove(later.c_str());
	predict::ProfileReader waiting(later, "c", 60);
	waiting.refresh({&k}, models, 1450);
	ck_assert(waiting.status().find("looked for every cycle") != std::string::npos);
	ck_assert(db::ProfileDb::open_writer(later).is_ok());
	waiting.refresh({&k}, models, 1451);
	ck_assert_str_eq(waiting.status().c_str(), "");
	std::remove(later.c_str());
	// A damaged one is tried again after ProfileRefresh seconds, a stopping job's report too (it
	// is asked once a second per stopping job: each try read the whole file): repaired, the save is
	// seen when the back-off ends.
	{
		FILE* f = std::fopen(later.c_str(), "wb");
		ck_assert_ptr_nonnull(f);
		std::fputs("this is not an SQLite database at all", f);
		std::fclose(f);
	}
	predict::ProfileReader damaged(later, "c", 60);
	damaged.refresh({&k}, models, 1450);
	ck_assert(damaged.status().find("ProfileRefresh") != std::string::npos);
	std::remove(later.c_str());
	write_saved_job(later, 4.5, 1450.5);
	ck_assert_double_eq(damaged.checkpoint_since(7, 1450, 1451), -1);
	ck_assert_double_eq(damaged.checkpoint_since(7, 1450, 1510), 1450.5);
	std::remove(later.c_str());
}
END_TEST

// Issue 27 item 3: priority classes against deadline work. A high job needing all 8 GPUs, one 1-GPU
// job of the normal class running (100 epochs of 60 s: 6000 s left). The high job runs 10 epochs of
// 60 s at 8 GPUs: 75 s. The running job's stop costs 10 + 1 s (safe point, write) and 10 s to resume:
// stopped for the high job, it loses 11 + 10 + 75 = 96 s against its deadline.
namespace {

Job& deadline_victim(World& w, double slack)
{
	Job& j = victim(w, 1, {{0, 1}}, 10);
	j.deadline = w.now + 6000 + slack;
	return j;
}

std::string reason_of(const Decisions& d, JobId id)
{
	for (const Action& a : d.actions)
		if (a.job == id && a.kind == ActionKind::kAdmission)
			return a.reason;
	return "";
}

}  // namespace

START_TEST(a_high_job_preempts_deadline_work_only_when_its_slack_absorbs_the_delay)
{
	for (const char* preset : {"qos-deadline", "pickyman", "preempt-qos", "srtf", "tiresias-las",
				   "optimus", "mckp", "drf", "aryl", "srtf-gp"}) {
		// No deadline: stopped, under every preset.
		{
			World w({8});
			victim(w, 1, {{0, 1}}, 10);
			high(w, 9, 8);
			const Decisions d = make_scheduler(preset)->decide(w.view());
			ck_assert_msg(render(d).find("requeue 1") != std::string::npos, "%s: %s", preset,
				      render(d).c_str());
		}
		// Slack 1000 s absorbs the 96 s: stopped.
		{
			World w({8});
			deadline_victim(w, 1000);
			high(w, 9, 8);
			const Decisions d = make_scheduler(preset)->decide(w.view());
			ck_assert_msg(render(d).find("requeue 1") != std::string::npos, "%s: %s", preset,
				      render(d).c_str());
		}
		// Slack 50 s does not: it keeps its GPU, and the high job's reason says why it waits.
		{
			World w({8});
			deadline_victim(w, 50);
			high(w, 9, 8);
			const Decisions d = make_scheduler(preset)->decide(w.view());
			ck_assert_msg(render(d).find("requeue 1") == std::string::npos, "%s: %s", preset,
				      render(d).c_str());
			ck_assert_msg(render(d).find("start 9") == std::string::npos, "%s: %s", preset,
				      render(d).c_str());
			const std::string why = reason_of(d, 9);
			ck_assert_msg(why == "waits for deadline work it would make late: job 1 (50 s slack, "
					     "needs 96 s)",
				      "%s: reason \"%s\"", preset, why.c_str());
		}
	}
}
END_TEST

START_TEST(a_preemption_policy_that_would_never_be_consulted_is_refused)
{
	// qos-deadline's allocation is elastic: running jobs are reconsidered by the allocation itself
	// and the Preemption policy is never asked. Setting one is refused, naming the conflict.
	Config c;
	ck_assert(c.set("Policy", "qos-deadline", "dlsched.conf:3").is_ok());
	ck_assert(c.set("PreemptionPolicy", "overhead", "dlsched.conf:4").is_ok());
	PolicyRegistry r;
	register_builtin_policies(r);
	auto s = Scheduler::create(c, r);
	ck_assert(!s.is_ok());
	ck_assert_msg(s.status().message().find("dlsched.conf:4: PreemptionPolicy: ") == 0 &&
			      s.status().message().find("deadline-autoscale") != std::string::npos,
		      "%s", s.status().message().c_str());
	// none is what such presets run with.
	ck_assert(c.set("PreemptionPolicy", "none", "dlsched.conf:4").is_ok());
	ck_assert(Scheduler::create(c, r).is_ok());
}
END_TEST

// Issue 27 item 9: a database that fails is not reopened once a second per stopping job (each
// reopen read every page with PRAGMA quick_check): a stopping job's report waits for the back-off
// (ProfileRefresh, 60 s here) like every other read, and the whole file is checked at the first
// open that succeeds, not at each reconnect.
START_TEST(reader_backs_off_and_checks_the_file_once)
{
	ModelCatalog models;
	const std::string path = test::temp_path("dlsched-preemption", "backoff.db");
	{
		std::ofstream out(path, std::ios::binary);
		out << "not a database, not yet";
		for (int i = 0; i < 4096; ++i)
			out << static_cast<char>((i * 37) & 0xff);
	}
	predict::ProfileReader reader(path, "c", 60);
	reader.refresh({}, models, 1000);
	ck_assert(reader.status().find("not a readable dlsched profile database") != std::string::npos);
	ck_assert_int_eq(reader.quick_checks(), 1);
	// The file is repaired: a stopping job's report at 1001 s still waits for the back-off.
	std::remove(path.c_str());
	write_saved_job(path, 4, 1005);
	for (double now = 1001; now < 1060; now += 1)
		ck_assert_double_eq(reader.checkpoint_since(7, 1000, now), -1);
	ck_assert_int_eq(reader.quick_checks(), 1);
	ck_assert_double_eq(reader.checkpoint_since(7, 1000, 1060), 1005);
	ck_assert_int_eq(reader.quick_checks(), 2);  // the first open that succeeded
	ck_assert_str_eq(reader.status().c_str(), "");
}
END_TEST

// Protected deadline work is pinned only while a higher-class job does not fit on the free GPUs.
// 8 GPUs: deadline job 1 runs on 4 (elastic 1-4; 100 epochs: 1500 s at 4, 3000 s at 2, due in 3200 s:
// it needs 2), high job 2 asks for 2 (1000 epochs: it would hold GPUs 30,000 s, far more than job 1's
// slack: job 1 is protected against it), normal job 3 asks for 4 with a deadline it meets only if it
// starts now (150 s at 4, due in 160 s). Job 2 fits on the 4 free GPUs, so job 1 is not pinned:
// qos-deadline shrinks it to the 2 it needs, and jobs 2 and 3 both start.
START_TEST(protected_deadline_work_is_still_resized_when_the_high_job_fits)
{
	World w({8});
	Job& d = w.running(1, 0, {{0, 4}}, 100);
	d.gpus_min = 1;
	d.gpus_max = 4;
	d.deadline = 3200;
	high(w, 2, 2).epochs_total = 1000;
	Job& urgent = w.pending(3, 1, 4);
	urgent.qos = "normal";
	urgent.deadline = 160;
	const std::string got = render(make_scheduler("qos-deadline")->decide(w.view()));
	ck_assert_msg(got.find("resize 1 [0:2]") != std::string::npos &&
			      got.find("start 2") != std::string::npos &&
			      got.find("start 3") != std::string::npos,
		      "%s", got.c_str());
}
END_TEST

int main()
{
	Suite* s = suite_create("preemption");
	TCase* tc = tcase_create("preemption");
	tcase_add_test(tc, overhead_stops_the_job_nearest_its_safe_point);
	tcase_add_test(tc, overhead_prefers_the_oldest_among_victims_about_as_soon);
	tcase_add_test(tc, overhead_frees_a_whole_node_at_its_latest_victim);
	tcase_add_test(tc, overhead_waits_for_a_job_that_ends_first);
	tcase_add_test(tc, overhead_never_touches_jobs_that_cannot_be_requeued_or_are_stopping);
	tcase_add_test(tc, overhead_stops_nothing_when_nothing_makes_room);
	tcase_add_test(tc, overhead_breaks_ties_by_job_id_and_respects_the_grace);
	tcase_add_test(tc, preempt_qos_takes_out_the_fewest_nodes_then_the_oldest);
	tcase_add_test(tc, high_class_jobs_go_first_and_lower_classes_never_preempt);
	tcase_add_test(tc, a_high_job_preempts_deadline_work_only_when_its_slack_absorbs_the_delay);
	tcase_add_test(tc, a_preemption_policy_that_would_never_be_consulted_is_refused);
	tcase_add_test(tc, protected_deadline_work_is_still_resized_when_the_high_job_fits);
	tcase_add_test(tc, estimated_cost_from_the_profile);
	tcase_add_test(tc, estimated_cost_from_measurements);
	tcase_add_test(tc, no_warm_up_predicted_from_noise);
	tcase_add_test(tc, reader_fills_running_jobs_from_the_profile_db);
	tcase_add_test(tc, reader_backs_off_and_checks_the_file_once);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
