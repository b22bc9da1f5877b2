// The learned policy's guard: settings, snapshot and switching rule (guard.h).
#include "policy/guard.h"

#include <algorithm>
#include <cmath>

#include "policy/registry.h"

namespace dlsched {

Result<GuardSettings> GuardSettings::from_config(const Config& config, bool learned)
{
	GuardSettings s;
	s.enabled = learned && config.get_bool("LearnedGuard");
	s.interval = config.get_double("GuardInterval");
	s.window = config.get_double("GuardWindow");
	s.policy = config.get_string("GuardPolicy");
	s.margin = config.get_double("GuardMargin");
	if (s.enabled && s.window < s.interval)
		return invalid_argument(
			"GuardWindow=" + config.get_text("GuardWindow") +
			" is shorter than GuardInterval=" + config.get_text("GuardInterval") +
			": the jobs of some intervals would never be judged; set GuardWindow= to at least "
			"GuardInterval=");
	return s;
}

Result<Config> guard_policy_config(const Config& config, const GuardSettings& s)
{
	Config gc = config;
	Status st = gc.set("Policy", s.policy, "GuardPolicy=");
	// A learned ordering or allocation set over the preset stays with the learned side.
	for (const char* key : {"OrderingPolicy", "AllocationPolicy"})
		if (st.is_ok() && gc.get_string(key) == kLearnedPolicy)
			st = gc.set(key, "", "GuardPolicy=");
	if (!st.is_ok())
		return st;
	return gc;
}

const char* guard_choice_name(GuardChoice c)
{
	return c == GuardChoice::kLearned ? "learned" : "heuristic";
}

GuardVerdict GuardState::evaluate(Seconds at, std::size_t jobs, double learned_jct, double heuristic_jct)
{
	GuardVerdict v;
	v.at = at;
	v.jobs = jobs;
	v.learned_jct = learned_jct;
	v.heuristic_jct = heuristic_jct;
	v.before = choice_;
	++evaluations_;
	if (jobs > 0 && std::isfinite(learned_jct) && std::isfinite(heuristic_jct)) {
		if (choice_ == GuardChoice::kLearned && heuristic_jct < learned_jct)
			choice_ = GuardChoice::kHeuristic;
		else if (choice_ == GuardChoice::kHeuristic && learned_jct < heuristic_jct * (1 - margin_))
			choice_ = GuardChoice::kLearned;
	}
	v.after = choice_;
	if (v.switched())
		++switches_;
	return v;
}

std::vector<Job> guard_snapshot(const std::vector<GuardKnown>& known, Seconds now, Seconds window,
				Seconds unknown_runtime_s)
{
	std::vector<Job> out;
	for (const GuardKnown& k : known) {
		const Job& src = k.job;
		if (src.submit_time > now || (!k.carried && src.submit_time <= now - window))
			continue;
		if (k.carried && !(k.epochs_left_then > 0))
			continue;
		Job j;
		// What the user asked for.
		j.id = src.id;
		j.user = src.user;
		j.partition = src.partition;
		j.qos = src.qos;
		j.model = src.model;
		j.submit_time = k.carried ? std::max(src.submit_time, now - window) : src.submit_time;
		j.gpus_requested = src.gpus_requested;
		j.gpus_min = src.gpus_min;
		j.gpus_max = src.gpus_max;
		j.epochs_total = k.carried ? std::min(k.epochs_left_then, src.epochs_total)
					   : (src.epochs_total > 0 ? src.epochs_total : 1);
		j.time_limit = src.time_limit;
		j.time_min = src.time_min;
		j.deadline = src.deadline;
		j.requeueable = src.requeueable;
		j.nice = src.nice;
		j.admin_pin = src.admin_pin;
		j.admin_priority = src.admin_priority;
		// Its length as known now: measured when it ended, else the estimate the policies saw.
		Seconds epoch = k.finished ? k.measured_epoch_time_1gpu : src.epoch_time_1gpu;
		if (!(epoch > 0)) {
			const Seconds whole = std::isfinite(src.time_limit) && src.time_limit > 0
						      ? src.time_limit
						      : unknown_runtime_s;
			// The time limit is wall time at the requested size: its GPU-seconds on one GPU.
			epoch = whole * std::max(1, src.gpus_requested) /
				(src.epochs_total > 0 ? src.epochs_total : 1);
		}
		j.epoch_time_1gpu = epoch;
		j.runtime_cv = k.finished ? 0 : src.runtime_cv;
		j.runtime_from_limit = !k.finished && src.runtime_from_limit;
		out.push_back(std::move(j));
	}
	std::sort(out.begin(), out.end(), [](const Job& a, const Job& b) {
		return a.submit_time != b.submit_time ? a.submit_time < b.submit_time : a.id < b.id;
	});
	return out;
}

}  // namespace dlsched
