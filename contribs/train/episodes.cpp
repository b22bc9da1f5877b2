#include "episodes.h"

#include <algorithm>
#include <unordered_map>

#include "../sim/cluster_spec.h"
#include "models/features.h"
#include "models/learned.h"
#include "policy/scheduler.h"
#include "util/csv.h"

namespace dlsched::train {

Result<TraceSpec> parse_trace_spec(const std::string& text)
{
	TraceSpec s;
	s.text = text;
	const std::size_t at = text.rfind('@');
	if (at == std::string::npos) {
		s.path = text;
		return s;
	}
	s.path = text.substr(0, at);
	const std::string range = text.substr(at + 1);
	const std::size_t colon = range.find(':');
	long long a = -1, n = -1;
	if (colon == std::string::npos || !parse_integer(range.substr(0, colon), a) ||
	    !parse_integer(range.substr(colon + 1), n) || a < 0 || n < 1)
		return invalid_argument("'" + text +
					"': want FILE or FILE@START:COUNT (jobs START..START+COUNT-1)");
	s.start = static_cast<std::size_t>(a);
	s.count = static_cast<std::size_t>(n);
	return s;
}

Result<Workloads> Workloads::load(const std::vector<std::string>& specs, const ModelCatalog& models,
				  const EpisodeOptions& options)
{
	Workloads w;
	w.models_ = &models;
	w.options_ = options;
	auto cluster = sim::parse_cluster(options.cluster, models.gpu_types());
	if (!cluster.is_ok())
		return cluster.status();
	w.nodes_ = cluster->nodes;
	w.fluctuation_ = cluster->fluctuation;
	for (const std::string& text : specs) {
		auto spec = parse_trace_spec(text);
		if (!spec.is_ok())
			return spec.status();
		BuildOptions b;
		auto full = load_workload(spec->path, ReadOptions(), b, models);
		if (!full.is_ok())
			return full.status();
		const std::size_t n = full->jobs.size();
		if (spec->start >= n)
			return invalid_argument("'" + text + "': the trace has only " + std::to_string(n) +
						" jobs");
		if (spec->count == 0 || spec->start + spec->count > n)
			spec->count = n - spec->start;
		w.specs_.push_back(spec.value());
		w.lengths_.push_back(n);
	}
	if (w.specs_.empty())
		return invalid_argument("no workloads given");
	return w;
}

Result<Episode> Workloads::make(const TraceSpec& spec, std::size_t start, std::size_t count, double load,
				std::uint64_t seed) const
{
	BuildOptions b;
	b.load_scale = load;
	b.seed = seed;
	b.elastic_fraction = options_.elastic_fraction;
	auto full = load_workload(spec.path, ReadOptions(), b, *models_);
	if (!full.is_ok())
		return full.status();
	Episode e;
	e.nodes = nodes_;
	e.workload.source = full->source;
	e.workload.format = full->format;
	const std::size_t end = std::min(full->jobs.size(), start + count);
	const Seconds t0 = start < end ? full->jobs[start].submit_time : 0;
	for (std::size_t i = start; i < end; ++i) {
		Job j = full->jobs[i];
		j.id = static_cast<JobId>(e.workload.jobs.size() + 1);  // metrics index the bound by id - 1
		j.submit_time -= t0;
		e.workload.jobs.push_back(std::move(j));
		e.workload.trace_runtime_s.push_back(full->trace_runtime_s[i]);
	}
	char name[64];
	std::snprintf(name, sizeof name, "@%zu:%zu x%.2f", start, end - start, load);
	e.name = spec.path.substr(spec.path.rfind('/') + 1) + name;
	e.bound = sim::bound_runtimes(e.workload, *models_, e.nodes);
	e.speed_factor = sim::draw_speed_factors(fluctuation_, seed);
	return e;
}

Result<Episode> Workloads::draw(Rng& rng) const
{
	const TraceSpec& s = specs_[rng.below(specs_.size())];
	const std::size_t n = std::min(options_.jobs, s.count);
	const std::size_t a = s.start + rng.below(s.count - n + 1);
	const double l = options_.load_min + (options_.load_max - options_.load_min) * rng.uniform();
	return make(s, a, n, l, rng.next());
}

Result<std::vector<Episode>> Workloads::whole(double load, std::uint64_t seed) const
{
	std::vector<Episode> out;
	for (const TraceSpec& s : specs_) {
		auto e = make(s, s.start, s.count, load, seed);
		if (!e.is_ok())
			return e.status();
		out.push_back(std::move(e).value());
	}
	return out;
}

namespace {

// Records what `inner` decided as the picks of a round over the window the learned allocation would
// see (features.h picks_for_sizes): a teacher's decisions as labels. `rank` orders first units: the
// inner allocation's input order.
void record_plan(const AllocationInput& in, const Plan& plan, std::size_t window)
{
	const ClusterView& view = in.view;
	std::vector<const Job*> rest;
	models::EncodedWindow w = models::encode_window(view, in.ordered, in.free.training_free(), window,
							rest, /*units=*/true);
	if (w.rows() <= 1)
		return;
	std::unordered_map<JobId, int> sizes;
	for (const Assignment& a : plan)
		if (a.job)
			sizes[a.job->id] = a.gpus;
	std::unordered_map<JobId, std::size_t> rank;
	for (std::size_t i = 0; i < in.ordered.size(); ++i)
		rank.emplace(in.ordered[i]->id, i);
	std::vector<int> picks = models::picks_for_sizes(view, w, sizes, rank);
	view.recorder->record(models::make_step(view, std::move(w), std::move(picks)));
}

// A teacher's allocation, unchanged, recording its decisions (record_plan).
class TeacherAllocation : public Allocation {
public:
	TeacherAllocation(std::unique_ptr<Allocation> inner, std::size_t window)
	    : inner_(std::move(inner)), window_(window)
	{
	}
	const char* name() const override { return inner_->name(); }
	bool elastic() const override { return inner_->elastic(); }
	void allocate(const AllocationInput& in, Plan& plan) const override
	{
		inner_->allocate(in, plan);
		if (in.view.recorder && in.reconsider_running)
			record_plan(in, plan, window_);
	}

private:
	std::unique_ptr<Allocation> inner_;
	std::size_t window_;
};

// DAgger (Ross et al., AISTATS 2011): the learned allocation acts, the teacher labels the state it
// reached: the teacher's ordering sorts a copy of the candidates, its allocation decides on them
// (recorded, then thrown away).
class DaggerAllocation : public Allocation {
public:
	DaggerAllocation(std::unique_ptr<Ordering> order, std::unique_ptr<Allocation> teacher,
			 std::unique_ptr<Allocation> learner, std::size_t window)
	    : order_(std::move(order)),
	      teacher_(std::move(teacher)),
	      learner_(std::move(learner)),
	      window_(window)
	{
	}
	const char* name() const override { return learner_->name(); }
	bool elastic() const override { return true; }
	void allocate(const AllocationInput& in, Plan& plan) const override
	{
		if (in.view.recorder) {
			std::vector<const Job*> sorted = in.ordered;
			order_->order(in.view, sorted);
			const AllocationInput t{in.view, sorted, in.placement, in.free,
						in.reconsider_running};
			Plan labels;
			teacher_->allocate(t, labels);
			record_plan(t, labels, window_);
		}
		ClusterView quiet = in.view;
		quiet.recorder = nullptr;
		const AllocationInput acts{quiet, in.ordered, in.placement, in.free, in.reconsider_running};
		learner_->allocate(acts, plan);
	}

private:
	std::unique_ptr<Ordering> order_;
	std::unique_ptr<Allocation> teacher_, learner_;
	std::size_t window_;
};

Result<EpisodeResult> simulate_with(const Episode& episode, const ModelCatalog& models,
				    const EpisodeOptions& options, const PolicyRegistry& registry,
				    const std::string& preset, const std::string& ordering,
				    const std::string& allocation, const std::string& label, bool record)
{
	Config c;
	Status st = c.set("Policy", preset, "dlsched-train");
	if (st.is_ok())
		st = c.set("OrderingPolicy", ordering, "dlsched-train");
	if (st.is_ok())
		st = c.set("AllocationPolicy", allocation, "dlsched-train");
	// The policies' view of a preemption's grace is the engine's (dlsched-sim sets both from one key).
	if (st.is_ok())
		st = c.set("PreemptGrace", std::to_string(options.preempt_grace), "dlsched-train");
	if (!st.is_ok())
		return st;
	auto sched = Scheduler::create(c, registry);
	if (!sched.is_ok())
		return sched.status();
	StepLog recorder;
	sim::SimOptions so;
	so.sched_interval = options.sched_interval;
	so.restart_cost = options.restart_cost;
	so.restart_model = options.restart_model;
	so.preempt_grace = options.preempt_grace;
	so.requeue_delay = options.requeue_delay;
	so.estimates =
		options.estimates == "predicted" ? sim::Estimates::kPredicted : sim::Estimates::kOracle;
	so.drop_unrunnable = true;
	so.speed_factor = episode.speed_factor;
	if (record)
		so.recorder = &recorder;
	auto r = sim::simulate(episode.workload, models, episode.nodes, **sched, so);
	if (!r.is_ok())
		return Status(r.status().code(), episode.name + ": " + r.status().message());
	EpisodeResult out;
	out.metrics = sim::compute_metrics(label, *r, episode.workload, episode.bound);
	out.makespan = r->makespan;
	out.steps = std::move(recorder.steps);
	return out;
}

// The teacher preset's policies, after checking that they build; a teacher's decisions are labels
// only when it reconsiders running jobs (preemptive ordering or elastic allocation).
Result<SchedulerSpec> find_teacher(const PolicyRegistry& registry, const std::string& teacher)
{
	auto spec = registry.preset(teacher);
	if (!spec.is_ok())
		return spec.status();
	auto o = registry.make_ordering(spec->ordering, Config());
	if (!o.is_ok())
		return o.status();
	auto a = registry.make_allocation(spec->allocation, Config());
	if (!a.is_ok())
		return a.status();
	if (!(*o)->preemptive() && !(*a)->elastic())
		return invalid_argument(
			"teacher '" + teacher +
			"' neither preempts nor resizes: its decisions about running jobs are not labels "
			"(use srtf, tiresias-las, mckp or optimus)");
	return spec;
}

models::LearnedOptions training_options(std::size_t window, bool sample, std::uint64_t seed)
{
	models::LearnedOptions lo;
	lo.window = window;
	lo.sample = sample;
	lo.seed = seed;
	lo.path = "(in training)";
	return lo;
}

// Registers the model being trained as ordering and allocation "dlsched-train-policy".
void add_policy(PolicyRegistry& registry, std::shared_ptr<const models::PolicyModel> model,
		const models::LearnedOptions& lo)
{
	models::LearnedOptions greedy = lo;
	greedy.sample = false;
	registry.add_ordering(
		"dlsched-train-policy", "the policy being trained",
		[model, greedy](const Config&) -> Result<std::unique_ptr<Ordering>> {
			return std::unique_ptr<Ordering>(new models::LearnedOrdering("dl2", model, greedy));
		});
	registry.add_allocation(
		"dlsched-train-policy", "the policy being trained",
		[model, lo](const Config&) -> Result<std::unique_ptr<Allocation>> {
			return std::unique_ptr<Allocation>(new models::LearnedAllocation(model, lo));
		});
}

}  // namespace

Result<EpisodeResult> run_teacher(const Episode& episode, const std::string& teacher,
				  const ModelCatalog& models, const EpisodeOptions& options,
				  std::size_t window)
{
	PolicyRegistry registry;
	register_builtin_policies(registry);
	auto t = find_teacher(registry, teacher);
	if (!t.is_ok())
		return t.status();
	const std::string inner = t->allocation;
	registry.add_allocation(
		"dlsched-train-teacher", "the teacher, recorded",
		[inner, window, &registry](const Config& c) -> Result<std::unique_ptr<Allocation>> {
			auto a = registry.make_allocation(inner, c);
			if (!a.is_ok())
				return a.status();
			return std::unique_ptr<Allocation>(
				new TeacherAllocation(std::move(a).value(), window));
		});
	return simulate_with(episode, models, options, registry, teacher, t->ordering,
			     "dlsched-train-teacher", teacher, true);
}

Result<EpisodeResult> run_dagger(const Episode& episode, std::shared_ptr<const models::PolicyModel> model,
				 const std::string& teacher, const std::string& preset,
				 const ModelCatalog& models, const EpisodeOptions& options,
				 std::size_t window)
{
	PolicyRegistry registry;
	register_builtin_policies(registry);
	auto t = find_teacher(registry, teacher);
	if (!t.is_ok())
		return t.status();
	const SchedulerSpec spec = t.value();
	const models::LearnedOptions lo = training_options(window, false, 1);
	add_policy(registry, model, lo);
	registry.add_allocation(
		"dlsched-train-dagger", "the policy acts, the teacher labels",
		[spec, window, model, lo, &registry](const Config& c) -> Result<std::unique_ptr<Allocation>> {
			auto o = registry.make_ordering(spec.ordering, c);
			if (!o.is_ok())
				return o.status();
			auto a = registry.make_allocation(spec.allocation, c);
			if (!a.is_ok())
				return a.status();
			std::unique_ptr<Allocation> acts(new models::LearnedAllocation(model, lo));
			return std::unique_ptr<Allocation>(new DaggerAllocation(
				std::move(o).value(), std::move(a).value(), std::move(acts), window));
		});
	return simulate_with(episode, models, options, registry, preset, "dlsched-train-policy",
			     "dlsched-train-dagger", preset, true);
}

Result<EpisodeResult> run_preset(const Episode& episode, const std::string& preset,
				 const ModelCatalog& models, const EpisodeOptions& options)
{
	PolicyRegistry registry;
	register_builtin_policies(registry);
	auto spec = registry.preset(preset);
	if (!spec.is_ok())
		return spec.status();
	return simulate_with(episode, models, options, registry, preset, spec->ordering, spec->allocation,
			     preset, false);
}

Result<EpisodeResult> run_policy(const Episode& episode, std::shared_ptr<const models::PolicyModel> model,
				 bool sample, std::uint64_t seed, const std::string& preset,
				 const ModelCatalog& models, const EpisodeOptions& options,
				 std::size_t window, bool record)
{
	PolicyRegistry registry;
	register_builtin_policies(registry);
	add_policy(registry, model, training_options(window, sample, seed));
	return simulate_with(episode, models, options, registry, preset, "dlsched-train-policy",
			     "dlsched-train-policy", preset, record);
}

}  // namespace dlsched::train
