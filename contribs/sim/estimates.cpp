#include "estimates.h"

#include <algorithm>
#include <cmath>

namespace dlsched::sim {

namespace {

// Rng streams: one per job, (kEstimateStream << 32) + its id.
constexpr std::uint64_t kEstimateStream = 0xe571;

// `dlsched-db accuracy` on scripts/bench-predict's 60 jobs (doc/results.md, "Runtime and overhead
// prediction"): the runtime MAPE of a held-out job predicted from its k most recent same-model jobs.
struct AccuracyRow {
	std::size_t k;
	double mape_pct;
};
constexpr AccuracyRow kHistoryAccuracy[] = {{1, 3.34}, {2, 2.75}, {4, 2.62}, {8, 2.29}};

}  // namespace

const char* estimates_name(Estimates e)
{
	return e == Estimates::kPredicted ? "predicted" : "oracle";
}

Result<Estimates> parse_estimates(const std::string& text)
{
	if (text == "oracle")
		return Estimates::kOracle;
	if (text == "predicted")
		return Estimates::kPredicted;
	return invalid_argument("--estimates '" + text + "': expected oracle or predicted");
}

double history_sigma(std::size_t k)
{
	double mape = 0;
	for (const AccuracyRow& row : kHistoryAccuracy)
		if (row.k <= k)
			mape = row.mape_pct;
	return mape / 100 * std::sqrt(M_PI / 2);
}

const char* estimate_source_name(EstimateSource s)
{
	switch (s) {
	case EstimateSource::kMeasured:
		return "measured";
	case EstimateSource::kHistory:
		return "history";
	case EstimateSource::kUser:
		return "user";
	case EstimateSource::kUnknown:
		return "unknown";
	}
	return "?";
}

EstimateModel::EstimateModel(const ModelCatalog& models, const std::vector<Job>& jobs, std::uint64_t seed,
                             double epoch_sd, const predict::HintLimits& limits)
    : models_(models), epoch_sd_(epoch_sd), limits_(limits), jobs_(jobs.size()),
      models_history_(static_cast<std::size_t>(std::max(0, models.size())))
{
	for (std::size_t i = 0; i < jobs.size(); ++i) {
		Known& k = jobs_[i];
		k.model = jobs[i].model;
		k.rng = Rng(seed, (kEstimateStream << 32) + static_cast<std::uint64_t>(jobs[i].id));
		k.history_z = k.rng.normal();
	}
}

void EstimateModel::timed(std::size_t i, double epochs, double epoch_1gpu_s)
{
	if (!(epochs > 0) || !(epoch_1gpu_s > 0))
		return;
	Known& k = jobs_[i];
	// The mean of `epochs` epochs each timed with log-normal noise (mean 1, sd epoch_sd_): about
	// log-normal with sd epoch_sd_ / sqrt(epochs), one draw for the lot.
	const double sd = epoch_sd_ / std::sqrt(epochs);
	const double noise = sd > 0 ? std::exp(sd * k.rng.normal() - sd * sd / 2) : 1.0;
	k.epochs += epochs;
	k.sum_1gpu += epochs * epoch_1gpu_s * noise;
	if (k.model < 0 || static_cast<std::size_t>(k.model) >= models_history_.size())
		return;
	History& h = models_history_[static_cast<std::size_t>(k.model)];
	h.stale = true;
	if (k.in_history)
		return;
	k.in_history = true;
	h.jobs.push_back(i);
	if (h.jobs.size() > kHistoryJobs) {
		jobs_[h.jobs.front()].in_history = false;
		h.jobs.erase(h.jobs.begin());
	}
}

const EstimateModel::History& EstimateModel::history(int model)
{
	History& h = models_history_[static_cast<std::size_t>(model)];
	if (!h.stale)
		return h;
	// Each same-model job is one past job of one steady epoch: its mean time on one GPU.
	std::vector<predict::PastJob> past;
	past.reserve(h.jobs.size());
	for (std::size_t j : h.jobs)
		past.push_back({1, 1, {jobs_[j].sum_1gpu / jobs_[j].epochs}});
	h.per_epoch = predict::runtime_from_history(models_, model, past, 1, 1, 1);
	h.stale = false;
	return h;
}

JobEstimate EstimateModel::estimate(std::size_t i, const Job& job)
{
	const Known& k = jobs_[i];
	JobEstimate e;
	if (k.epochs > 0) {
		// Its own epochs; the spread as predict::remaining_time reckons it, with the timing noise as
		// the epochs' spread: sd x sqrt(1/left + 1/timed) relative to what is left.
		e.epoch_time_1gpu = k.sum_1gpu / k.epochs;
		e.runtime_cv = epoch_sd_ * std::sqrt(1 / std::max(1.0, job.epochs_left()) + 1 / k.epochs);
		e.source = EstimateSource::kMeasured;
		e.samples = static_cast<std::size_t>(k.epochs);
		return e;
	}
	if (k.model >= 0 && static_cast<std::size_t>(k.model) < models_history_.size()) {
		const History& h = history(k.model);
		if (h.per_epoch.known() && h.per_epoch.value > 0) {
			const double sigma = history_sigma(h.per_epoch.samples);
			e.epoch_time_1gpu = h.per_epoch.value * std::exp(sigma * k.history_z);
			e.runtime_cv = std::max(h.per_epoch.stddev / h.per_epoch.value, sigma);
			e.source = EstimateSource::kHistory;
			e.samples = h.per_epoch.samples;
			return e;
		}
	}
	// What the user gave: the model and its epochs (the profile's epoch time), and a time limit.
	Job claim;
	claim.model = job.model;
	claim.gpus_requested = job.gpus_requested;
	claim.gpus_min = job.gpus_min;
	claim.gpus_max = job.gpus_max;
	claim.epochs_total = job.epochs_total;
	claim.time_limit = job.time_limit;
	claim.executed_s = job.executed_s;
	const double profiled = models_.epoch_time_1gpu(job.model);
	if (profiled > 0) {
		claim.epoch_time_1gpu = profiled;
	} else {
		// Nothing but the time limit, as Slurm's backfill: all of it at the requested size.
		claim.epoch_time_1gpu = predict::epoch_time_for_runtime(claim, models_, limits_.gpus_per_node, job.time_limit);
		if (!(claim.epoch_time_1gpu > 0))
			return e;
	}
	(void) predict::bound_hints(claim, models_, limits_);
	e.epoch_time_1gpu = claim.epoch_time_1gpu;
	e.runtime_cv = kUnmeasuredCv;
	e.source = EstimateSource::kUser;
	return e;
}

}  // namespace dlsched::sim
