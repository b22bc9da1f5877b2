#include "learned.h"

#include <algorithm>
#include <unordered_map>
#include <cmath>
#include <climits>
#include <cstdlib>

#include "decode.h"
#include "workload/workload.h"

namespace dlsched::models {

namespace {

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
	void order(const ClusterView& view, std::vector<const Job*>& jobs) const override
	{
		fallback_->order(view, jobs);
	}
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

// What the learned allocation falls back to without a usable model: Lyra's knapsack over the
// fallback ordering's order.
constexpr const char* kFallbackAllocation = kLearnedFallbackAllocation;

}  // namespace

LearnedOrdering::LearnedOrdering(std::string name, std::shared_ptr<const PolicyModel> model,
				 LearnedOptions options)
    : name_(std::move(name)), model_(std::move(model)), options_(options)
{
}

std::string LearnedOrdering::note() const
{
	return name_ + ": model " + options_.path + " (" + std::to_string(model_->parameter_count()) +
	       " parameters, window " + std::to_string(options_.window) + ")";
}

void LearnedOrdering::order(const ClusterView& view, std::vector<const Job*>& jobs) const
{
	int free_gpus = view.free_gpus();
	for (const Job* j : jobs)
		if (j->running())
			free_gpus += j->gpus_allocated;
	std::vector<const Job*> rest;
	EncodedWindow w = encode_window(view, jobs, free_gpus, options_.window, rest, /*units=*/false,
					options_.time_scale);
	std::vector<float> scores;
	model_->scores(w, scores);
	std::vector<int> order(w.rows());
	for (std::size_t i = 0; i < order.size(); ++i)
		order[i] = static_cast<int>(i);
	std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
		return scores[static_cast<std::size_t>(a)] > scores[static_cast<std::size_t>(b)];
	});
	jobs.clear();
	for (int r : order)
		jobs.push_back(w.jobs[static_cast<std::size_t>(r)]);
	for (const Job* j : rest)
		jobs.push_back(j);
}

LearnedAllocation::LearnedAllocation(std::shared_ptr<const PolicyModel> model, LearnedOptions options)
    : model_(std::move(model)), options_(options), rng_(options.seed, 7)
{
}

void LearnedAllocation::allocate(const AllocationInput& in, Plan& plan) const
{
	const ClusterView& view = in.view;
	const int free_gpus = in.free.training_free();
	std::vector<const Job*> rest;
	EncodedWindow w = encode_window(view, in.ordered, free_gpus, options_.window, rest, /*units=*/true,
					options_.time_scale);
	std::vector<float> scores;
	model_->scores(w, scores);
	double lp = 0;
	const RoundRows rows{w.need, w.unit, w.after, free_gpus};
	// The log-probability only matters for sampled rounds that are recorded (PPO).
	const bool sample = options_.sample;
	std::vector<int> picks =
		play_round(rows, scores, sample ? &rng_ : nullptr, sample && view.recorder ? &lp : nullptr);

	// Jobs in the order their first unit was picked, at the size their units reached.
	std::vector<const Job*> order;
	std::vector<int> targets;
	std::unordered_map<const Job*, std::size_t> at;
	int left = free_gpus;
	for (int p : picks) {
		const auto r = static_cast<std::size_t>(p);
		const Job* j = w.jobs[r];
		left -= w.need[r];
		if (!j)
			continue;
		auto it = at.find(j);
		if (it == at.end()) {
			at[j] = order.size();
			order.push_back(j);
			targets.push_back(w.size[r]);
		} else {
			targets[it->second] = std::max(targets[it->second], w.size[r]);
		}
	}
	// Beyond the window: first units, in order, from what is left.
	for (const Job* j : rest) {
		const int size = first_unit_gpus(*j);
		order.push_back(j);
		targets.push_back(size <= left ? size : 0);
		if (size <= left)
			left -= size;
	}
	// Window jobs that got nothing (requeued when running): listed so that the plan knows them.
	for (const Job* j : w.jobs)
		if (j && !at.count(j)) {
			at[j] = order.size();
			order.push_back(j);
			targets.push_back(0);
		}
	const AllocationInput picked{view, order, in.placement, in.free, in.reconsider_running};
	FreeMap free = in.free;
	realize_targets(picked, targets, free, plan, /*elastic=*/true, /*surplus_on_loaned=*/true);

	if (view.recorder) {
		const double value = model_->value(w);
		PolicyStep s = make_step(view, std::move(w), std::move(picks));
		s.sampled = options_.sample;
		s.log_prob = lp;
		s.value = value;
		view.recorder->record(std::move(s));
	}
}

std::string default_model_path()
{
	// The data directory the profiles come from decides: installed (or DLSCHED_DATADIR), its
	// models/dl2.pt; the source tree's contribs/ (a build tree's tools and test clusters), the source
	// tree's models/dl2.pt. An installed plugin never falls back to the tree it was built from
	// (a missing installed model is an error naming the installed path, not a file elsewhere).
	const std::string data = default_data_dir();
	const std::string tree = std::string(DLSCHED_SRCDIR) + "/contribs";
	auto canonical = [](const std::string& p) {
		char buf[PATH_MAX];
		return realpath(p.c_str(), buf) ? std::string(buf) : p;
	};
	if (canonical(data) == canonical(tree))
		return std::string(DLSCHED_SRCDIR) + "/models/dl2.pt";
	return data + "/models/dl2.pt";
}

namespace {

// The model of ModelFile= (the shipped one when empty), or why it cannot be used.
Result<std::shared_ptr<PolicyModel>> load_model(const Config& c, std::string& path)
{
	path = c.get_string("ModelFile").empty() ? default_model_path() : c.get_string("ModelFile");
	auto model = PolicyModel::load(path);
	if (model.is_ok())
		use_one_thread();
	return model;
}

LearnedOptions options_from(const Config& c, const std::string& path)
{
	LearnedOptions o;
	o.window = static_cast<std::size_t>(c.get_int("ModelWindow"));
	o.time_scale = c.get_double("ModelTimeScale");
	o.seed = static_cast<std::uint64_t>(c.get_int("Seed"));
	o.path = path;
	return o;
}

Result<std::unique_ptr<Ordering>> make_learned(const char* name, const Config& c)
{
	std::string path;
	auto model = load_model(c, path);
	if (model.is_ok())
		return std::unique_ptr<Ordering>(new LearnedOrdering(
			name, std::shared_ptr<const PolicyModel>(model.value()), options_from(c, path)));
	const std::string fb = c.get_string("ModelFallback");
	if (fb == "dl2" || fb == "dual-agent")
		return invalid_argument(
			"ModelFallback: '" + fb +
			"' is itself learned; name a heuristic (tiresias-las, srtf, fifo, ...)");
	PolicyRegistry heuristics;  // a fresh one: the caller's registry may be moving or gone by now
	register_builtin_policies(heuristics);
	auto fallback = heuristics.make_ordering(fb, c);
	if (!fallback.is_ok())
		return Status(fallback.status().code(), "ModelFallback: " + fallback.status().message());
	return std::unique_ptr<Ordering>(new FallbackOrdering(
		name, std::move(fallback).value(),
		model.status().message() + " (allocation by " + kFallbackAllocation + ")"));
}

// The learned allocation; without a usable model, kFallbackAllocation (the ordering says why).
Result<std::unique_ptr<Allocation>> make_learned_allocation(const Config& c)
{
	std::string path;
	auto model = load_model(c, path);
	if (model.is_ok())
		return std::unique_ptr<Allocation>(new LearnedAllocation(
			std::shared_ptr<const PolicyModel>(model.value()), options_from(c, path)));
	PolicyRegistry heuristics;
	register_builtin_policies(heuristics);
	return heuristics.make_allocation(kFallbackAllocation, c);
}

}  // namespace

void register_model_policies(PolicyRegistry& r)
{
	r.add_ordering(
		"dl2",
		"DL2's learned ordering (the policy network's score of each job's first unit), preemptive",
		[](const Config& c) { return make_learned("dl2", c); });
	r.add_allocation("dl2",
			 "DL2's learned allocation: the policy network gives jobs GPUs one unit at a time "
			 "and ends the round",
			 [](const Config& c) { return make_learned_allocation(c); });
	// The presets dl2 and dual-agent that use them are in register_builtin_policies().
}

void install()
{
	set_policy_extension(&register_model_policies);
}

}  // namespace dlsched::models

extern "C" void dlsched_models_install(void)
{
	dlsched::models::install();
}
