// Discrete-event simulation: arrivals, completions and scheduling cycles. Job progress is kept
// lazily: a running job's epochs are brought up to date only when a cycle looks at it or its speed
// changes, and its completion is an event in a heap (stale entries are skipped by version).
#include "engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <queue>
#include <sstream>

#include "policy/free_map.h"
#include "predict/evidence.h"
#include "util/random.h"

namespace dlsched::sim {

namespace {

constexpr double kEps = 1e-9;
// Rng streams of the speed measurements' noise and of the jobs' checkpoint and warm-up times.
constexpr std::uint64_t kMeasurementStream = 0x3ea5;
constexpr std::uint64_t kCostStream = 0xc057;

struct SimJob {
	// Seconds per epoch on one reference GPU: the truth, which the job runs at. (Engine::jobs_
	// carries what policies see, the same under Estimates::kOracle.)
	Seconds epoch_time_1gpu = 0;
	double rate = 0;                    // epochs per second while progressing
	Seconds progress_from = 0;          // progress resumes here (after a restart's cost)
	Seconds progress_until = INFINITY;  // and stops here (a stopping job's safe point, or its kill)
	Seconds release_at = -1;            // a stopping job frees its GPUs then (>= 0: a release is due)
	bool killed = false;                // stopping: killed at release_at, back to its last epoch boundary
	Seconds last_update = 0;
	std::uint64_t version = 0;  // completion events of older versions are stale
	bool measured = false;      // the current run has been measured once already
	bool done = false;
	bool dropped = false;
	// RestartCost=model: this job's checkpoint write, read and warm-up times relative to its
	// model profile's (log-normal, mean 1).
	double write_factor = 1, read_factor = 1, warmup_factor = 1;
};

// A job's next event: it completes, or, stopping, it frees its GPUs.
struct Completion {
	Seconds time;
	std::size_t index;
	std::uint64_t version;
	bool release = false;
	bool operator>(const Completion& o) const { return time != o.time ? time > o.time : index > o.index; }
};

std::string seconds(Seconds t)
{
	std::ostringstream os;
	os << static_cast<long long>(std::llround(t)) << "s";
	return os.str();
}

class Engine {
public:
	Engine(const Workload& w, const ModelCatalog& models, std::vector<Node> nodes, const Scheduler& s,
	       const SimOptions& o)
	    : models_(models),
	      nodes_(std::move(nodes)),
	      scheduler_(s),
	      opt_(o),
	      jobs_(w.jobs),
	      state_(w.jobs.size()),
	      noise_rng_(o.seed, kMeasurementStream)
	{
		JobId max_id = 0;
		for (const Job& j : jobs_)
			max_id = std::max(max_id, j.id);
		index_of_.assign(static_cast<std::size_t>(max_id) + 1, kNone);
		for (std::size_t i = 0; i < jobs_.size(); ++i)
			index_of_[jobs_[i].id] = i;
		outcome_.resize(jobs_.size());
		for (std::size_t i = 0; i < jobs_.size(); ++i) {
			outcome_[i].id = jobs_[i].id;
			outcome_[i].submit = jobs_[i].submit_time;
			outcome_[i].deadline = jobs_[i].deadline;
		}
		for (const Node& n : nodes_) {
			total_gpus_ += n.gpus_total;
			node_sizes_.push_back(n.gpus_total);
			if (n.kind == PartitionKind::kInference)
				inference_gpus_ += n.gpus_total;
		}
		reclaim_at_.assign(nodes_.size(), -1);
		reclaimed_now_.assign(nodes_.size(), false);
		if (!jobs_.empty()) {
			demand_origin_ = window_from_ = jobs_.front().submit_time;
			window_to_ = jobs_.back().submit_time;
		}
		std::sort(node_sizes_.begin(), node_sizes_.end(), std::greater<int>());
		periodic_policy_ = scheduler_.ordering().preemptive() || scheduler_.allocation().elastic();
		if (!o.accounts.empty()) {
			std::map<std::string, int> idx;
			for (std::size_t a = 0; a < o.accounts.size(); ++a)
				idx[o.accounts[a].name] = static_cast<int>(a);
			account_of_.assign(jobs_.size(), -1);
			for (std::size_t i = 0; i < jobs_.size(); ++i) {
				auto it = idx.find(jobs_[i].account);
				account_of_[i] = it == idx.end() ? -1 : it->second;
			}
			std::vector<double> quota;
			for (const Account& a : o.accounts)
				quota.push_back(a.quota_gpus);
			ledger_ = std::make_unique<AccountLedger>(quota, o.quota_reclaim_timeout);
		}
		if (o.guard_scheduler && o.guard.enabled) {
			guard_ = std::make_unique<GuardState>(o.guard.margin);
			active_ = o.guard_scheduler;
			periodic_policy_ = periodic_policy_ || o.guard_scheduler->ordering().preemptive() ||
					   o.guard_scheduler->allocation().elastic();
			if (!jobs_.empty())
				next_guard_ = jobs_.front().submit_time + o.guard.interval;
		}
		for (std::size_t i = 0; i < jobs_.size(); ++i) {
			outcome_[i].qos = jobs_[i].qos;
			outcome_[i].account = jobs_[i].account;
			state_[i].epoch_time_1gpu = jobs_[i].epoch_time_1gpu;
		}
		if (o.estimates == Estimates::kPredicted) {
			predict::HintLimits limits = o.hint_limits;
			limits.gpus_per_node =
				node_sizes_.empty() ? limits.gpus_per_node : node_sizes_.front();
			estimates_ = std::make_unique<EstimateModel>(models_, jobs_, o.seed,
								     o.measurement_noise, limits);
		}
		if (o.restart_model && o.cost_noise > 0) {
			Rng rng(o.seed, kCostStream);
			const double sd = o.cost_noise;
			auto draw = [&]() { return std::exp(sd * rng.normal() - sd * sd / 2); };
			for (SimJob& sj : state_) {
				sj.write_factor = draw();
				sj.read_factor = draw();
				sj.warmup_factor = draw();
			}
		}
	}

	Result<SimResult> run();

private:
	static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

	Status check_runnable();
	void advance(std::size_t i, Seconds t);
	// Throughput of the job's placement relative to one reference GPU: its speedup times its slowest
	// node's speed for its model, with the nodes' hidden factors (`hidden`: what it runs at) or
	// without (what the host reckons from the catalog).
	double placed_speed(std::size_t i, bool hidden) const;
	double rate_of(std::size_t i) const;
	// Estimates::kPredicted: what the policies see of each waiting and running job, now.
	void refresh_estimates();
	void update_speed(std::size_t i);
	// The seconds a (re)started or resized run spends without progress: restoring its checkpoint
	// (RestartCost=model: read + warm-up at its new speed; else RestartCost).
	Seconds resume_seconds(std::size_t i, bool resize) const;
	Status request_stop(const Action& a, std::size_t i);
	void stop_run(std::size_t i);  // the run ends, the job goes back to pending
	void release(std::size_t i);   // a stopping job's GPUs are free
	PreemptionCost cost_estimate(const Job& j) const;
	// A requeued job still within RequeueDelay=: not startable, not in the view.
	bool held_back(std::size_t i) const
	{
		const Job& j = jobs_[i];
		return opt_.requeue_delay > 0 && j.last_stop_time >= 0 &&
		       now_ + kEps < j.last_stop_time + opt_.requeue_delay;
	}
	// When the next pending job held back by RequeueDelay= may start (INFINITY: none).
	Seconds next_requeue_release() const;
	Status cycle();
	// The guard's shadow evaluation now: both replays, then the choice of the next cycles.
	void guard_evaluate();
	ClusterView make_view() const;
	Status apply(const Action& a);
	Status fail(const Action& a, const std::string& what) const;
	Status check_placement(const Action& a, const Job& j) const;
	// Whether the placement fits once the jobs that are stopping (two-step preemption) have freed
	// their GPUs, though not now: such a start waits, as Slurm's does (select_nodes fails and the
	// job starts at a later cycle), instead of failing the run.
	bool fits_after_stops(const Action& a) const;
	void finish(std::size_t i);
	double node_factor(NodeIndex n) const
	{
		return opt_.speed_factor.empty() ? 1.0 : opt_.speed_factor[n];
	}
	void measure(std::size_t i);
	int fewest_nodes(int gpus) const;

	const ModelCatalog& models_;
	std::vector<Node> nodes_;
	const Scheduler& scheduler_;
	const Scheduler* active_ = &scheduler_;  // who decides the cycles (the guard's choice)
	SimOptions opt_;
	std::vector<Job> jobs_;
	std::vector<SimJob> state_;
	std::vector<JobOutcome> outcome_;
	std::vector<std::size_t> index_of_;
	std::vector<std::size_t> pending_;  // by submit time, then id
	std::vector<std::size_t> running_;  // by id
	std::priority_queue<Completion, std::vector<Completion>, std::greater<Completion>> completions_;
	std::vector<double> decision_ms_;
	Seconds now_ = 0;
	std::uint64_t cycle_ = 0;
	int total_gpus_ = 0;
	std::vector<int> node_sizes_;  // GPUs per node, largest first
	double lost_gpu_s_ = 0;
	bool periodic_policy_ = false;
	Seconds next_change_ = INFINITY;  // Ordering::next_change() after the last cycle
	std::size_t dropped_ = 0;
	std::size_t newly_cancelled_ = 0;   // held or cancelled by the Admission policy, not yet counted done
	std::vector<std::size_t> changed_;  // jobs whose allocation an action changed this cycle
	bool freed_in_cycle_ = false;       // a job stopped during the cycle (its GPUs are free)
	std::vector<std::size_t> deferred_;  // jobs whose resize waits for GPUs being freed (this cycle)
	std::vector<SpeedObservation> observations_;  // oldest first, at most opt_.observation_history
	Rng noise_rng_;
	std::unique_ptr<EstimateModel> estimates_;  // Estimates::kPredicted only
	std::size_t next_arrival_ = 0;              // jobs [0, next_arrival_) have been submitted
	// The guard (SimOptions::guard).
	std::unique_ptr<GuardState> guard_;
	Seconds next_guard_ = INFINITY;
	std::size_t guard_arrivals_ = 0;  // next_arrival_ at the last evaluation
	std::vector<GuardVerdict> guard_log_;
	// What the controller recorded at each evaluation: the unfinished jobs and their epochs done then
	// (the backlog a later evaluation's window starts with).
	struct GuardMark {
		Seconds at;
		std::vector<std::pair<std::size_t, double>> active;
	};
	std::vector<GuardMark> guard_marks_;
	std::vector<double> guard_eval_ms_;
	std::size_t learned_cycles_ = 0;
	// Capacity loaning.
	int inference_gpus_ = 0;
	Seconds demand_origin_ = 0;        // the workload's first submission: the demand series' time 0
	double demand_ = 0;                // inference demand now
	std::vector<Seconds> reclaim_at_;  // per node: when its reclaim began (-1: none under way)
	std::vector<bool> reclaimed_now_;  // per node: taken back by the cycle being applied
	Seconds short_since_ = -1;         // inference has lacked GPUs since then (-1: it has not)
	double loaned_gpu_s_ = 0, shortfall_gpu_s_ = 0, inference_gpu_s_ = 0;
	long reclaims_ = 0, late_reclaims_ = 0, reclaim_preemptions_ = 0;
	// The arrival window (first to last submission): GPU-seconds used in it, training's and inference's.
	Seconds window_from_ = 0, window_to_ = 0;
	double window_gpu_s_ = 0;
	Seconds in_window(Seconds a, Seconds b) const
	{
		return std::max(0.0, std::min(b, window_to_) - std::max(a, window_from_));
	}

	double demand_now() const
	{
		return opt_.inference_demand.empty() ? 0.0 : opt_.inference_demand.at(now_ - demand_origin_);
	}
	// GPUs inference needs and does not have now: on nodes loaned, or still held by training.
	double inference_unmet() const;
	void account_inference(Seconds until);
	Seconds next_reclaim_deadline() const;
	void enforce_reclaims();
	void finish_reclaims();
	// Accounts: each job's (index into opt_.accounts, -1: none), their usage now, the ledger.
	std::vector<int> account_of_;
	std::unique_ptr<AccountLedger> ledger_;
	long quota_reclaims_ = 0;
	double quota_reclaimed_gpus_ = 0;
	// The accounts' demand and holdings from now_ to `until` (the state holds in between): their
	// ledger, and their usage decayed.
	void account_teams(Seconds until);
};

Status Engine::check_runnable()
{
	// A job that no set of eligible nodes can hold would wait forever.
	std::map<std::string, int> capacity;
	for (std::size_t i = 0; i < jobs_.size(); ++i) {
		const Job& j = jobs_[i];
		auto it = capacity.find(j.partition);
		if (it == capacity.end()) {
			ClusterView v;
			v.nodes = Span<const Node>(nodes_.data(), nodes_.size());
			FreeMap free(v);
			Job probe;
			probe.partition = j.partition;
			it = capacity.emplace(j.partition, free.eligible_free(probe)).first;
		}
		if (j.gpus_min <= it->second)
			continue;
		if (!opt_.drop_unrunnable)
			return invalid_argument(
				"job " + std::to_string(j.id) + " needs at least " +
				std::to_string(j.gpus_min) + " GPUs but its partition '" +
				(j.partition.empty() ? "(training)" : j.partition) + "' has " +
				std::to_string(it->second) +
				" in all: use a bigger cluster, or --drop-unrunnable to leave such jobs out");
		state_[i].dropped = true;
		++dropped_;
	}
	return Status::ok();
}

// Progress and service up to `t`. Time holding GPUs without progress (restoring a checkpoint,
// writing one) is lost GPU time.
void Engine::advance(std::size_t i, Seconds t)
{
	Job& j = jobs_[i];
	SimJob& s = state_[i];
	const Seconds dt = t - s.last_update;
	if (dt <= 0)
		return;
	j.executed_s += dt;
	j.attained_gpu_s += j.gpus_allocated * dt;
	outcome_[i].gpu_seconds += j.gpus_allocated * dt;
	window_gpu_s_ += j.gpus_allocated * in_window(s.last_update, t);
	for (const NodeShare& sh : j.placement)
		if (nodes_[sh.node].kind == PartitionKind::kInference)
			loaned_gpu_s_ += sh.gpus * dt;
	const Seconds progressing =
		std::max(0.0, std::min(t, s.progress_until) - std::max(s.last_update, s.progress_from));
	if (progressing > 0) {
		const double before = j.epochs_done;
		j.epochs_done = std::min(j.epochs_total, j.epochs_done + s.rate * progressing);
		// The epochs it finished are timed, at the rate it ran them (and seen on one GPU by the
		// catalog's speed of its placement: a node's hidden factor stays in the measurement).
		const double finished = std::floor(j.epochs_done) - std::floor(before);
		if (estimates_ && finished > 0 && s.rate > 0)
			estimates_->timed(i, finished, placed_speed(i, false) / s.rate);
	}
	const double idle = j.gpus_allocated * (dt - progressing);
	if (idle > 0) {
		lost_gpu_s_ += idle;
		outcome_[i].lost_gpu_s += idle;
	}
	s.last_update = t;
}

// Speed from the measured scaling curve at the GPUs and nodes the job holds (under --placement-model
// count, the fewest nodes that could hold them), times the slowest of its
// nodes for this model (a synchronous data-parallel job runs at its slowest GPU): the node's GPU type
// speed times its hidden factor, as ModelCatalog::placed_speedup when there is no fluctuation. Then
// the completion event.
double Engine::placed_speed(std::size_t i, bool hidden) const
{
	const Job& j = jobs_[i];
	double slowest = j.placement.empty() ? 1.0 : INFINITY;
	for (const NodeShare& sh : j.placement)
		slowest = std::min(slowest, models_.gpu_speed(j.model, nodes_[sh.node].gpu_type) *
						    (hidden ? node_factor(sh.node) : 1.0));
	const int spanned = opt_.placement_model == PlacementModel::kCount
				    ? fewest_nodes(j.gpus_allocated)
				    : static_cast<int>(j.placement.size());
	return models_.speedup(j.model, j.gpus_allocated, spanned) * slowest;
}

double Engine::rate_of(std::size_t i) const
{
	return placed_speed(i, true) / state_[i].epoch_time_1gpu;
}

void Engine::refresh_estimates()
{
	auto see = [&](std::size_t i) {
		const JobEstimate e = estimates_->estimate(i, jobs_[i]);
		jobs_[i].epoch_time_1gpu = e.epoch_time_1gpu;
		jobs_[i].runtime_cv = e.runtime_cv;
	};
	for (std::size_t i : pending_)
		see(i);
	for (std::size_t i : running_)
		see(i);
}

void Engine::update_speed(std::size_t i)
{
	Job& j = jobs_[i];
	SimJob& s = state_[i];
	++s.version;
	if (!j.running()) {
		s.rate = 0;
		return;
	}
	s.rate = rate_of(i);
	const Seconds from = std::max(now_, s.progress_from);
	const Seconds end = from + j.epochs_left() / s.rate;
	if (s.release_at >= 0 && end > s.progress_until + kEps)
		completions_.push({s.release_at, i, s.version, true});
	else
		completions_.push({end, i, s.version, false});
}

Seconds Engine::resume_seconds(std::size_t i, bool resize) const
{
	if (!opt_.restart_model)
		return opt_.restart_cost;
	const Job& j = jobs_[i];
	const SimJob& s = state_[i];
	const double epoch = 1.0 / rate_of(i);
	Seconds t = predict::checkpoint_read_s(models_, j.model, opt_.overhead) * s.read_factor +
		    opt_.overhead.warmup_fraction * s.warmup_factor * epoch +
		    opt_.overhead.warmup_seconds * s.warmup_factor;
	if (resize)  // checkpoint first, at once (a resize does not wait for a safe point)
		t += predict::checkpoint_write_s(models_, j.model, opt_.overhead) * s.write_factor;
	return t;
}

// What policies are told stopping a running job costs: the estimator's view of this simulation's
// physics (the model profile under RestartCost=model, else the flat restart cost).
PreemptionCost Engine::cost_estimate(const Job& j) const
{
	PreemptionCost c;
	if (opt_.restart_model)  // the controller's fill, with no measurements: the profile's
		c = predict::preemption_cost(j, predict::NoEvidence(), models_, opt_.overhead, now_);
	else
		c.resume = opt_.restart_cost;
	// Slurm holds a requeued job back before it may start again: part of every restart (as the C
	// ABI counts slurm.conf's delay).
	c.resume += opt_.requeue_delay;
	return c;
}

Seconds Engine::next_requeue_release() const
{
	Seconds t = INFINITY;
	for (std::size_t i : pending_)
		if (held_back(i))
			t = std::min(t, jobs_[i].last_stop_time + opt_.requeue_delay);
	return t;
}

// The fewest nodes that can hold `gpus` GPUs (--placement-model count: where they are does not matter).
int Engine::fewest_nodes(int gpus) const
{
	int nodes = 0;
	for (int size : node_sizes_) {
		if (gpus <= 0)
			break;
		gpus -= size;
		++nodes;
	}
	return std::max(nodes, 1);
}

// What a collector on each of the job's nodes reports for its current run: the per-GPU speed of the
// job's model there (type speed x hidden factor), with measurement noise. Nothing when the run has
// not progressed yet (it has timed no epoch).
void Engine::measure(std::size_t i)
{
	const Job& j = jobs_[i];
	if (!j.running() || now_ <= std::max(j.start_time, state_[i].progress_from))
		return;
	for (const NodeShare& sh : j.placement) {
		SpeedObservation o;
		o.node = sh.node;
		o.model = j.model;
		o.speed = models_.gpu_speed(j.model, nodes_[sh.node].gpu_type) * node_factor(sh.node) *
			  std::exp(opt_.measurement_noise * noise_rng_.normal());
		o.at = now_;
		observations_.push_back(o);
	}
	state_[i].measured = true;
	if (observations_.size() > opt_.observation_history)
		observations_.erase(
			observations_.begin(),
			observations_.end() - static_cast<std::ptrdiff_t>(opt_.observation_history));
}

Status Engine::fail(const Action& a, const std::string& what) const
{
	return internal_error("policy '" + scheduler_.preset_name() + "' (cycle " + std::to_string(cycle_) +
			      ", t=" + seconds(now_) + "): " + action_kind_name(a.kind) + " of job " +
			      std::to_string(a.job) + ": " + what);
}

Status Engine::check_placement(const Action& a, const Job& j) const
{
	int sum = 0;
	std::map<NodeIndex, int> per_node;
	ClusterView v;
	v.nodes = Span<const Node>(nodes_.data(), nodes_.size());
	FreeMap eligibility(v);
	for (const NodeShare& s : a.placement) {
		if (s.node >= nodes_.size())
			return fail(a, "node index " + std::to_string(s.node) + " out of range");
		if (s.gpus <= 0)
			return fail(a, "non-positive GPU count on node " + nodes_[s.node].name);
		if (!eligibility.eligible(j, s.node))
			return fail(a, "node " + nodes_[s.node].name + " is not in the job's partition");
		per_node[s.node] += s.gpus;
		sum += s.gpus;
	}
	for (const auto& kv : per_node)
		if (kv.second > nodes_[kv.first].gpus_free)
			return fail(a, "asks " + std::to_string(kv.second) + " GPUs on node " +
					       nodes_[kv.first].name + " which has " +
					       std::to_string(nodes_[kv.first].gpus_free) + " free");
	if (sum != a.gpus || sum <= 0)
		return fail(a, "placement holds " + std::to_string(sum) + " GPUs, the action says " +
				       std::to_string(a.gpus));
	if (a.gpus < j.gpus_min || a.gpus > j.gpus_max)
		return fail(a, std::to_string(a.gpus) + " GPUs is outside the job's range [" +
				       std::to_string(j.gpus_min) + ", " + std::to_string(j.gpus_max) + "]");
	return Status::ok();
}

bool Engine::fits_after_stops(const Action& a) const
{
	if (!opt_.restart_model)
		return false;
	std::map<NodeIndex, int> want, freeing;
	for (const NodeShare& s : a.placement)
		if (s.node < nodes_.size())
			want[s.node] += s.gpus;
	// GPUs being freed: stopping jobs', and those of jobs whose own resize waits this cycle (the
	// plan moved them off those GPUs).
	for (std::size_t i : running_)
		if (jobs_[i].stopping() ||
		    std::find(deferred_.begin(), deferred_.end(), i) != deferred_.end())
			for (const NodeShare& s : jobs_[i].placement)
				freeing[s.node] += s.gpus;
	bool short_now = false;
	for (const auto& [node, gpus] : want) {
		if (gpus > nodes_[node].gpus_free + freeing[node])
			return false;
		short_now = short_now || gpus > nodes_[node].gpus_free;
	}
	return short_now;
}

Status Engine::apply(const Action& a)
{
	if (a.kind == ActionKind::kSetPriority)
		return Status::ok();  // the simulator has no queue of its own: order comes from the policy
	if (a.kind == ActionKind::kLoan || a.kind == ActionKind::kReclaim) {
		if (a.node >= nodes_.size() || nodes_[a.node].kind != PartitionKind::kInference ||
		    !nodes_[a.node].loanable)
			return fail(a, "node is not a loanable inference node");
		Node& node = nodes_[a.node];
		if (a.kind == ActionKind::kLoan) {
			if (node.loaned)
				return fail(a, "node " + node.name + " is loaned already");
			node.loaned = true;
			reclaim_at_[a.node] =
				-1;  // lent again before its reclaim finished: training keeps it
			return Status::ok();
		}
		if (!node.loaned)
			return fail(a, "node " + node.name + " is not loaned");
		node.loaned = false;
		++reclaims_;
		if (node.gpus_free < node.gpus_total) {
			reclaim_at_[a.node] = now_;
			// Jobs stopping there already (an earlier preemption, a longer grace) get the
			// reclaim's timeout as the host gives it: checkpointed by then, or killed then.
			const Seconds by = now_ + opt_.reclaim_timeout;
			for (std::size_t k : running_) {
				SimJob& sj = state_[k];
				if (!jobs_[k].stopping() || sj.release_at <= by + kEps)
					continue;
				bool there = false;
				for (const NodeShare& sh : jobs_[k].placement)
					there = there || sh.node == a.node;
				if (!there)
					continue;
				sj.progress_until = std::min(sj.progress_until, by);
				sj.release_at = by;
				sj.killed = true;
				changed_.push_back(k);
			}
		}
		return Status::ok();
	}
	if (a.job >= index_of_.size() || index_of_[a.job] == kNone)
		return fail(a, "no such job");
	const std::size_t i = index_of_[a.job];
	Job& j = jobs_[i];
	if (a.kind == ActionKind::kAdmission) {
		// Best-effort is only an order (the policy's). A held job is never released here (no user
		// to release it): it ends as a cancelled one does, never run, its deadline missed.
		if (a.admission == AdmissionAction::kHold || a.admission == AdmissionAction::kCancel) {
			if (j.running() || state_[i].done)
				return fail(a, "only a pending job can be held or cancelled");
			state_[i].done = true;
			++state_[i].version;
			outcome_[i].first_start = now_;
			outcome_[i].finish = now_;
			outcome_[i].cancelled = true;
			++newly_cancelled_;
		}
		return Status::ok();
	}
	auto release = [&]() {
		for (const NodeShare& s : j.placement)
			nodes_[s.node].gpus_free += s.gpus;
	};
	auto hold = [&]() {
		for (const NodeShare& s : j.placement)
			nodes_[s.node].gpus_free -= s.gpus;
	};
	switch (a.kind) {
		case ActionKind::kStart: {
			if (j.running() || state_[i].done || state_[i].dropped)
				return fail(a, "the job is not pending");
			if (held_back(i))
				return fail(a, "the job was requeued at " + seconds(j.last_stop_time) +
						       " and may not start before " +
						       seconds(j.last_stop_time + opt_.requeue_delay) +
						       " (RequeueDelay=)");
			if (fits_after_stops(a))
				return Status::ok();  // its GPUs are still being checkpointed: a later cycle
						      // starts it
			Status st = check_placement(a, j);
			if (!st.is_ok())
				return st;
			j.state = JobState::kRunning;
			j.gpus_allocated = a.gpus;
			j.placement = a.placement;
			j.start_time = now_;
			if (j.first_start_time < 0) {
				j.first_start_time = now_;
				outcome_[i].first_start = now_;
			}
			state_[i].last_update = now_;
			state_[i].progress_from = now_;
			state_[i].measured = false;
			if (j.restarts > 0)  // resuming from a checkpoint: reload
				state_[i].progress_from = now_ + resume_seconds(i, false);
			hold();
			break;
		}
		case ActionKind::kResize: {
			if (!j.running())
				return fail(a, "the job is not running");
			if (j.stopping())
				return fail(a, "the job is stopping (checkpoint requested at " +
						       seconds(j.checkpoint_requested_at) + ")");
			advance(i, now_);
			release();
			if (fits_after_stops(a)) {
				hold();  // grows onto GPUs still being checkpointed: a later cycle resizes it
				deferred_.push_back(i);
				return Status::ok();
			}
			Status st = check_placement(a, j);
			if (!st.is_ok()) {
				hold();
				return st;
			}
			measure(i);  // the run on the old placement ends
			state_[i].measured = false;
			j.gpus_allocated = a.gpus;
			j.placement = a.placement;
			j.start_time = now_;
			++j.restarts;
			++outcome_[i].resizes;
			// Checkpoint, requeue at the new size (Slurm holds it back RequeueDelay=), reload.
			state_[i].progress_from = now_ + resume_seconds(i, true) + opt_.requeue_delay;
			hold();
			break;
		}
		case ActionKind::kRequeue: {
			if (!j.running())
				return fail(a, "the job is not running");
			if (j.stopping())
				return fail(a, "the job is stopping (checkpoint requested at " +
						       seconds(j.checkpoint_requested_at) + ")");
			if (!j.requeueable)
				return fail(a, "the job cannot be requeued");
			if (a.reason.rfind(kQuotaReclaimed, 0) == 0) {
				++quota_reclaims_;
				quota_reclaimed_gpus_ += j.gpus_allocated;
			}
			for (const NodeShare& sh : j.placement)
				if (reclaimed_now_[sh.node]) {
					++reclaim_preemptions_;
					break;
				}
			if (opt_.restart_model)
				return request_stop(a, i);
			advance(i, now_);
			stop_run(i);
			break;
		}
		default:
			break;
	}
	changed_.push_back(i);
	return Status::ok();
}

// RestartCost=model: the checkpoint request. The job trains on to its next safe point, writes its
// checkpoint and frees its GPUs then; if that takes longer than its grace, it is killed when the
// grace runs out and restarts from its last epoch boundary. A job that would end before its safe
// point just ends. A job still restoring its checkpoint has nothing new to save: it stops at once.
Status Engine::request_stop(const Action& a, std::size_t i)
{
	Job& j = jobs_[i];
	SimJob& s = state_[i];
	advance(i, now_);
	if (now_ < s.progress_from) {
		stop_run(i);
		return Status::ok();
	}
	const double frac = j.epochs_done - std::floor(j.epochs_done);
	const bool at_boundary = frac < 1e-9;
	const Seconds to_safe = opt_.overhead.epoch_safe_points && !at_boundary ? (1.0 - frac) / s.rate : 0.0;
	const Seconds write =
		at_boundary ? 0.0
			    : predict::checkpoint_write_s(models_, j.model, opt_.overhead) * s.write_factor;
	const Seconds grace = a.grace >= 0 ? a.grace : opt_.preempt_grace;
	j.checkpoint_requested_at = now_;
	if (now_ + j.epochs_left() / s.rate <= now_ + to_safe + kEps)
		return Status::ok();  // it ends first: its completion stands
	if (to_safe + write <= grace) {
		s.progress_until = now_ + to_safe;
		s.release_at = now_ + to_safe + write;
	} else {
		s.progress_until = s.release_at = now_ + grace;
		s.killed = true;
	}
	if (s.release_at <= now_ + kEps) {
		release(i);
		return Status::ok();
	}
	changed_.push_back(i);
	return Status::ok();
}

void Engine::stop_run(std::size_t i)
{
	Job& j = jobs_[i];
	SimJob& s = state_[i];
	freed_in_cycle_ = true;
	measure(i);
	for (const NodeShare& sh : j.placement)
		nodes_[sh.node].gpus_free += sh.gpus;
	j.last_stop_time = now_;
	j.last_run_s = now_ - j.start_time;
	j.state = JobState::kPending;
	j.gpus_allocated = 0;
	j.placement.clear();
	j.start_time = -1;
	j.checkpoint_requested_at = -1;
	++j.restarts;
	++outcome_[i].preemptions;
	s.progress_until = INFINITY;
	s.release_at = -1;
	s.killed = false;
	++s.version;
	auto pos = std::lower_bound(pending_.begin(), pending_.end(), i, [&](std::size_t x, std::size_t y) {
		return jobs_[x].submit_time != jobs_[y].submit_time
			       ? jobs_[x].submit_time < jobs_[y].submit_time
			       : jobs_[x].id < jobs_[y].id;
	});
	pending_.insert(pos, i);
	changed_.push_back(i);
}

// A stopping job's GPUs are free: it wrote its checkpoint, or it was killed and goes back to its
// last epoch boundary (what it trained since is lost).
void Engine::release(std::size_t i)
{
	Job& j = jobs_[i];
	SimJob& s = state_[i];
	advance(i, now_);
	if (s.killed) {
		const double back = j.epochs_done - std::floor(j.epochs_done);
		const double lost = back > 0 && s.rate > 0 ? j.gpus_allocated * back / s.rate : 0.0;
		lost_gpu_s_ += lost;
		outcome_[i].lost_gpu_s += lost;
		j.epochs_done -= back;
	}
	stop_run(i);
	running_.erase(std::find(running_.begin(), running_.end(), i));
}

Status Engine::cycle()
{
	++cycle_;
	freed_in_cycle_ = false;
	for (std::size_t i : running_) {
		advance(i, now_);
		Job& j = jobs_[i];
		if (!state_[i].measured &&
		    now_ >= std::max(j.start_time, state_[i].progress_from) + opt_.observe_after)
			measure(i);
	}
	if (estimates_)
		refresh_estimates();
	for (std::size_t i : running_)
		jobs_[i].preempt_cost = cost_estimate(jobs_[i]);
	// No job submitted since the last evaluation: nothing new to judge, the choice stands (the long
	// tail after the last arrival costs no replays).
	if (guard_ && now_ + kEps >= next_guard_ && next_arrival_ > guard_arrivals_) {
		guard_evaluate();
		guard_arrivals_ = next_arrival_;
		next_guard_ = now_ + opt_.guard.interval;
	}
	if (active_ == &scheduler_)
		++learned_cycles_;
	ClusterView view = make_view();
	const auto t0 = std::chrono::steady_clock::now();
	Decisions d = active_->decide(view);
	const auto t1 = std::chrono::steady_clock::now();
	decision_ms_.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());

	changed_.clear();
	deferred_.clear();
	for (const Action& a : d.actions)
		if (a.kind == ActionKind::kReclaim && a.node < nodes_.size())
			reclaimed_now_[a.node] = true;
	for (const Action& a : d.actions) {
		Status st = apply(a);
		if (!st.is_ok())
			return st;
	}
	std::fill(reclaimed_now_.begin(), reclaimed_now_.end(), false);
	for (std::size_t i : changed_)
		update_speed(i);
	// Rebuild the lists from the jobs' states (keeps their orders).
	pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
				      [&](std::size_t i) { return jobs_[i].running() || state_[i].done; }),
		       pending_.end());
	running_.clear();
	for (const Job* r : view.running)
		if (r->running())
			running_.push_back(index_of_[r->id]);
	for (const Action& a : d.actions)  // started (a start onto GPUs still being freed waits)
		if (a.kind == ActionKind::kStart && jobs_[index_of_[a.job]].running())
			running_.push_back(index_of_[a.job]);
	std::sort(running_.begin(), running_.end(),
		  [&](std::size_t x, std::size_t y) { return jobs_[x].id < jobs_[y].id; });
	const Seconds change = active_->ordering().next_change(make_view());
	next_change_ = change > now_ + kEps ? change : INFINITY;
	return Status::ok();
}

void Engine::account_teams(Seconds until)
{
	const Seconds dt = until - now_;
	if (!ledger_ || !(dt > 0))
		return;
	const std::size_t n = opt_.accounts.size();
	std::vector<double> demand(n, 0), held(n, 0);
	for (std::size_t i : pending_)
		if (account_of_[i] >= 0 && !state_[i].done)
			demand[static_cast<std::size_t>(account_of_[i])] += jobs_[i].gpus_requested;
	for (std::size_t i : running_)
		if (account_of_[i] >= 0) {
			demand[static_cast<std::size_t>(account_of_[i])] += jobs_[i].gpus_allocated;
			held[static_cast<std::size_t>(account_of_[i])] += jobs_[i].gpus_allocated;
		}
	ledger_->advance(now_, until, demand, held);
	// Usage decays by half every half-life; GPU-seconds held meanwhile decay from when they were used.
	const double hl = opt_.usage_half_life;
	const double keep = hl > 0 ? std::exp2(-dt / hl) : 1.0;
	const double gained = hl > 0 ? hl / std::log(2.0) * (1 - keep) : dt;
	for (std::size_t a = 0; a < n; ++a)
		opt_.accounts[a].usage_gpu_s = opt_.accounts[a].usage_gpu_s * keep + held[a] * gained;
}

ClusterView Engine::make_view() const
{
	ClusterView view;
	view.now = now_;
	view.cycle = cycle_;
	view.nodes = Span<const Node>(nodes_.data(), nodes_.size());
	view.models = &models_;
	view.observations = Span<const SpeedObservation>(observations_.data(), observations_.size());
	view.recorder = opt_.recorder;
	view.inference_demand = demand_;
	view.accounts = Span<const Account>(opt_.accounts.data(), opt_.accounts.size());
	view.pending.reserve(pending_.size());
	for (std::size_t i : pending_)
		if (!held_back(i))  // as Slurm's begin time ahead keeps it out of sched/dlsched's snapshot
			view.pending.push_back(&jobs_[i]);
	view.running.reserve(running_.size());
	for (std::size_t i : running_)
		view.running.push_back(&jobs_[i]);
	return view;
}

void Engine::finish(std::size_t i)
{
	Job& j = jobs_[i];
	advance(i, now_);
	measure(i);
	for (const NodeShare& s : j.placement)
		nodes_[s.node].gpus_free += s.gpus;
	j.epochs_done = j.epochs_total;
	j.state = JobState::kPending;  // no longer running; `done` marks it finished
	j.gpus_allocated = 0;
	j.placement.clear();
	j.checkpoint_requested_at = -1;
	state_[i].release_at = -1;
	state_[i].done = true;
	++state_[i].version;
	outcome_[i].finish = now_;
	running_.erase(std::find(running_.begin(), running_.end(), i));
}

double Engine::inference_unmet() const
{
	if (inference_gpus_ == 0 || demand_ <= 0)
		return 0;
	double have = 0;
	for (const Node& n : nodes_)
		if (n.kind == PartitionKind::kInference && !n.loaned && n.up)
			have += n.gpus_free;
	return std::max(0.0, demand_ * inference_gpus_ - have);
}

// Inference's use and shortfall from now_ to `until` (the state holds in between).
void Engine::account_inference(Seconds until)
{
	const Seconds dt = until - now_;
	if (dt <= 0 || inference_gpus_ == 0)
		return;
	const double unmet = inference_unmet();
	inference_gpu_s_ += (demand_ * inference_gpus_ - unmet) * dt;
	window_gpu_s_ += (demand_ * inference_gpus_ - unmet) * in_window(now_, until);
	if (unmet <= 1e-9) {
		short_since_ = -1;
		return;
	}
	if (short_since_ < 0)
		short_since_ = now_;
	const Seconds counted = until - std::max(now_, short_since_ + opt_.reclaim_timeout);
	if (counted > 0)
		shortfall_gpu_s_ += unmet * counted;
}

Seconds Engine::next_reclaim_deadline() const
{
	Seconds t = INFINITY;
	for (Seconds at : reclaim_at_)
		if (at >= 0)
			t = std::min(t, at + opt_.reclaim_timeout);
	return t;
}

// Nodes taken back whose training jobs have not freed them by the timeout: the jobs are killed
// (back to their last epoch boundary) and requeued, and the reclaim counts as late.
void Engine::enforce_reclaims()
{
	for (std::size_t n = 0; n < nodes_.size(); ++n) {
		if (reclaim_at_[n] < 0 || now_ + kEps < reclaim_at_[n] + opt_.reclaim_timeout)
			continue;
		reclaim_at_[n] = -1;
		if (nodes_[n].gpus_free >= nodes_[n].gpus_total)
			continue;
		++late_reclaims_;
		std::vector<std::size_t> on;
		for (std::size_t i : running_)
			for (const NodeShare& sh : jobs_[i].placement)
				if (sh.node == n) {
					on.push_back(i);
					break;
				}
		for (std::size_t i : on) {
			if (!jobs_[i].stopping())
				++reclaim_preemptions_;
			state_[i].killed = true;
			release(i);
		}
	}
}

void Engine::finish_reclaims()
{
	for (std::size_t n = 0; n < nodes_.size(); ++n)
		if (reclaim_at_[n] >= 0 && nodes_[n].gpus_free >= nodes_[n].gpus_total)
			reclaim_at_[n] = -1;
}

void Engine::guard_evaluate()
{
	const auto t0 = std::chrono::steady_clock::now();
	// What the controller knows now: the jobs submitted so far; a finished one at the length its
	// run measured, the others as the policies see them (their estimates).
	// The window starts at the latest earlier evaluation at most GuardWindow= back, with the backlog
	// recorded then; before there is one, GuardWindow= back with none.
	Seconds from = now_ - opt_.guard.window;
	const GuardMark* mark = nullptr;
	for (const GuardMark& m : guard_marks_)
		if (m.at + kEps >= from && m.at < now_) {
			mark = &m;
			break;
		}
	if (mark)
		from = mark->at;
	std::vector<GuardKnown> known;
	auto add = [&](std::size_t i, bool carried, double left) {
		GuardKnown k;
		k.job = jobs_[i];
		k.finished = state_[i].done;
		k.measured_epoch_time_1gpu = state_[i].epoch_time_1gpu;
		k.carried = carried;
		k.epochs_left_then = left;
		known.push_back(std::move(k));
	};
	if (mark)
		for (const auto& [i, done_then] : mark->active)
			add(i, true, jobs_[i].epochs_total - done_then);
	for (std::size_t i = 0; i < next_arrival_; ++i)
		if (!state_[i].dropped && !outcome_[i].cancelled && jobs_[i].submit_time > from)
			add(i, false, 0);
	Workload w;
	w.jobs = guard_snapshot(known, now_, now_ - from, opt_.hint_limits.floor_no_limit_s);
	// This evaluation's backlog, for the later ones; marks no window reaches any more are dropped.
	GuardMark here;
	here.at = now_;
	for (std::size_t i = 0; i < next_arrival_; ++i)
		if (!state_[i].dropped && !state_[i].done && !outcome_[i].cancelled)
			here.active.emplace_back(i, jobs_[i].epochs_done);
	guard_marks_.push_back(std::move(here));
	while (!guard_marks_.empty() && guard_marks_.front().at + opt_.guard.window < now_)
		guard_marks_.erase(guard_marks_.begin());
	if (opt_.guard_observer)
		opt_.guard_observer(now_, w.jobs);
	// The replays: an empty copy of the cluster, what the controller believes is the truth (no
	// hidden machine speeds, no measurement noise), no guard of their own.
	SimOptions so = opt_;
	so.guard_scheduler = nullptr;
	so.guard.enabled = false;
	so.guard_observer = nullptr;
	so.progress = nullptr;
	so.recorder = nullptr;
	so.estimates = Estimates::kOracle;
	so.speed_factor.clear();
	so.inference_demand = InferenceDemand();
	so.drop_unrunnable = true;
	std::vector<Node> empty = nodes_;
	for (Node& n : empty) {
		n.gpus_free = n.gpus_total;
		n.loaned = false;
	}
	auto mean_jct = [&](const Scheduler& s) -> double {
		if (w.jobs.empty())
			return 0;
		auto r = simulate(w, models_, empty, s, so);
		if (!r.is_ok() || r->jobs.empty())
			return INFINITY;  // a replay that fails counts as lost
		double sum = 0;
		for (const JobOutcome& o : r->jobs)
			sum += o.finish - o.submit;
		return sum / static_cast<double>(r->jobs.size());
	};
	const double learned = mean_jct(scheduler_);
	const double heuristic = mean_jct(*opt_.guard_scheduler);
	GuardVerdict v = guard_->evaluate(now_, w.jobs.size(), learned, heuristic);
	active_ = v.after == GuardChoice::kLearned ? &scheduler_ : opt_.guard_scheduler;
	guard_log_.push_back(v);
	guard_eval_ms_.push_back(
		std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
}

Result<SimResult> Engine::run()
{
	Status st = check_runnable();
	if (!st.is_ok())
		return st;
	const std::size_t n = jobs_.size();
	std::size_t done = dropped_;
	std::size_t& next_arrival = next_arrival_;
	Seconds last_cycle = -INFINITY;
	auto wall_last = std::chrono::steady_clock::now();
	while (done < n) {
		while (!completions_.empty()) {  // drop stale completion events
			const Completion& c = completions_.top();
			if (state_[c.index].version == c.version && !state_[c.index].done)
				break;
			completions_.pop();
		}
		while (next_arrival < n && state_[next_arrival].dropped)
			++next_arrival;
		Seconds t = INFINITY;
		if (next_arrival < n)
			t = jobs_[next_arrival].submit_time;
		if (!completions_.empty())
			t = std::min(t, completions_.top().time);
		// Periodic cycles only where they can change something: jobs waiting, and a policy that
		// re-ranks running jobs or resizes them (or no event-driven cycles at all).
		const bool periodic = !pending_.empty() && (periodic_policy_ || !opt_.sched_on_events);
		if (periodic)
			t = std::min(t, last_cycle + opt_.sched_interval);
		// And where the ordering ranks jobs differently by itself (tiresias-las: a queue threshold
		// crossed), while jobs wait: nothing can change for them otherwise.
		if (!pending_.empty())
			t = std::min(t, next_change_);
		// A requeued job may start again (RequeueDelay=): a cycle then, as Slurm's scheduler
		// considers it once its begin time is past.
		const Seconds requeue_release = next_requeue_release();
		t = std::min(t, requeue_release);
		// Capacity loaning: the demand's next change (when a Loaning policy acts on it) and the next
		// reclaim's timeout.
		const bool loaning = !opt_.inference_demand.empty() && inference_gpus_ > 0;
		if (t != INFINITY && loaning) {
			// (Every change, for inference's own accounting; a cycle only when a policy loans.)
			t = std::min(
				t, opt_.inference_demand.next_change(now_ - demand_origin_) + demand_origin_);
			t = std::min(t, next_reclaim_deadline());
		}
		if (t == INFINITY) {
			std::string ids;
			for (std::size_t k = 0; k < pending_.size() && k < 5; ++k)
				ids += (k ? ", " : "") + std::to_string(jobs_[pending_[k]].id);
			return internal_error("policy '" + scheduler_.preset_name() + "' leaves " +
					      std::to_string(pending_.size()) +
					      " job(s) waiting forever on an idle cluster (first: " + ids +
					      ")");
		}
		if (loaning)
			account_inference(t);
		account_teams(t);
		now_ = std::max(now_, t);
		bool event = requeue_release <= now_ + kEps;
		if (loaning) {
			const double d = demand_now();
			if (d != demand_) {
				demand_ = d;
				event = std::string(scheduler_.spec().loaning) != "none";
			}
		}
		while (!completions_.empty() && completions_.top().time <= now_ + kEps) {
			Completion c = completions_.top();
			completions_.pop();
			if (state_[c.index].version != c.version || state_[c.index].done)
				continue;
			if (c.release) {
				changed_.clear();
				release(c.index);
			} else {
				finish(c.index);
				++done;
			}
			event = true;
		}
		while (next_arrival < n && jobs_[next_arrival].submit_time <= now_ + kEps) {
			if (!state_[next_arrival].dropped) {
				pending_.push_back(next_arrival);
				event = true;
			}
			++next_arrival;
		}
		// Reclaims due now (after the releases of this instant: a job freeing its node at the
		// timeout is in time).
		if (loaning && next_reclaim_deadline() <= now_ + kEps) {
			finish_reclaims();
			enforce_reclaims();
			event = true;
		}
		const bool due = (periodic && now_ + kEps >= last_cycle + opt_.sched_interval) ||
				 (!pending_.empty() && now_ + kEps >= next_change_);
		if ((event && opt_.sched_on_events) || due) {
			st = cycle();
			if (!st.is_ok())
				return st;
			// GPUs a preemption freed at once are an event too: the jobs it made room for start
			// now, not at the next arrival or completion (Slurm schedules again on a requeue).
			for (int again = 0; again < 3 && freed_in_cycle_ && !pending_.empty(); ++again) {
				st = cycle();
				if (!st.is_ok())
					return st;
			}
			last_cycle = now_;
			finish_reclaims();
			done += newly_cancelled_;
			newly_cancelled_ = 0;
			if (running_.empty() && !pending_.empty() && next_arrival >= n &&
			    next_requeue_release() == INFINITY) {
				std::string ids;
				for (std::size_t k = 0; k < pending_.size() && k < 5; ++k)
					ids += (k ? ", " : "") + std::to_string(jobs_[pending_[k]].id);
				return internal_error("policy '" + scheduler_.preset_name() +
						      "' starts nothing on an idle cluster; " +
						      std::to_string(pending_.size()) +
						      " job(s) would wait forever (first: " + ids + ")");
			}
		}
		if (opt_.progress) {
			auto wall = std::chrono::steady_clock::now();
			if (wall - wall_last > std::chrono::seconds(1)) {
				opt_.progress(now_, done, n);
				wall_last = wall;
			}
		}
	}
	SimResult r;
	for (std::size_t i = 0; i < n; ++i) {
		if (state_[i].dropped)
			continue;
		r.jobs.push_back(outcome_[i]);
		r.makespan = std::max(r.makespan, outcome_[i].finish);
	}
	r.decision_ms = std::move(decision_ms_);
	r.cycles = cycle_;
	r.dropped = dropped_;
	r.total_gpus = total_gpus_;
	r.lost_gpu_s = lost_gpu_s_;
	r.loaned_gpu_s = loaned_gpu_s_;
	r.reclaims = reclaims_;
	r.late_reclaims = late_reclaims_;
	r.reclaim_preemptions = reclaim_preemptions_;
	r.inference_shortfall_gpu_s = shortfall_gpu_s_;
	r.inference_gpu_s = inference_gpu_s_;
	r.inference_gpus = inference_gpus_;
	r.window_s = window_to_ - window_from_;
	r.window_gpu_s = window_gpu_s_;
	r.estimates = opt_.estimates;
	r.accounts = opt_.accounts;
	if (ledger_)
		r.account_totals = ledger_->totals();
	r.quota_reclaims = quota_reclaims_;
	r.quota_reclaimed_gpus = quota_reclaimed_gpus_;
	r.guard = guard_ != nullptr;
	r.guard_log = std::move(guard_log_);
	r.guard_switches = guard_ ? guard_->switches() : 0;
	r.guard_learned_cycles = learned_cycles_;
	r.guard_eval_ms = std::move(guard_eval_ms_);
	return r;
}

}  // namespace

Result<SimResult> simulate(const Workload& workload, const ModelCatalog& models, std::vector<Node> nodes,
			   const Scheduler& scheduler, const SimOptions& options)
{
	if (!options.speed_factor.empty() && options.speed_factor.size() != nodes.size())
		return invalid_argument("simulate: " + std::to_string(options.speed_factor.size()) +
					" speed factors for " + std::to_string(nodes.size()) + " nodes");
	Engine e(workload, models, std::move(nodes), scheduler, options);
	return e.run();
}

}  // namespace dlsched::sim
