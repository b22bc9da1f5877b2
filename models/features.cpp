#include "features.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "policy/estimates.h"

namespace dlsched::models {

namespace {

const char* const kJobNames[kJobFeatures] = {
	"log1p(remaining hours at requested GPUs)",
	"log1p(remaining GPU-hours)",
	"log2(GPUs requested) / 6",
	"log1p(hours since submit)",
	"log1p(attained GPU-hours)",
	"running",
	"elastic",
	"log2(max / min GPUs)",
	"GPUs held / requested",
	"user's share of the cluster's GPUs",
	"log1p(restarts)",
	"log1p(hours waiting since last preemption)",
	"fraction of epochs done",
	"min(GPUs requested / GPUs to hand out, 2)",
	"remaining time unknown",
	"log1p(hours since submit / remaining hours)",
};

const char* const kUnitNames[kUnitFeatures] = {
	"end of round",
	"further unit",
	"log2(GPUs after / requested)",
	"log1p(remaining hours at GPUs after)",
	"fraction of the remaining time this unit saves",
	"grows a running job (a resize)",
	"keeps GPUs the job holds",
	"log1p(hours a restart costs), running jobs",
};

const char* const kContextNames[kContextFeatures] = {
	"GPUs to hand out / all GPUs",
	"log1p(pending jobs) / 10",
	"log1p(running jobs) / 10",
	"log2(all GPUs) / 10",
};

float lg(double v)
{
	return static_cast<float>(std::log1p(std::max(0.0, v)));
}

}  // namespace

const char* job_feature_name(int i)
{
	if (i >= 0 && i < kJobFeatures)
		return kJobNames[i];
	return i >= kJobFeatures && i < kRowFeatures ? kUnitNames[i - kJobFeatures] : "?";
}
const char* context_feature_name(int i)
{
	return i >= 0 && i < kContextFeatures ? kContextNames[i] : "?";
}

void encode_job(const ClusterView& view, const Job& j, int user_gpus, int free_gpus, int total_gpus, float* f,
		double time_scale)
{
	const bool known = j.epoch_time_1gpu > 0;
	const int req = std::max(1, j.gpus_requested);
	const double hour = 3600.0 / time_scale;  // seconds of the view's clock per hour of the model's
	const double rem = known ? remaining_time(view, j, req) : 0.0;
	const double rem_h = rem / hour;
	const double age_h = std::max(0.0, view.now - j.submit_time) / hour;
	const int total = std::max(1, total_gpus);
	f[0] = lg(rem_h);
	f[1] = lg(rem_h * req);
	f[2] = static_cast<float>(std::log2(static_cast<double>(req)) / 6.0);
	f[3] = lg(age_h);
	f[4] = lg(j.attained_gpu_s / hour);
	f[5] = j.running() ? 1.0f : 0.0f;
	f[6] = j.elastic() ? 1.0f : 0.0f;
	f[7] = static_cast<float>(
		std::log2(std::max(1.0, static_cast<double>(j.gpus_max) / std::max(1, j.gpus_min))));
	f[8] = static_cast<float>(static_cast<double>(j.gpus_allocated) / req);
	f[9] = static_cast<float>(static_cast<double>(user_gpus) / total);
	f[10] = lg(j.restarts);
	f[11] = !j.running() && j.last_stop_time >= 0 ? lg((view.now - j.last_stop_time) / hour) : 0.0f;
	f[12] = j.epochs_total > 0 ? static_cast<float>(std::min(1.0, j.epochs_done / j.epochs_total)) : 0.0f;
	f[13] = static_cast<float>(std::min(2.0, static_cast<double>(req) / std::max(1, free_gpus)));
	f[14] = known ? 0.0f : 1.0f;
	f[15] = lg(age_h / std::max(rem_h, 1.0 / 60.0));
	for (int i = 0; i < kJobFeatures; ++i)
		if (!std::isfinite(f[i]))
			f[i] = 0.0f;  // an unknown model's infinite estimate must not poison the network
}

int first_unit_gpus(const Job& job)
{
	return std::max(1,
			std::clamp(job.gpus_requested, job.gpus_min, std::max(job.gpus_min, job.gpus_max)));
}

int unit_gpus(const ClusterView& view, const Job& job)
{
	const int per_node = node_size_hint(view);
	return first_unit_gpus(job) >= per_node ? per_node : 1;
}

void encode_unit(const ClusterView& view, const Job& j, int before, int after, float* f, double time_scale)
{
	const double hour = 3600.0 / time_scale;
	const bool known = j.epoch_time_1gpu > 0;
	const int req = std::max(1, j.gpus_requested);
	const double rem_after = known ? remaining_time(view, j, after) : 0.0;
	const double rem_before = known && before > 0 ? remaining_time(view, j, before) : 0.0;
	f[0] = 0.0f;
	f[1] = before > 0 ? 1.0f : 0.0f;
	f[2] = static_cast<float>(
		std::clamp(std::log2(static_cast<double>(std::max(1, after)) / req), -4.0, 4.0));
	f[3] = lg(rem_after / hour);
	f[4] = before > 0 && rem_before > 0
		       ? static_cast<float>(std::clamp(1.0 - rem_after / rem_before, -1.0, 1.0))
		       : 0.0f;
	f[5] = j.running() && after > j.gpus_allocated ? 1.0f : 0.0f;
	f[6] = j.running() && after <= j.gpus_allocated ? 1.0f : 0.0f;
	f[7] = j.running() ? lg(j.preempt_cost.restart_loss() / hour) : 0.0f;
	for (int i = 0; i < kUnitFeatures; ++i)
		if (!std::isfinite(f[i]))
			f[i] = 0.0f;
}

EncodedWindow encode_window(const ClusterView& view, const std::vector<const Job*>& candidates, int free_gpus,
			    std::size_t max_jobs, std::vector<const Job*>& rest, bool units,
			    double time_scale)
{
	EncodedWindow w;
	rest.clear();
	std::vector<const Job*> running, others, chosen;
	for (const Job* j : candidates)
		(j->running() ? running : others).push_back(j);
	std::sort(running.begin(), running.end(), [](const Job* a, const Job* b) { return a->id < b->id; });
	for (const Job* j : running)
		(chosen.size() < max_jobs ? chosen : rest).push_back(j);
	for (const Job* j : others)
		(chosen.size() < max_jobs ? chosen : rest).push_back(j);

	std::unordered_map<std::string, int> user_gpus;
	for (const Job* r : view.running)
		user_gpus[r->user] += r->gpus_allocated;
	w.free_gpus = free_gpus;
	const int total = std::max(1, view.total_gpus());
	float job_row[kJobFeatures];
	auto add_row = [&](const Job* j, int before, int after, int need, int unit, int prev) {
		const std::size_t r = w.x.size() / kRowFeatures;
		w.x.resize(w.x.size() + kRowFeatures, 0.0f);
		float* f = &w.x[r * kRowFeatures];
		if (j) {
			std::copy(job_row, job_row + kJobFeatures, f);
			encode_unit(view, *j, before, after, f + kJobFeatures, time_scale);
		} else {
			f[kJobFeatures] = 1.0f;  // end of round
		}
		w.jobs.push_back(j);
		w.need.push_back(need);
		w.unit.push_back(unit);
		w.after.push_back(prev);
		w.size.push_back(after);
		return static_cast<int>(r);
	};
	for (const Job* jp : chosen) {
		const Job& j = *jp;
		auto it = user_gpus.find(j.user);
		encode_job(view, j, it == user_gpus.end() ? 0 : it->second, free_gpus, total, job_row,
			   time_scale);
		const int first = first_unit_gpus(j);
		int prev = add_row(jp, 0, first, first, 0, -1);
		if (!units || !j.elastic() || (j.running() && !j.requeueable))
			continue;
		const int u = unit_gpus(view, j);
		int size = first;
		for (int k = 1; k <= kMaxExtraUnits && size + u <= j.gpus_max; ++k) {
			prev = add_row(jp, size, size + u, u, k, prev);
			size += u;
		}
	}
	if (units)
		w.end_row = add_row(nullptr, 0, 0, 0, -1, -1);
	w.context = {static_cast<float>(static_cast<double>(free_gpus) / total),
		     static_cast<float>(std::log1p(static_cast<double>(view.pending.size())) / 10.0),
		     static_cast<float>(std::log1p(static_cast<double>(view.running.size())) / 10.0),
		     static_cast<float>(std::log2(static_cast<double>(total)) / 10.0)};
	return w;
}

PolicyStep make_step(const ClusterView& view, EncodedWindow w, std::vector<int> picks)
{
	PolicyStep s;
	s.cycle = view.cycle;
	s.now = view.now;
	s.schema = kFeatureSchema;
	s.rows = static_cast<int>(w.rows());
	s.features = kRowFeatures;
	s.x = std::move(w.x);
	s.context = std::move(w.context);
	s.ids.reserve(w.jobs.size());
	s.held.reserve(w.jobs.size());
	for (const Job* j : w.jobs) {
		s.ids.push_back(j ? j->id : 0);
		s.held.push_back(j && j->running() ? j->gpus_allocated : 0);
	}
	s.need = std::move(w.need);
	s.unit = std::move(w.unit);
	s.after = std::move(w.after);
	s.size = std::move(w.size);
	s.free_gpus = w.free_gpus;
	s.order = std::move(picks);
	s.in_system = static_cast<int>(view.pending.size() + view.running.size());
	return s;
}

std::vector<int> picks_for_sizes(const ClusterView& view, const EncodedWindow& w,
				 const std::unordered_map<JobId, int>& sizes,
				 const std::unordered_map<JobId, std::size_t>& rank)
{
	auto size_of = [&](const Job* j) {
		auto it = sizes.find(j->id);
		return it == sizes.end() ? 0 : it->second;
	};
	auto rank_of = [&](const Job* j) {
		auto it = rank.find(j->id);
		return it == rank.end() ? static_cast<std::size_t>(-1) : it->second;
	};
	std::vector<int> first, extra;
	for (std::size_t r = 0; r < w.rows(); ++r) {
		const Job* j = w.jobs[r];
		const int size = j ? size_of(j) : 0;
		// A job run below its first unit (optimus starts elastic jobs at their minimum) counts as
		// given its first unit; a pick that then no longer fits ends the label there (decode_round).
		if (!j || size <= 0 || (w.unit[r] > 0 && size < w.size[r]))
			continue;
		(w.unit[r] == 0 ? first : extra).push_back(static_cast<int>(r));
	}
	std::stable_sort(first.begin(), first.end(), [&](int a, int b) {
		return rank_of(w.jobs[static_cast<std::size_t>(a)]) <
		       rank_of(w.jobs[static_cast<std::size_t>(b)]);
	});
	// Further units by the time they save (a job's own units save less and less, so its units stay in
	// order); equal savings by row.
	auto saves = [&](int r) {
		const Job& j = *w.jobs[static_cast<std::size_t>(r)];
		const int after = w.size[static_cast<std::size_t>(r)];
		const int before = after - w.need[static_cast<std::size_t>(r)];
		const double s = remaining_time(view, j, before) - remaining_time(view, j, after);
		return std::isfinite(s) ? std::round(s * 1e3) : 0.0;
	};
	std::stable_sort(extra.begin(), extra.end(), [&](int a, int b) {
		const double sa = saves(a), sb = saves(b);
		if (sa != sb)
			return sa > sb;
		return w.unit[static_cast<std::size_t>(a)] < w.unit[static_cast<std::size_t>(b)];
	});
	// A job's own units in unit order, in the places its units got.
	std::unordered_map<const Job*, std::vector<std::size_t>> places;
	for (std::size_t i = 0; i < extra.size(); ++i)
		places[w.jobs[static_cast<std::size_t>(extra[i])]].push_back(i);
	for (auto& [job, at] : places) {
		std::vector<int> rows;
		for (std::size_t i : at)
			rows.push_back(extra[i]);
		std::sort(rows.begin(), rows.end(), [&](int a, int b) {
			return w.unit[static_cast<std::size_t>(a)] < w.unit[static_cast<std::size_t>(b)];
		});
		for (std::size_t k = 0; k < at.size(); ++k)
			extra[at[k]] = rows[k];
	}
	std::vector<int> picks = first;
	picks.insert(picks.end(), extra.begin(), extra.end());
	if (w.end_row >= 0)
		picks.push_back(w.end_row);
	return picks;
}

}  // namespace dlsched::models
