#include "learned.h"

#include <algorithm>
#include <cmath>
#include <sys/stat.h>

#include "decode.h"
#include "workload/workload.h"

namespace dlsched::models {

namespace {

// log softmax of the picks of a decoded round under `scores` (each pick among the rows still valid).
double round_log_prob(const std::vector<float>& scores, const std::vector<int>& need, const DecodedRound& d)
{
	const std::size_t n = scores.size();
	std::vector<bool> taken(n, false);
	double lp = 0;
	for (std::size_t k = 0; k < d.chosen.size(); ++k) {
		double mx = -INFINITY;
		for (std::size_t i = 0; i < n; ++i)
			if (!taken[i] && need[i] <= d.left[k])
				mx = std::max(mx, static_cast<double>(scores[i]));
		double z = 0;
		for (std::size_t i = 0; i < n; ++i)
			if (!taken[i] && need[i] <= d.left[k])
				z += std::exp(scores[i] - mx);
		const auto c = static_cast<std::size_t>(d.chosen[k]);
		lp += scores[c] - mx - std::log(z);
		taken[c] = true;
	}
	return lp;
}

// An ordering that stands in for a learned one whose model could not be used: decides as the
// fallback, keeps the learned policy's name, and says why in note().
class FallbackOrdering : public Ordering {
public:
	FallbackOrdering(std::string name, std::unique_ptr<Ordering> fallback, std::string why)
	    : name_(std::move(name)), fallback_(std::move(fallback)), why_(std::move(why))
	{
	}
	const char* name() const override { return name_.c_str(); }
	bool preemptive() const override { return fallback_->preemptive(); }
	void order(const ClusterView& view, std::vector<const Job*>& jobs) const override { fallback_->order(view, jobs); }
	std::string note() const override
	{
		return name_ + ": " + why_ + "; ordering by " + fallback_->name() + " instead";
	}
	std::string fallback() const override { return fallback_->name(); }

private:
	std::string name_;
	std::unique_ptr<Ordering> fallback_;
	std::string why_;
};

bool file_exists(const std::string& p)
{
	struct stat st;
	return ::stat(p.c_str(), &st) == 0;
}

}  // namespace

LearnedOrdering::LearnedOrdering(std::string name, std::shared_ptr<const PolicyModel> model, LearnedOptions options)
    : name_(std::move(name)), model_(std::move(model)), options_(options), rng_(options.seed)
{
}

std::string LearnedOrdering::note() const
{
	return name_ + ": model " + options_.path + " (" + std::to_string(model_->parameter_count()) + " parameters, window " +
	       std::to_string(options_.window) + ")";
}

void LearnedOrdering::order(const ClusterView& view, std::vector<const Job*>& jobs) const
{
	int free_gpus = view.free_gpus();
	for (const Job* j : jobs)
		if (j->running())
			free_gpus += j->gpus_allocated;
	std::vector<const Job*> rest;
	EncodedWindow w = encode_window(view, jobs, free_gpus, options_.window, rest);
	std::vector<float> scores;
	model_->scores(w, scores);
	std::vector<float> keyed = scores;
	if (options_.sample) {
		// Gumbel-max: sorting by score + Gumbel noise draws an order from the Plackett-Luce policy.
		std::uniform_real_distribution<double> u(1e-12, 1.0);
		for (float& k : keyed)
			k += static_cast<float>(-std::log(-std::log(u(rng_))));
	}
	std::vector<int> order(w.rows());
	for (std::size_t i = 0; i < order.size(); ++i)
		order[i] = static_cast<int>(i);
	std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
		return keyed[static_cast<std::size_t>(a)] > keyed[static_cast<std::size_t>(b)];
	});
	jobs.clear();
	for (int r : order)
		jobs.push_back(w.jobs[static_cast<std::size_t>(r)]);
	for (const Job* j : rest)
		jobs.push_back(j);

	if (view.recorder) {
		const double value = model_->value(w);
		const double lp = round_log_prob(scores, w.need, decode_round(w.need, w.free_gpus, order, options_.max_decisions));
		PolicyStep s = make_step(view, std::move(w), std::move(order));
		s.sampled = options_.sample;
		s.log_prob = lp;
		s.value = value;
		view.recorder->record(std::move(s));
	}
}

std::string default_model_path()
{
	const std::string installed = default_data_dir() + "/models/dl2.pt";
	if (file_exists(installed))
		return installed;
	return std::string(DLSCHED_SRCDIR) + "/models/dl2.pt";
}

namespace {

Result<std::unique_ptr<Ordering>> make_learned(const char* name, const Config& c)
{
	const std::string path = c.get_string("ModelFile").empty() ? default_model_path() : c.get_string("ModelFile");
	auto model = PolicyModel::load(path);
	if (model.is_ok()) {
		use_one_thread();
		LearnedOptions o;
		o.window = static_cast<std::size_t>(c.get_int("ModelWindow"));
		o.seed = static_cast<std::uint64_t>(c.get_int("Seed"));
		o.path = path;
		return std::unique_ptr<Ordering>(new LearnedOrdering(name, std::shared_ptr<const PolicyModel>(model.value()), o));
	}
	const std::string fb = c.get_string("ModelFallback");
	if (fb == "dl2" || fb == "dual-agent")
		return invalid_argument("ModelFallback: '" + fb + "' is itself learned; name a heuristic (tiresias-las, srtf, fifo, ...)");
	PolicyRegistry heuristics;  // a fresh one: the caller's registry may be moving or gone by now
	register_builtin_policies(heuristics);
	auto fallback = heuristics.make_ordering(fb, c);
	if (!fallback.is_ok())
		return Status(fallback.status().code(), "ModelFallback: " + fallback.status().message());
	return std::unique_ptr<Ordering>(new FallbackOrdering(name, std::move(fallback).value(), model.status().message()));
}

}  // namespace

void register_model_policies(PolicyRegistry& r)
{
	r.add_ordering("dl2", "DL2 learned ordering (policy network, ModelFile=), preemptive",
	               [](const Config& c) { return make_learned("dl2", c); });
	SchedulerSpec dl2;
	dl2.ordering = "dl2";
	dl2.allocation = "optimus";
	r.add_preset("dl2", "DL2: the learned ordering decides which jobs get GPUs, unit by unit (TPDS'21)", dl2);
	SchedulerSpec dual = dl2;
	dual.placement = "gp-placement";
	r.add_preset("dual-agent",
	             "dual-agent (KDD'23): the learned ordering with the Gaussian-process placement agent (gp-placement)",
	             dual);
}

void install() { set_policy_extension(&register_model_policies); }

}  // namespace dlsched::models

extern "C" void dlsched_models_install(void)
{
	dlsched::models::install();
}
