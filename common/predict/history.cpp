#include "predict/history.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace dlsched::predict {

const db::CheckpointRecord* first_save_after(const db::JobProfile& p, const db::PreemptionRecord& pr)
{
	const db::CheckpointRecord* save = nullptr;
	for (const db::CheckpointRecord& c : p.checkpoints)
		if (c.kind == "save" && c.at_s >= pr.requested_s - 1e-6 &&
		    c.at_s <= pr.requested_s + pr.grace_s + 1 && (!save || c.at_s < save->at_s))
			save = &c;
	return save;
}

JobMeasurements measurements(const db::JobProfile& p)
{
	JobMeasurements m;
	m.user = p.job.user;
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
	// Each preemption answered by a save: how long the job took to start it.
	for (const db::PreemptionRecord& pr : p.preemptions) {
		const db::CheckpointRecord* save = first_save_after(p, pr);
		if (save)
			m.stop_waits.push_back(std::max(0.0, save->at_s - save->seconds - pr.requested_s));
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
		// A run resumed mid-epoch begins with the rest of one: its warm-up is what that part took
		// beyond its share of a steady epoch. (A run > 0 without a load started over: no warm-up
		// can be told apart from the repeated work.)
		const auto l = loaded_at.find(run);
		const double share = l != loaded_at.end() ? std::ceil(l->second - 1e-6) - l->second
				     : run == 0           ? 1.0
							  : -1.0;
		const Estimate steady = steady_epoch_time(r.epoch_s);
		if (steady.known() && share >= 0) {
			const double rest = share < 1e-6 ? 1.0 : share;
			m.warmups.push_back({steady.value + epochs.front()->seconds() - rest * steady.value,
					     steady.value});
		}
		m.runs.push_back(std::move(r));
	}
	return m;
}

History pool(const std::vector<JobMeasurements>& jobs, std::size_t max_per_user)
{
	History h;
	std::map<std::string, std::size_t> per_user;
	for (const JobMeasurements& j : jobs) {
		if (max_per_user > 0 && !j.user.empty() && ++per_user[j.user] > max_per_user)
			continue;
		h.runs.insert(h.runs.end(), j.runs.begin(), j.runs.end());
		h.warmups.insert(h.warmups.end(), j.warmups.begin(), j.warmups.end());
		h.saves.insert(h.saves.end(), j.saves.begin(), j.saves.end());
		h.loads.insert(h.loads.end(), j.loads.begin(), j.loads.end());
		h.stop_waits.insert(h.stop_waits.end(), j.stop_waits.begin(), j.stop_waits.end());
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
	std::vector<double> fracs;
	for (const Warmup& w : h.warmups)
		if (w.steady_epoch_s > 0)
			fracs.push_back((w.first_epoch_s - w.steady_epoch_s) / w.steady_epoch_s);
	const Estimate frac = mean_of(without_outliers(fracs));
	if (frac.samples > 0 && epochs > 0)
		e.value += frac.value * e.value / epochs;
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
