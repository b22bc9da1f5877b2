#include "predict/evidence.h"

#include <algorithm>
#include <cmath>

namespace dlsched::predict {

const char* runtime_source_name(RuntimeSource s)
{
	switch (s) {
		case RuntimeSource::kMeasured:
			return "measured";
		case RuntimeSource::kClaim:
			return "claim";
		case RuntimeSource::kHistory:
			return "history";
		case RuntimeSource::kProfile:
			return "profile";
		case RuntimeSource::kLimit:
			return "limit";
		case RuntimeSource::kUnknown:
			return "unknown";
	}
	return "?";
}

PreemptionCost preemption_cost(const Job& j, const Evidence& evidence, const ModelCatalog& models,
			       const OverheadParams& params, double now)
{
	JobEvidence e;
	if (evidence.cost_evidence(j, e))
		return measured_cost(j, models, params, e, now);
	return profile_cost(j, models, params);
}

double progress_from_time(const Job& j, const ModelCatalog& models)
{
	if (!j.running() || !(j.epoch_time_1gpu > 0) || j.gpus_allocated <= 0)
		return 0;
	const int nodes = std::max<int>(1, static_cast<int>(j.placement.size()));
	return std::min(j.epochs_total,
			j.executed_s * models.speedup(j.model, j.gpus_allocated, nodes) / j.epoch_time_1gpu);
}

Estimate history_epoch(const Job& j, const Evidence& evidence, const ModelCatalog& models)
{
	const History* h = evidence.model_history(j);
	if (!h)
		return {};
	const int gpus = j.running() ? j.gpus_allocated : j.gpus_requested;
	const int nodes = std::max<int>(1, static_cast<int>(j.placement.size()));
	const double epochs = std::max(1.0, j.epochs_left());
	const Estimate e = predict_runtime(models, j.model, *h, epochs, gpus, nodes);
	if (!e.known() || !(e.value > 0))
		return {};
	const Evidence::HistoryError err = evidence.history_error(j, e.samples);
	Estimate out;
	out.value = e.value / epochs * models.speedup(j.model, gpus, nodes) * err.factor;
	out.stddev = std::max(e.stddev / e.value, err.min_cv) * out.value;
	out.samples = e.samples;
	return out;
}

RuntimeSource prepare_runtime(Job& j, const Evidence& evidence, const ModelCatalog& models,
			      const HintLimits& limits, const Claims& claims, std::size_t* samples)
{
	std::size_t n = 0;
	j.runtime_from_limit = false;
	RuntimeSource source = RuntimeSource::kUnknown;
	const Estimate own = evidence.own_epoch(j, models);
	Estimate history;
	if (own.known() && own.value > 0) {
		// 1. A measurement of the job itself: not a claim, not bounded.
		j.epoch_time_1gpu = own.value;
		j.runtime_cv = own.stddev / own.value;
		if (samples)
			*samples = own.samples;
		return RuntimeSource::kMeasured;
	}
	// Per-epoch evidence of other jobs means nothing for a job whose epochs are unknown.
	if (claims.epochs_known)
		history = history_epoch(j, evidence, models);
	const double profiled = claims.epochs_known ? models.epoch_time_1gpu(j.model) : 0;
	j.runtime_cv = kUnmeasuredRuntimeCv;
	if (claims.epoch_time_1gpu > 0) {
		j.epoch_time_1gpu = claims.epoch_time_1gpu;
		if (history.known())
			j.runtime_cv = history.stddev / history.value;
		source = RuntimeSource::kClaim;
	} else if (history.known()) {
		j.epoch_time_1gpu = history.value;
		j.runtime_cv = history.stddev / history.value;
		n = history.samples;
		source = RuntimeSource::kHistory;
	} else if (profiled > 0) {
		j.epoch_time_1gpu = profiled;
		source = RuntimeSource::kProfile;
	} else {
		const bool limited = std::isfinite(j.time_limit) && j.time_limit > 0;
		j.epoch_time_1gpu =
			limited ? epoch_time_for_runtime(j, models, limits.gpus_per_node, j.time_limit) : 0;
		if (j.epoch_time_1gpu > 0) {
			j.runtime_from_limit = true;
			source = RuntimeSource::kLimit;
		} else {
			j.epoch_time_1gpu = 0;
			j.runtime_cv = 0;
		}
	}
	// What rests on the user's word (its epoch time, or its epochs) counts within its time limit.
	if (source != RuntimeSource::kUnknown && (source != RuntimeSource::kHistory || claims.epochs_claimed))
		(void)bound_hints(j, models, limits);
	if (samples)
		*samples = n;
	return source;
}

}  // namespace dlsched::predict
