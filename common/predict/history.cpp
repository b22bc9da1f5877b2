#include "predict/history.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace dlsched::predict {

JobMeasurements measurements(const db::JobProfile& p)
{
	JobMeasurements m;
	// Runs in order; the epoch where each run started from (its checkpoint load), if any.
	std::map<int, std::vector<const db::EpochRecord*>> runs;
	for (const db::EpochRecord& e : p.epochs) {
		runs[e.run].push_back(&e);
		m.training_s += e.seconds();
		++m.epochs;
	}
	std::map<int, double> loaded_at;
	for (const db::CheckpointRecord& c : p.checkpoints) {
		Transfer t{c.bytes, c.seconds};
		(c.kind == "load" ? m.loads : m.saves).push_back(t);
		if (c.kind == "load")
			loaded_at[c.run] = c.epoch;
	}
	for (const auto& [run, epochs] : runs) {
		if (epochs.size() < 2)
			continue;  // a lone epoch is a warm-up or a fragment
		PastJob r;
		r.gpus = epochs.back()->gpus > 0 ? epochs.back()->gpus : p.job.gpus;
		r.nodes = std::max(1, p.job.nodes);
		for (std::size_t i = 1; i < epochs.size(); ++i)
			r.epoch_s.push_back(epochs[i]->seconds());
		// The run's first epoch measures the warm-up only if it was a whole epoch: a first run, or a
		// restart from a checkpoint taken at an epoch boundary.
		const auto l = loaded_at.find(run);
		const bool whole = l == loaded_at.end() ? run == 0 : std::fabs(l->second - std::round(l->second)) < 1e-6;
		const Estimate steady = steady_epoch_time(r.epoch_s);
		if (whole && steady.known())
			m.warmups.push_back({epochs.front()->seconds(), steady.value});
		m.runs.push_back(std::move(r));
	}
	return m;
}

History pool(const std::vector<JobMeasurements>& jobs)
{
	History h;
	for (const JobMeasurements& j : jobs) {
		h.runs.insert(h.runs.end(), j.runs.begin(), j.runs.end());
		h.warmups.insert(h.warmups.end(), j.warmups.begin(), j.warmups.end());
		h.saves.insert(h.saves.end(), j.saves.begin(), j.saves.end());
		h.loads.insert(h.loads.end(), j.loads.begin(), j.loads.end());
		h.jobs += j.runs.empty() ? 0 : 1;
	}
	return h;
}

Estimate predict_runtime(const ModelCatalog& models, int model, const History& h, double epochs, int gpus,
                         int nodes)
{
	Estimate e = runtime_from_history(models, model, h.runs, epochs, gpus, nodes);
	if (!e.known())
		return e;
	// Warm-up: measured at the past jobs' GPU counts; carried over as a fraction of their epoch.
	double frac = 0;
	std::size_t n = 0;
	for (const Warmup& w : h.warmups)
		if (w.steady_epoch_s > 0) {
			frac += (w.first_epoch_s - w.steady_epoch_s) / w.steady_epoch_s;
			++n;
		}
	if (n > 0 && epochs > 0)
		e.value += (frac / static_cast<double>(n)) * e.value / epochs;
	return e;
}

ErrorSummary mean_abs_pct_error(const std::vector<std::pair<double, double>>& predicted_actual)
{
	ErrorSummary s;
	double sum = 0;
	for (const auto& [p, a] : predicted_actual)
		if (a > 0) {
			sum += std::fabs(p - a) / a;
			++s.n;
		}
	s.mape_pct = s.n ? 100.0 * sum / static_cast<double>(s.n) : 0;
	return s;
}

}  // namespace dlsched::predict
