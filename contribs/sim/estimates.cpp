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

// A simulated user claims no epoch time, and the workload's epochs are exact: a runtime from the
// history is not bounded as a claim (the profile's and the time limit's are).
constexpr predict::Claims kClaims{0, true, false};

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
    : models_(models),
      epoch_sd_(epoch_sd),
      limits_(limits),
      jobs_(jobs.size()),
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
	h.pooled.runs.clear();
	for (std::size_t j : h.jobs)
		h.pooled.runs.push_back({1, 1, {jobs_[j].sum_1gpu / jobs_[j].epochs}});
	h.pooled.jobs = h.jobs.size();
	h.stale = false;
	return h;
}

// One job's simulated measurements, as predict::prepare_runtime asks for them.
class EstimateModel::JobEvidence : public predict::Evidence {
public:
	JobEvidence(const Known& k, const predict::History* h, double epoch_sd, bool error)
	    : k_(k), h_(h), epoch_sd_(epoch_sd), error_(error)
	{
	}

	predict::Estimate own_epoch(const Job& job, const ModelCatalog&) const override
	{
		if (!(k_.epochs > 0))
			return {};
		// The spread as predict::remaining_time reckons it, with the timing noise as the epochs'
		// spread: sd x sqrt(1/left + 1/timed) relative to what is left.
		predict::Estimate e;
		e.value = k_.sum_1gpu / k_.epochs;
		e.stddev =
			e.value * epoch_sd_ * std::sqrt(1 / std::max(1.0, job.epochs_left()) + 1 / k_.epochs);
		e.samples = static_cast<std::size_t>(k_.epochs);
		return e;
	}
	const predict::History* model_history(const Job&) const override { return h_; }
	HistoryError history_error(const Job&, std::size_t k) const override
	{
		if (!error_)
			return {};
		const double sigma = history_sigma(k);
		return {std::exp(sigma * k_.history_z), sigma};
	}

private:
	const Known& k_;
	const predict::History* h_;
	double epoch_sd_;
	bool error_;
};

JobEstimate EstimateModel::estimate(std::size_t i, const Job& job)
{
	const Known& k = jobs_[i];
	const predict::History* h = nullptr;
	if (k.model >= 0 && static_cast<std::size_t>(k.model) < models_history_.size()) {
		const History& mh = history(k.model);
		if (!mh.pooled.runs.empty())
			h = &mh.pooled;
	}
	Job seen = job;
	std::size_t samples = 0;
	const predict::RuntimeSource source = predict::prepare_runtime(
		seen, JobEvidence(k, h, epoch_sd_, history_error_), models_, limits_, kClaims, &samples);
	JobEstimate e;
	if (source == predict::RuntimeSource::kUnknown)
		return e;
	e.epoch_time_1gpu = seen.epoch_time_1gpu;
	e.runtime_cv = seen.runtime_cv;
	e.samples = samples;
	e.source = source == predict::RuntimeSource::kMeasured  ? EstimateSource::kMeasured
		   : source == predict::RuntimeSource::kHistory ? EstimateSource::kHistory
								: EstimateSource::kUser;
	return e;
}

}  // namespace dlsched::sim
