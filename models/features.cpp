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

const char* const kContextNames[kContextFeatures] = {
        "GPUs to hand out / all GPUs",
        "log1p(pending jobs) / 10",
        "log1p(running jobs) / 10",
        "log2(all GPUs) / 10",
};

float lg(double v) { return static_cast<float>(std::log1p(std::max(0.0, v))); }

}  // namespace

const char* job_feature_name(int i) { return i >= 0 && i < kJobFeatures ? kJobNames[i] : "?"; }
const char* context_feature_name(int i) { return i >= 0 && i < kContextFeatures ? kContextNames[i] : "?"; }

void encode_job(const ClusterView& view, const Job& j, int user_gpus, int free_gpus, int total_gpus, float* f)
{
	const bool known = j.epoch_time_1gpu > 0;
	const int req = std::max(1, j.gpus_requested);
	const double rem = known ? remaining_time(view, j, req) : 0.0;
	const double rem_h = rem / 3600.0;
	const double age_h = std::max(0.0, view.now - j.submit_time) / 3600.0;
	const int total = std::max(1, total_gpus);
	f[0] = lg(rem_h);
	f[1] = lg(rem_h * req);
	f[2] = static_cast<float>(std::log2(static_cast<double>(req)) / 6.0);
	f[3] = lg(age_h);
	f[4] = lg(j.attained_gpu_s / 3600.0);
	f[5] = j.running() ? 1.0f : 0.0f;
	f[6] = j.elastic() ? 1.0f : 0.0f;
	f[7] = static_cast<float>(std::log2(std::max(1.0, static_cast<double>(j.gpus_max) / std::max(1, j.gpus_min))));
	f[8] = static_cast<float>(static_cast<double>(j.gpus_allocated) / req);
	f[9] = static_cast<float>(static_cast<double>(user_gpus) / total);
	f[10] = lg(j.restarts);
	f[11] = !j.running() && j.last_stop_time >= 0 ? lg((view.now - j.last_stop_time) / 3600.0) : 0.0f;
	f[12] = j.epochs_total > 0 ? static_cast<float>(std::min(1.0, j.epochs_done / j.epochs_total)) : 0.0f;
	f[13] = static_cast<float>(std::min(2.0, static_cast<double>(req) / std::max(1, free_gpus)));
	f[14] = known ? 0.0f : 1.0f;
	f[15] = lg(age_h / std::max(rem_h, 1.0 / 60.0));
	for (int i = 0; i < kJobFeatures; ++i)
		if (!std::isfinite(f[i]))
			f[i] = 0.0f;  // an unknown model's infinite estimate must not poison the network
}

EncodedWindow encode_window(const ClusterView& view, const std::vector<const Job*>& candidates, int free_gpus,
                            std::size_t max_rows, std::vector<const Job*>& rest)
{
	EncodedWindow w;
	rest.clear();
	std::vector<const Job*> running, others;
	for (const Job* j : candidates)
		(j->running() ? running : others).push_back(j);
	std::sort(running.begin(), running.end(), [](const Job* a, const Job* b) { return a->id < b->id; });
	for (const Job* j : running)
		(w.jobs.size() < max_rows ? w.jobs : rest).push_back(j);
	for (const Job* j : others)
		(w.jobs.size() < max_rows ? w.jobs : rest).push_back(j);

	std::unordered_map<std::string, int> user_gpus;
	for (const Job* r : view.running)
		user_gpus[r->user] += r->gpus_allocated;
	w.free_gpus = free_gpus;
	const int total = std::max(1, view.total_gpus());
	w.x.assign(w.jobs.size() * kJobFeatures, 0.0f);
	w.need.reserve(w.jobs.size());
	for (std::size_t i = 0; i < w.jobs.size(); ++i) {
		const Job& j = *w.jobs[i];
		auto it = user_gpus.find(j.user);
		encode_job(view, j, it == user_gpus.end() ? 0 : it->second, free_gpus, total, &w.x[i * kJobFeatures]);
		w.need.push_back(std::max(1, j.gpus_min));
	}
	w.context = {static_cast<float>(static_cast<double>(free_gpus) / total),
	             static_cast<float>(std::log1p(static_cast<double>(view.pending.size())) / 10.0),
	             static_cast<float>(std::log1p(static_cast<double>(view.running.size())) / 10.0),
	             static_cast<float>(std::log2(static_cast<double>(total)) / 10.0)};
	return w;
}

PolicyStep make_step(const ClusterView& view, EncodedWindow w, std::vector<int> order)
{
	PolicyStep s;
	s.cycle = view.cycle;
	s.now = view.now;
	s.schema = kFeatureSchema;
	s.rows = static_cast<int>(w.rows());
	s.features = kJobFeatures;
	s.x = std::move(w.x);
	s.context = std::move(w.context);
	s.ids.reserve(w.jobs.size());
	for (const Job* j : w.jobs)
		s.ids.push_back(j->id);
	s.need = std::move(w.need);
	s.free_gpus = w.free_gpus;
	s.order = std::move(order);
	s.in_system = static_cast<int>(view.pending.size() + view.running.size());
	return s;
}

}  // namespace dlsched::models
