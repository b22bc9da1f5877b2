// Method (doc/man/dlsched-db.1, ACCURACY):
//  - Jobs are taken in the order they started. A job is held out when it completed (state
//    "completed") with all its epochs recorded; it is predicted from the k same-model jobs that
//    started before it (the most recent k), for k = 1, 2, 4, 8, never from itself or later jobs.
//  - Runtime: its training time (the sum of its epochs' times) against predict_runtime() at its
//    epochs, GPUs and nodes.
//  - Suspend: each checkpoint save's time against the bytes at the seconds per byte of all the
//    saves of earlier jobs (any model: they share the storage).
//  - Resume: each restart's checkpoint load time plus its warm-up (what the run's first epoch took
//    beyond its share of a steady epoch: the whole one, or the rest of the one its checkpoint was
//    taken in) against earlier jobs' loads and the warm-up of same-model jobs as a fraction of
//    their steady epoch, times the job's own steady epoch before the restart.
//  - Preemptions the controller carried out (the preemptions table): what it predicted when it sent
//    the checkpoint request against what followed. Suspend: from the request to the end of the
//    checkpoint save that answered it (a save at or after the request, within its grace); resume:
//    the next run's checkpoint load plus its warm-up, measured as above.
//  - Each row: MAPE, and the mean absolute error in seconds (overheads of a few milliseconds, as in
//    a replay compressed 100x, are below the signal's way to the job: percentages say little there).
#include "accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "predict/history.h"
#include "workload/workload.h"

namespace dlsched::db {

namespace {

using predict::ErrorSummary;

struct Held {
	const JobProfile* profile;
	int model;  // in the catalog
	predict::JobMeasurements m;
};

double p90_pct(const std::vector<std::pair<double, double>>& pa)
{
	std::vector<double> e;
	for (const auto& [p, a] : pa)
		if (a > 0)
			e.push_back(100.0 * std::fabs(p - a) / a);
	if (e.empty())
		return 0;
	std::sort(e.begin(), e.end());
	return e[static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(e.size()))) - 1];
}

// The GPUs of a run (its epochs'), else the job's.
int run_gpus(const JobProfile& p, int run)
{
	for (const EpochRecord& e : p.epochs)
		if (e.run == run && e.gpus > 0)
			return e.gpus;
	return p.job.gpus;
}

// The job's measurements from its runs before `run` only (what was known when it restarted).
std::vector<predict::PastJob> runs_before(const JobProfile& p, int run)
{
	JobProfile before = p;
	before.epochs.clear();
	for (const EpochRecord& e : p.epochs)
		if (e.run < run)
			before.epochs.push_back(e);
	return predict::measurements(before).runs;
}

// What a restart cost: its checkpoint load, and what its first epoch took beyond its share of a
// steady epoch (the whole epoch, or the rest of the one the checkpoint was taken in): the warm-up.
// -1 when the run has too few epochs to know its steady one.
double measured_resume(const JobProfile& p, const CheckpointRecord& load)
{
	std::vector<double> run_epochs;
	for (const EpochRecord& e : p.epochs)
		if (e.run == load.run)
			run_epochs.push_back(e.seconds());
	if (run_epochs.size() < 3)
		return -1;
	const predict::Estimate steady =
		predict::steady_epoch_time({run_epochs.begin() + 1, run_epochs.end()});
	const double share = std::ceil(load.epoch - 1e-6) - load.epoch;
	return load.seconds + run_epochs.front() - (share < 1e-6 ? 1.0 : share) * steady.value;
}

// Mean absolute error in seconds.
double mae_s(const std::vector<std::pair<double, double>>& pa)
{
	double sum = 0;
	std::size_t n = 0;
	for (const auto& [p, a] : pa)
		if (a > 0) {
			sum += std::fabs(p - a);
			++n;
		}
	return n ? sum / static_cast<double>(n) : 0;
}

bool complete(const JobProfile& p)
{
	if (p.job.state != "completed" || p.epochs.empty())
		return false;
	return p.job.epochs_total <= 0 ||
	       static_cast<double>(p.epochs.back().epoch) >= std::ceil(p.job.epochs_total - 1e-9);
}

}  // namespace

int run_accuracy(ProfileDb& db, const std::string& profiles_dir, bool json, bool each)
{
	auto catalog = load_model_catalog(profiles_dir);
	if (!catalog.is_ok()) {
		std::fprintf(stderr, "dlsched-db: %s\n", catalog.status().message().c_str());
		return 1;
	}
	auto models = db.models();
	if (!models.is_ok()) {
		std::fprintf(stderr, "dlsched-db: %s\n", models.status().message().c_str());
		return 1;
	}
	std::vector<JobProfile> all;
	std::vector<std::string> unknown;
	for (const auto& [name, n] : *models) {
		if (catalog->find(name) < 0) {
			unknown.push_back(name.empty() ? "(none)" : name);
			continue;
		}
		auto h = db.model_history(name);
		if (!h.is_ok()) {
			std::fprintf(stderr, "dlsched-db: %s\n", h.status().message().c_str());
			return 1;
		}
		for (JobProfile& p : *h)
			all.push_back(std::move(p));
	}
	std::sort(all.begin(), all.end(), [](const JobProfile& a, const JobProfile& b) {
		const double sa = a.epochs.empty() ? a.job.start_s : a.epochs.front().start_s;
		const double sb = b.epochs.empty() ? b.job.start_s : b.epochs.front().start_s;
		return sa != sb ? sa < sb : a.job.job_id < b.job.job_id;
	});
	std::vector<Held> jobs;
	for (const JobProfile& p : all)
		jobs.push_back({&p, catalog->find(p.job.model), predict::measurements(p)});

	const int ks[] = {1, 2, 4, 8};
	std::map<int, std::vector<std::pair<double, double>>> runtime;
	std::vector<std::pair<double, double>> suspend, resume;
	for (std::size_t i = 0; i < jobs.size(); ++i) {
		const Held& j = jobs[i];
		const JobRecord& r = j.profile->job;
		// Same-model jobs before this one, most recent first; all earlier jobs for the storage.
		std::vector<predict::JobMeasurements> same;
		std::vector<predict::JobMeasurements> earlier;
		for (std::size_t b = i; b-- > 0;) {
			earlier.push_back(jobs[b].m);
			if (jobs[b].model == j.model && !jobs[b].m.runs.empty())
				same.push_back(jobs[b].m);
		}
		if (complete(*j.profile)) {
			for (int k : ks) {
				if (same.size() < static_cast<std::size_t>(k))
					continue;
				const predict::History h = predict::pool({same.begin(), same.begin() + k});
				const double epochs = r.epochs_total > 0 ? r.epochs_total : j.m.epochs;
				const predict::Estimate e =
					predict::predict_runtime(*catalog, j.model, h, epochs,
								 std::max(1, r.gpus), std::max(1, r.nodes));
				if (e.known())
					runtime[k].emplace_back(e.value, j.m.training_s);
			}
		}
		const predict::History storage = predict::pool(earlier);
		const predict::History model_h = predict::pool(same);
		for (const predict::Transfer& s : j.m.saves) {
			const predict::Estimate e = predict::suspend_cost({}, 1.0, s.bytes, storage.saves);
			if (e.known())
				suspend.emplace_back(e.value, s.seconds);
		}
		// Restarts: a run > 0 begins with a load, then its first epoch (the share of one left when
		// the checkpoint was taken) and the warm-up.
		for (const CheckpointRecord& c : j.profile->checkpoints) {
			if (c.kind != "load" || c.run == 0)
				continue;
			const double actual = measured_resume(*j.profile, c);
			if (actual < 0)
				continue;
			// The warm-up of same-model jobs as a fraction of their steady epoch, times this
			// job's own steady epoch before the restart (at the restarted run's GPUs): the
			// warm-up grows with the epoch, which the GPU count sets.
			const int gpus = run_gpus(*j.profile, c.run);
			double own = 0;
			std::size_t own_n = 0;
			for (const predict::PastJob& prev : runs_before(*j.profile, c.run)) {
				const predict::Estimate st = predict::steady_epoch_time(prev.epoch_s);
				if (!st.known())
					continue;
				own += st.value *
				       catalog->speedup(j.model, std::max(1, prev.gpus),
							std::max(1, prev.nodes)) /
				       catalog->speedup(j.model, std::max(1, gpus), std::max(1, prev.nodes));
				++own_n;
			}
			if (own_n == 0 || model_h.warmups.empty())
				continue;
			std::vector<predict::Warmup> warm;
			for (const predict::Warmup& w : model_h.warmups)
				if (w.steady_epoch_s > 0)
					warm.push_back({own / static_cast<double>(own_n) * w.first_epoch_s /
								w.steady_epoch_s,
							own / static_cast<double>(own_n)});
			const predict::Estimate e = predict::resume_cost(c.bytes, storage.loads, warm);
			if (e.known())
				resume.emplace_back(e.value, actual);
		}
	}

	// Preemptions as carried out: predicted at the request against what the records show.
	std::vector<std::pair<double, double>> p_suspend, p_resume;
	struct Row {
		const JobProfile* job;
		const PreemptionRecord* pr;
		double suspend = -1, resume = -1;  // measured; -1: not measurable
	};
	std::vector<Row> listed;
	for (const Held& j : jobs) {
		const JobProfile& p = *j.profile;
		for (const PreemptionRecord& pr : p.preemptions) {
			listed.push_back({&p, &pr});
			const CheckpointRecord* save = predict::first_save_after(p, pr);
			if (!save)
				continue;  // it never answered: requeued at its grace, nothing to compare
			listed.back().suspend = save->at_s - pr.requested_s;
			if (pr.predicted_suspend_s >= 0)
				p_suspend.emplace_back(pr.predicted_suspend_s, save->at_s - pr.requested_s);
			// The run that followed: its load, its first epoch's share and warm-up.
			const CheckpointRecord* load = nullptr;
			for (const CheckpointRecord& c : p.checkpoints)
				if (c.kind == "load" && c.run > save->run && (!load || c.run < load->run))
					load = &c;
			if (!load || pr.predicted_resume_s < 0)
				continue;
			const double actual = measured_resume(p, *load);
			listed.back().resume = actual;
			if (actual >= 0)
				p_resume.emplace_back(pr.predicted_resume_s, actual);
		}
	}
	const ErrorSummary psus = predict::mean_abs_pct_error(p_suspend);
	const ErrorSummary pres = predict::mean_abs_pct_error(p_resume);

	const ErrorSummary sus = predict::mean_abs_pct_error(suspend);
	const ErrorSummary res = predict::mean_abs_pct_error(resume);
	if (json) {
		std::printf("{\"jobs\":%zu,\"runtime\":[", jobs.size());
		bool first = true;
		for (int k : ks) {
			const ErrorSummary s = predict::mean_abs_pct_error(runtime[k]);
			std::printf(
				"%s{\"same_model_jobs\":%d,\"held_out\":%zu,\"mape_pct\":%.3f,\"p90_ape_"
				"pct\":%.3f}",
				first ? "" : ",", k, s.n, s.mape_pct, p90_pct(runtime[k]));
			first = false;
		}
		const struct {
			const char* key;
			ErrorSummary s;
			double mae;
		} parts[] = {{"suspend", sus, mae_s(suspend)},
			     {"resume", res, mae_s(resume)},
			     {"preemption_suspend", psus, mae_s(p_suspend)},
			     {"preemption_resume", pres, mae_s(p_resume)}};
		std::printf("]");
		for (const auto& part : parts)
			std::printf(",\"%s\":{\"n\":%zu,\"mape_pct\":%.3f,\"mae_s\":%.6f}", part.key,
				    part.s.n, part.s.mape_pct, part.mae);
		std::printf("}\n");
		return 0;
	}
	std::printf("profiled jobs: %zu", jobs.size());
	if (!unknown.empty()) {
		std::printf(" (left out, models not in the catalog:");
		for (const std::string& u : unknown)
			std::printf(" %s", u.c_str());
		std::printf(")");
	}
	std::printf("\n\nruntime of a held-out job from its k most recent same-model jobs\n");
	std::printf("%4s %9s %9s %11s\n", "k", "held-out", "MAPE %", "p90 APE %");
	for (int k : ks) {
		const ErrorSummary s = predict::mean_abs_pct_error(runtime[k]);
		if (s.n == 0)
			std::printf("%4d %9s %9s %11s\n", k, "0", "-", "-");
		else
			std::printf("%4d %9zu %9.2f %11.2f\n", k, s.n, s.mape_pct, p90_pct(runtime[k]));
	}
	std::printf("\noverhead of a preemption\n%-34s %6s %9s %12s\n", "", "n", "MAPE %", "mean abs s");
	const struct {
		const char* what;
		ErrorSummary s;
		double mae;
	} rows[] = {{"suspend (checkpoint save)", sus, mae_s(suspend)},
		    {"resume (checkpoint load + warm-up)", res, mae_s(resume)},
		    {"preemption: request to checkpoint", psus, mae_s(p_suspend)},
		    {"preemption: resume after it", pres, mae_s(p_resume)}};
	for (const auto& row : rows)
		if (row.s.n == 0)
			std::printf("%-34s %6s %9s %12s\n", row.what, "0", "-", "-");
		else
			std::printf("%-34s %6zu %9.2f %12.4f\n", row.what, row.s.n, row.s.mape_pct, row.mae);
	if (!each)
		return 0;
	std::sort(listed.begin(), listed.end(),
		  [](const Row& a, const Row& b) { return a.pr->requested_s < b.pr->requested_s; });
	std::printf(
		"\neach preemption (seconds; - : not measurable, e.g. it never answered or ran too few "
		"epochs after)\n");
	std::printf("%-10s %8s %-12s %4s %-12s %10s %10s %10s %10s\n", "cluster", "job", "model", "gpus",
		    "outcome", "suspend", "measured", "resume", "measured");
	auto num = [](double v, char* buf) {
		if (v < 0)
			std::snprintf(buf, 32, "-");
		else
			std::snprintf(buf, 32, "%.3f", v);
		return buf;
	};
	for (const Row& r : listed) {
		char a[32], b[32], c[32], d[32];
		std::printf("%-10s %8lld %-12s %4d %-12s %10s %10s %10s %10s\n", r.job->job.cluster.c_str(),
			    static_cast<long long>(r.job->job.job_id), r.job->job.model.c_str(), r.pr->gpus,
			    r.pr->outcome.empty() ? "-" : r.pr->outcome.c_str(),
			    num(r.pr->predicted_suspend_s, a), num(r.suspend, b),
			    num(r.pr->predicted_resume_s, c), num(r.resume, d));
	}
	return 0;
}

}  // namespace dlsched::db
