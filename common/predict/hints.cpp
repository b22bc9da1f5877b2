#include "predict/hints.h"

#include <algorithm>
#include <cmath>

namespace dlsched::predict {

namespace {

// A claim is void once the job has run this much longer than it: a quarter more, plus a minute
// (epoch times vary, and the first epoch is slower).
constexpr double kOverrunFactor = 1.25;
constexpr double kOverrunGraceS = 60;

}  // namespace

const char* hint_verdict_name(HintVerdict v)
{
	switch (v) {
		case HintVerdict::kKept:
			return "kept";
		case HintVerdict::kCappedAtLimit:
			return "capped at the time limit";
		case HintVerdict::kRaisedToFloor:
			return "raised to the trust floor";
		case HintVerdict::kVoid:
			return "void (ran longer than claimed)";
		case HintVerdict::kUnknown:
			return "no runtime claimed";
	}
	return "?";
}

namespace {

double runtime_at(const Job& job, const ModelCatalog& models, int gpus_per_node, int gpus)
{
	if (job.epoch_time_1gpu <= 0 || job.epochs_total <= 0)
		return 0;
	const int per_node = std::max(1, gpus_per_node);
	gpus = std::max(1, gpus);
	const int nodes = (gpus + per_node - 1) / per_node;
	return job.epochs_total * job.epoch_time_1gpu / models.speedup(job.model, gpus, nodes);
}

}  // namespace

double claimed_runtime(const Job& job, const ModelCatalog& models, int gpus_per_node)
{
	return runtime_at(job, models, gpus_per_node, job.gpus_requested);
}

double epoch_time_for_runtime(const Job& job, const ModelCatalog& models, int gpus_per_node, double runtime)
{
	if (!(runtime > 0) || !(job.epochs_total > 0) || !std::isfinite(runtime))
		return 0;
	const int per_node = std::max(1, gpus_per_node);
	const int gpus = std::max(1, job.gpus_requested);
	const int nodes = (gpus + per_node - 1) / per_node;
	return runtime * models.speedup(job.model, gpus, nodes) / job.epochs_total;
}

HintVerdict bound_hints(Job& job, const ModelCatalog& models, const HintLimits& limits)
{
	const double claimed = claimed_runtime(job, models, limits.gpus_per_node);
	if (claimed <= 0)
		return HintVerdict::kUnknown;
	const bool limited = std::isfinite(job.time_limit) && job.time_limit > 0;
	double target = claimed;
	HintVerdict verdict = HintVerdict::kKept;
	if (job.executed_s > kOverrunFactor * claimed + kOverrunGraceS) {
		target = limited && job.time_limit > job.executed_s ? job.time_limit : 2 * job.executed_s;
		verdict = HintVerdict::kVoid;
	} else if (const double fastest = runtime_at(job, models, limits.gpus_per_node,
						     std::max(job.gpus_requested, job.gpus_max));
		   limited && fastest > job.time_limit) {
		// Too long for its limit even at its largest size. (An elastic job may claim more than its
		// limit at the size it asked for: it counts on being scaled up, to meet a deadline say.)
		target = claimed * job.time_limit / fastest;
		verdict = HintVerdict::kCappedAtLimit;
	} else {
		const double floor = limited ? job.time_limit / std::max(1.0, limits.trust_factor)
					     : limits.floor_no_limit_s;
		if (claimed < floor) {
			target = floor;
			verdict = HintVerdict::kRaisedToFloor;
		}
	}
	if (verdict != HintVerdict::kKept)
		job.epoch_time_1gpu *= target / claimed;
	return verdict;
}

}  // namespace dlsched::predict
