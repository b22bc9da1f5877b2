#include "episodes.h"

#include <algorithm>

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
		return invalid_argument("'" + text + "': want FILE or FILE@START:COUNT (jobs START..START+COUNT-1)");
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
			return invalid_argument("'" + text + "': the trace has only " + std::to_string(n) + " jobs");
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

Result<Episode> Workloads::draw(std::mt19937_64& rng) const
{
	std::uniform_int_distribution<std::size_t> pick(0, specs_.size() - 1);
	const TraceSpec& s = specs_[pick(rng)];
	const std::size_t n = std::min(options_.jobs, s.count);
	std::uniform_int_distribution<std::size_t> from(s.start, s.start + s.count - n);
	std::uniform_real_distribution<double> load(options_.load_min, options_.load_max);
	const std::size_t a = from(rng);
	const double l = load(rng);
	return make(s, a, n, l, rng());
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

// The teacher's ordering, unchanged, recording what it decided over the window a learned policy
// would see. A non-preemptive teacher keeps every running job: those rows come first.
class TeacherOrdering : public Ordering {
public:
	TeacherOrdering(std::unique_ptr<Ordering> inner, std::size_t window) : inner_(std::move(inner)), window_(window) {}
	const char* name() const override { return inner_->name(); }
	bool preemptive() const override { return inner_->preemptive(); }
	void order(const ClusterView& view, std::vector<const Job*>& jobs) const override
	{
		std::vector<const Job*> given = jobs;
		inner_->order(view, jobs);
		if (!view.recorder)
			return;
		std::vector<const Job*> all = given;
		if (!inner_->preemptive())
			all.insert(all.end(), view.running.begin(), view.running.end());
		int free_gpus = view.free_gpus();
		for (const Job* r : view.running)
			free_gpus += r->gpus_allocated;
		std::vector<const Job*> rest;
		models::EncodedWindow w = models::encode_window(view, all, free_gpus, window_, rest);
		if (w.rows() == 0)
			return;
		std::unordered_map<JobId, std::size_t> rank;
		for (std::size_t i = 0; i < jobs.size(); ++i)
			rank[jobs[i]->id] = i + 1;
		std::vector<int> order(w.rows());
		for (std::size_t i = 0; i < order.size(); ++i)
			order[i] = static_cast<int>(i);
		auto key = [&](int r) -> std::size_t {
			const Job* j = w.jobs[static_cast<std::size_t>(r)];
			auto it = rank.find(j->id);
			return it == rank.end() ? 0 : it->second;  // kept running jobs (non-preemptive) first
		};
		std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
		view.recorder->record(models::make_step(view, std::move(w), std::move(order)));
	}

private:
	std::unique_ptr<Ordering> inner_;
	std::size_t window_;
};

Result<EpisodeResult> simulate_with(const Episode& episode, const ModelCatalog& models, const EpisodeOptions& options,
                                    const PolicyRegistry& registry, const std::string& preset,
                                    const std::string& ordering, const std::string& label, bool record)
{
	Config c;
	Status st = c.set("Policy", preset, "dlsched-train");
	if (st.is_ok())
		st = c.set("OrderingPolicy", ordering, "dlsched-train");
	if (!st.is_ok())
		return st;
	auto sched = Scheduler::create(c, registry);
	if (!sched.is_ok())
		return sched.status();
	StepLog recorder;
	sim::SimOptions so;
	so.sched_interval = options.sched_interval;
	so.restart_cost = options.restart_cost;
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

// The ordering of the baseline preset `teacher`, after checking that it builds.
struct Teacher {
	std::string ordering;
	bool preemptive = false;
};
Result<Teacher> find_teacher(const PolicyRegistry& registry, const std::string& teacher)
{
	auto spec = registry.preset(teacher);
	if (!spec.is_ok())
		return spec.status();
	auto probe = registry.make_ordering(spec->ordering, Config());
	if (!probe.is_ok())
		return probe.status();
	return Teacher{spec->ordering, (*probe)->preemptive()};
}

// The teacher's ordering, recording its order over the learned policy's window.
Result<std::unique_ptr<Ordering>> make_teacher(const PolicyRegistry& registry, const std::string& ordering,
                                               const Config& c, std::size_t window)
{
	auto o = registry.make_ordering(ordering, c);
	if (!o.is_ok())
		return o.status();
	return std::unique_ptr<Ordering>(new TeacherOrdering(std::move(o).value(), window));
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

}  // namespace

Result<EpisodeResult> run_teacher(const Episode& episode, const std::string& teacher, const ModelCatalog& models,
                                  const EpisodeOptions& options, std::size_t window)
{
	PolicyRegistry registry;
	register_builtin_policies(registry);
	auto t = find_teacher(registry, teacher);
	if (!t.is_ok())
		return t.status();
	const std::string inner = t->ordering;
	registry.add_ordering("dlsched-train-teacher", "the teacher, recorded",
	                      [inner, window, &registry](const Config& c) { return make_teacher(registry, inner, c, window); });
	return simulate_with(episode, models, options, registry, teacher, "dlsched-train-teacher", teacher, true);
}

namespace {

// DAgger (Ross et al., AISTATS 2011): the learned policy acts, the teacher labels the state it
// reached. The teacher orders a copy of the jobs (TeacherOrdering records that order over the
// learned policy's window); the learned ordering decides, unrecorded.
class DaggerOrdering : public Ordering {
public:
	DaggerOrdering(std::unique_ptr<Ordering> teacher, std::unique_ptr<Ordering> learner)
	    : teacher_(std::move(teacher)), learner_(std::move(learner))
	{
	}
	const char* name() const override { return learner_->name(); }
	bool preemptive() const override { return learner_->preemptive(); }
	void order(const ClusterView& view, std::vector<const Job*>& jobs) const override
	{
		std::vector<const Job*> labelled = jobs;
		teacher_->order(view, labelled);
		ClusterView quiet = view;
		quiet.recorder = nullptr;
		learner_->order(quiet, jobs);
	}

private:
	std::unique_ptr<Ordering> teacher_, learner_;
};

}  // namespace

Result<EpisodeResult> run_dagger(const Episode& episode, std::shared_ptr<const models::PolicyModel> model,
                                 const std::string& teacher, const std::string& preset, const ModelCatalog& models,
                                 const EpisodeOptions& options, std::size_t window)
{
	PolicyRegistry registry;
	register_builtin_policies(registry);
	auto t = find_teacher(registry, teacher);
	if (!t.is_ok())
		return t.status();
	if (!t->preemptive)
		return invalid_argument("dagger: teacher '" + teacher +
		                        "' is not preemptive; its order of running jobs is not a label (use srtf or tiresias-las)");
	const std::string inner = t->ordering;
	const models::LearnedOptions lo = training_options(window, false, 1);
	registry.add_ordering("dlsched-train-dagger", "the policy acts, the teacher labels",
	                      [inner, window, model, lo, &registry](const Config& c) -> Result<std::unique_ptr<Ordering>> {
		                      auto labels = make_teacher(registry, inner, c, window);
		                      if (!labels.is_ok())
			                      return labels.status();
		                      std::unique_ptr<Ordering> acts(new models::LearnedOrdering("dl2", model, lo));
		                      return std::unique_ptr<Ordering>(new DaggerOrdering(std::move(labels).value(), std::move(acts)));
	                      });
	return simulate_with(episode, models, options, registry, preset, "dlsched-train-dagger", preset, true);
}

Result<EpisodeResult> run_preset(const Episode& episode, const std::string& preset, const ModelCatalog& models,
                                 const EpisodeOptions& options)
{
	PolicyRegistry registry;
	register_builtin_policies(registry);
	auto spec = registry.preset(preset);
	if (!spec.is_ok())
		return spec.status();
	return simulate_with(episode, models, options, registry, preset, spec->ordering, preset, false);
}

Result<EpisodeResult> run_policy(const Episode& episode, std::shared_ptr<const models::PolicyModel> model, bool sample,
                                 std::uint64_t seed, const std::string& preset, const ModelCatalog& models,
                                 const EpisodeOptions& options, std::size_t window, bool record)
{
	PolicyRegistry registry;
	register_builtin_policies(registry);
	const models::LearnedOptions lo = training_options(window, sample, seed);
	registry.add_ordering("dlsched-train-policy", "the policy being trained",
	                      [model, lo](const Config&) -> Result<std::unique_ptr<Ordering>> {
		                      return std::unique_ptr<Ordering>(new models::LearnedOrdering("dl2", model, lo));
	                      });
	return simulate_with(episode, models, options, registry, preset, "dlsched-train-policy", preset, record);
}

}  // namespace dlsched::train
