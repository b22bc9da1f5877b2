// The C ABI (dlsched/api.h): conversions between plain C views and the core's types, behind an
// exception firewall on every entry point.
#include "dlsched/api.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "capi/dump.h"
#include "config/config.h"
#include "config/quota_file.h"
#include "model/job_metadata.h"
#include "model/policy_step.h"
#include "model/speed_samples.h"
#include "policy/free_map.h"
#include "policy/guard.h"
#include "policy/guard_verdict.h"
#include "policy/registry.h"
#include "policy/scheduler.h"
#include "predict/evidence.h"
#include "predict/hints.h"
#include "predict/overhead.h"
#include "predict/profile_reader.h"
#include "profiledb/profile_db.h"
#include "util/trusted_file.h"
#include "workload/workload.h"

namespace {

// RecordExperience=yes: where the steps go, and how that went.
struct ExperienceLog {
	bool enabled = false;
	std::string path;  // ProfileDB=
	std::string cluster;
	std::unique_ptr<dlsched::db::ProfileDb> db;  // opened at the first step to write
	bool checked = false;   // PRAGMA quick_check passed once: a reopen does not read every page again
	double refresh_s = 60;  // ProfileRefresh=: after a failed open, the next try waits this long
	double retry_at = -1;   // (the steps' clock); meanwhile steps are dropped, not tried
	std::uint64_t rows = 0, errors = 0, dropped = 0;
	// The latest error: a fixed buffer, so that recording an error (out of memory among them)
	// never allocates.
	char last_error[512] = "";
};

// A write that waits longer than this for another writer (dlsched-ingestd) gives up: the cycle
// goes on without its experience rows.
constexpr int kExperienceBusyMs = 50;

// DumpViews=DIR: each cycle's view and decisions as one JSON file (capi/dump.h), the last
// kDumpViewsKept kept. A file that cannot be written costs the cycle nothing: counted, its reason
// kept (fixed buffer: no allocation on the error path), the cycles go on.
struct ViewDump {
	std::string dir;                // "": off
	bool scanned = false;           // the files already there were adopted (oldest removed first)
	std::deque<std::string> files;  // written, oldest first
	std::uint64_t written = 0, errors = 0;
	char last_error[512] = "";
};

// The speed observations made of the last view's epoch samples (model/speed_samples.h): made again
// only when the samples or the nodes they name change, so that every view of one refresh carries
// the same vector and gp-placement keeps its fit (it refits when the observations it sees move).
struct SpeedCache {
	std::vector<dlsched_epoch_sample_t> samples;
	std::vector<std::pair<std::string, std::string>> nodes;  // name and GPU type, by view index
	std::vector<dlsched::SpeedObservation> observations;
};

}  // namespace

struct dlsched_scheduler {
	dlsched::Config config;
	dlsched::ModelCatalog models;
	dlsched::PolicyRegistry registry;
	std::unique_ptr<dlsched::Scheduler> scheduler;
	// The learned policy's guard (LearnedGuard=): GuardPolicy='s scheduler, and whether the learned
	// one decides now (dlsched_scheduler_set_guard_choice; the heuristic until a verdict says so).
	std::unique_ptr<dlsched::Scheduler> guard_scheduler;
	bool guard_learned = false;
	ExperienceLog experience;
	ViewDump dump;
	int learned_models = 0;  // unprofiled models added to `models` (model_index())
	// dlsched_replay(): each job as the recording's "prepared" entries say (no profile DB read).
	const dlsched::json::Value* replay = nullptr;
	// ProfileDB= read off the host's locks: running jobs' progress and preemption costs.
	std::unique_ptr<dlsched::predict::ProfileReader> reader;
	dlsched::predict::OverheadParams overhead;
	std::string cluster;
	std::unique_ptr<dlsched::db::ProfileDb> writer;  // preemption rows, opened at the first one
	bool writer_checked = false;  // its quick_check passed once: reopened after a failure without it
	// The nodes of the view being converted: one buffer for every call, so that policies that
	// cache per view (gp-placement's fit) see the same nodes from call to call.
	std::vector<dlsched::Node> view_nodes;
	SpeedCache speeds;
	// dlsched_scheduler_create_placement(): what stands in for the learned policies ("" if nothing).
	std::string placement_note;
	// QuotaFile=, read when the scheduler is made (off the host's locks).
	std::vector<dlsched::AccountQuota> quota_file;
	bool quota_file_set = false;
	// dlsched_scheduler_create_safety(): the safety rules' settings only; never decides or places.
	bool safety_only = false;
	std::vector<std::string> safety_skipped;  // what of the file it passed over
};

struct dlsched_epoch_reader {
	std::string path, cluster;
	std::unique_ptr<dlsched::db::ProfileDb> db;  // opened at the first read, again after a failure
	bool checked = false;  // PRAGMA quick_check ran once (at the first open that succeeded)
};

struct dlsched_decisions {
	dlsched::Decisions decisions;
	std::vector<std::vector<dlsched_share_t>> shares;  // per action
	std::vector<uint32_t> order;
};

namespace {

int code_of(dlsched::StatusCode c)
{
	switch (c) {
		case dlsched::StatusCode::kOk:
			return DLSCHED_OK;
		case dlsched::StatusCode::kInvalidArgument:
			return DLSCHED_EINVAL;
		case dlsched::StatusCode::kNotFound:
			return DLSCHED_ENOTFOUND;
		case dlsched::StatusCode::kParseError:
			return DLSCHED_EPARSE;
		case dlsched::StatusCode::kIoError:
			return DLSCHED_EIO;
		case dlsched::StatusCode::kInternal:
			return DLSCHED_EINTERNAL;
	}
	return DLSCHED_EINTERNAL;
}

int report(dlsched_error_t* err, int code, const std::string& message)
{
	if (err) {
		err->code = code;
		std::snprintf(err->message, sizeof err->message, "%s", message.c_str());
	}
	return code;
}

int report(dlsched_error_t* err, const dlsched::Status& st)
{
	return report(err, code_of(st.code()), st.message());
}

int ok(dlsched_error_t* err)
{
	if (err) {
		err->code = DLSCHED_OK;
		err->message[0] = '\0';
	}
	return DLSCHED_OK;
}

// An error from a catch block: formatted into the caller's buffer, never allocating (the exception
// may be std::bad_alloc, and a second one inside a noexcept function would be std::terminate).
int report_caught(dlsched_error_t* err, const char* where, const char* what) noexcept
{
	if (err) {
		err->code = DLSCHED_EINTERNAL;
		std::snprintf(err->message, sizeof err->message, "%s: %s", where, what);
	}
	return DLSCHED_EINTERNAL;
}

// Runs `body`, turning any exception into DLSCHED_EINTERNAL: nothing unwinds into the caller, and
// the error path allocates nothing.
template <class F>
int guarded(dlsched_error_t* err, const char* where, F body) noexcept
{
	try {
		return body();
	} catch (const std::bad_alloc&) {
		return report_caught(err, where, "out of memory");
	} catch (const std::exception& e) {
		return report_caught(err, where, e.what());
	} catch (...) {
		return report_caught(err, where, "unknown exception");
	}
}

// Element i of a caller's array of view structs. A caller built against a newer API passes larger
// structs (struct_size > sizeof here): the array's stride is theirs, the first element's struct_size,
// which convert_view() checks every element repeats.
template <class T>
const T& element(const T* base, std::size_t i)
{
	const std::size_t stride = base[0].struct_size;
	return *reinterpret_cast<const T*>(reinterpret_cast<const char*>(base) + i * stride);
}

std::string str(const char* s)
{
	return s ? s : "";
}

// The core's copy of a C view: jobs own their strings, nodes are the scheduler's buffer; `view`
// points into them.
struct ConvertedView {
	std::vector<dlsched::Job> jobs;
	double requeue_delay = 0;  // version 8 views: added to every running job's resume cost
	std::vector<dlsched::predict::Claims> claims;  // per job: what its user said of its length
	std::vector<dlsched::Account> accounts;        // version 9 views
	dlsched::predict::HintLimits limits;
	dlsched::ClusterView view;
};

bool same_sample(const dlsched_epoch_sample_t& a, const dlsched_epoch_sample_t& b)
{
	return std::strncmp(a.node, b.node, sizeof a.node) == 0 &&
	       std::strncmp(a.model, b.model, sizeof a.model) == 0 && a.gpus == b.gpus &&
	       a.nodes == b.nodes && a.epochs == b.epochs && a.epoch_s == b.epoch_s && a.at == b.at;
}

// The view's speed observations from its epoch samples (version 6 views; none before), through the
// scheduler's cache.
const std::vector<dlsched::SpeedObservation>& view_observations(dlsched_scheduler_t* sched,
								const dlsched_epoch_sample_t* samples,
								size_t count,
								const std::vector<dlsched::Node>& nodes)
{
	SpeedCache& c = sched->speeds;
	bool same = c.samples.size() == count && c.nodes.size() == nodes.size();
	for (size_t i = 0; same && i < count; ++i)
		same = same_sample(c.samples[i], samples[i]);
	for (size_t i = 0; same && i < nodes.size(); ++i)
		same = c.nodes[i].first == nodes[i].name && c.nodes[i].second == nodes[i].gpu_type;
	if (same)
		return c.observations;
	c.samples.assign(samples, samples + count);
	c.nodes.clear();
	std::unordered_map<std::string, dlsched::NodeIndex> index;
	for (const dlsched::Node& n : nodes) {
		c.nodes.emplace_back(n.name, n.gpu_type);
		if (!n.name.empty())
			index.emplace(n.name, n.index);
	}
	std::vector<dlsched::EpochSample> runs;
	for (size_t i = 0; i < count; ++i) {
		const dlsched_epoch_sample_t& s = samples[i];
		const std::string node(s.node, strnlen(s.node, sizeof s.node));
		auto it = index.find(node);
		if (it == index.end())
			continue;  // a node the view does not have (deleted, renamed): nothing to learn of it
		dlsched::EpochSample e;
		e.node = it->second;
		e.model.assign(s.model, strnlen(s.model, sizeof s.model));
		e.gpus = s.gpus;
		e.nodes = s.nodes;
		e.epoch_s = s.epoch_s;
		e.at = s.at;
		runs.push_back(std::move(e));
	}
	c.observations = dlsched::speed_observations(
		runs, dlsched::Span<const dlsched::Node>(nodes.data(), nodes.size()), sched->models);
	return c.observations;
}

// A model the profiles do not know (--dl-model=llama-7b with no llama-7b profile) is added to the
// scheduler's catalog as an unprofiled model (linear scaling, no profile epoch time), so that it has
// an index the profile DB's same-model history is read under: after a few finished jobs of it, a
// new one's runtime comes from them, not from its time limit. At most kLearnedModels such names
// per scheduler (a typo per job must not grow the catalog without bound); beyond them, unknown.
constexpr int kLearnedModels = 64;

int model_index(dlsched_scheduler_t* sched, const char* name)
{
	if (!name || !*name)
		return -1;
	const int known = sched->models.find(name);
	if (known >= 0 || sched->learned_models >= kLearnedModels || std::strlen(name) > 64)
		return known;
	dlsched::ModelProfile p;
	p.name = name;
	p.points = {{1, 1, 1.0}};
	p.source = "learned from the profile DB (no profile)";
	++sched->learned_models;
	return sched->models.add(std::move(p));
}

// Checks and converts a C cluster view (struct sizes, GPU counts, share indices), naming the job
// or node at fault. The nodes go into the scheduler's buffer (one view at a time).
int convert_view(dlsched_scheduler_t* sched, const dlsched_cluster_view_t* cv, ConvertedView& out,
		 dlsched_error_t* err)
{
	// Version 5's view (no epoch samples) is still accepted; an older one is not.
	if (cv->struct_size < DLSCHED_CLUSTER_VIEW_V5_SIZE)
		return report(err, DLSCHED_EINVAL,
			      "cluster view: struct_size " + std::to_string(cv->struct_size) +
				      " is smaller than API version 5's " +
				      std::to_string(DLSCHED_CLUSTER_VIEW_V5_SIZE));
	const bool has_samples = cv->struct_size >= offsetof(dlsched_cluster_view_t, epoch_sample_count) +
							    sizeof cv->epoch_sample_count;
	if (!std::isfinite(cv->now))
		return report(err, DLSCHED_EINVAL, "cluster view: now is not a finite number");
	if ((cv->node_count && !cv->nodes) || (cv->job_count && !cv->jobs))
		return report(err, DLSCHED_EINVAL,
			      "cluster view: NULL node or job array with a non-zero count");
	if (has_samples && cv->epoch_sample_count && !cv->epoch_samples)
		return report(err, DLSCHED_EINVAL, "cluster view: NULL epoch samples with a non-zero count");
	if (cv->struct_size >= offsetof(dlsched_cluster_view_t, requeue_delay) + sizeof cv->requeue_delay) {
		if (!std::isfinite(cv->requeue_delay) || cv->requeue_delay < 0 || cv->requeue_delay > 86400)
			return report(err, DLSCHED_EINVAL,
				      "cluster view: requeue_delay " + std::to_string(cv->requeue_delay) +
					      " is not in [0, 86400] seconds");
		out.requeue_delay = cv->requeue_delay;
	}
	if (cv->struct_size >= offsetof(dlsched_cluster_view_t, account_count) + sizeof cv->account_count &&
	    cv->account_count) {
		if (!cv->accounts)
			return report(err, DLSCHED_EINVAL,
				      "cluster view: NULL accounts with a non-zero account_count");
		if (cv->accounts[0].struct_size < sizeof(dlsched_account_view_t))
			return report(err, DLSCHED_EINVAL, "account 0: struct_size too small");
		for (size_t i = 0; i < cv->account_count; ++i) {
			const dlsched_account_view_t& a = element(cv->accounts, i);
			const std::string who = "account " + std::to_string(i) + " ('" + str(a.name) + "')";
			if (a.struct_size != cv->accounts[0].struct_size)
				return report(err, DLSCHED_EINVAL,
					      who + ": struct_size differs from account 0's");
			if (!std::isfinite(a.quota_gpus) || !std::isfinite(a.shares) ||
			    !std::isfinite(a.usage_gpu_s) || a.quota_gpus < 0 || a.shares < 0 ||
			    a.usage_gpu_s < 0)
				return report(
					err, DLSCHED_EINVAL,
					who + ": quota_gpus, shares and usage_gpu_s must be finite and >= 0");
			out.accounts.push_back({str(a.name), a.quota_gpus, a.shares, a.usage_gpu_s});
		}
	}
	// QuotaFile=: its quotas replace the host's (Slurm: the shares of the GPUs); accounts it does
	// not list get none, accounts it lists that the host has not (no association) are added.
	if (sched->quota_file_set) {
		for (dlsched::Account& a : out.accounts)
			a.quota_gpus = 0;
		for (const dlsched::AccountQuota& q : sched->quota_file) {
			auto it =
				std::find_if(out.accounts.begin(), out.accounts.end(),
					     [&](const dlsched::Account& a) { return a.name == q.account; });
			if (it != out.accounts.end())
				it->quota_gpus = q.gpus;
			else
				out.accounts.push_back({q.account, q.gpus, 0, 0});
		}
	}
	sched->view_nodes.resize(cv->node_count);
	std::vector<dlsched::Node>& nodes = sched->view_nodes;
	for (size_t i = 0; i < cv->node_count; ++i) {
		if (cv->nodes[0].struct_size < sizeof(dlsched_node_view_t))
			return report(err, DLSCHED_EINVAL, "node 0: struct_size too small");
		const dlsched_node_view_t& n = element(cv->nodes, i);
		if (n.struct_size != cv->nodes[0].struct_size)
			return report(err, DLSCHED_EINVAL,
				      "node " + std::to_string(i) + ": struct_size " +
					      std::to_string(n.struct_size) + " differs from node 0's");
		if (n.gpus_total < 0 || n.gpus_free < 0 || n.gpus_free > n.gpus_total)
			return report(err, DLSCHED_EINVAL,
				      "node " + str(n.name) + ": GPU counts out of range");
		dlsched::Node& d = nodes[i];
		d.index = static_cast<dlsched::NodeIndex>(i);
		d.name = str(n.name);
		d.gpus_total = n.gpus_total;
		d.gpus_free = n.gpus_free;
		d.gpu_type = str(n.gpu_type);
		d.partition = str(n.partition);
		d.kind = n.kind == DLSCHED_INFERENCE ? dlsched::PartitionKind::kInference
						     : dlsched::PartitionKind::kTraining;
		d.loanable = n.loanable != 0;
		d.loaned = n.loaned != 0;
		d.up = n.up != 0;
	}
	// Users' runtime claims count only within their time limits (predict/hints.h).
	dlsched::predict::HintLimits& limits = out.limits;
	limits.trust_factor = sched->config.get_double("HintTrustFactor");
	limits.floor_no_limit_s = sched->config.get_double("HintFloorNoTimeLimit");
	if (!nodes.empty() && nodes[0].gpus_total > 0)
		limits.gpus_per_node = nodes[0].gpus_total;
	out.jobs.resize(cv->job_count);
	std::vector<dlsched::Job>& jobs = out.jobs;
	for (size_t i = 0; i < cv->job_count; ++i) {
		if (cv->jobs[0].struct_size < sizeof(dlsched_job_view_t))
			return report(
				err, DLSCHED_EINVAL,
				"job " + std::to_string(cv->jobs[0].job_id) + ": struct_size too small");
		const dlsched_job_view_t& v = element(cv->jobs, i);
		const std::string who = "job " + std::to_string(v.job_id);
		if (v.struct_size != cv->jobs[0].struct_size)
			return report(err, DLSCHED_EINVAL,
				      who + ": struct_size differs from the first job's");
		if (v.gpus_requested < 1 || v.gpus_min < 0 || v.gpus_max < 0 || v.gpus_allocated < 0)
			return report(err, DLSCHED_EINVAL, who + ": GPU counts out of range");
		// A NaN would make the policies' sorts undefined behaviour; an infinite time or amount is
		// no number either (time limits and deadlines say "none" with 0).
		const struct {
			const char* name;
			double value;
		} numbers[] = {{"submit_time", v.submit_time},
			       {"epochs_total", v.epochs_total},
			       {"epochs_done", v.epochs_done},
			       {"epoch_time_1gpu", v.epoch_time_1gpu},
			       {"time_limit", v.time_limit},
			       {"deadline", v.deadline},
			       {"start_time", v.start_time},
			       {"attained_gpu_s", v.attained_gpu_s},
			       {"executed_s", v.executed_s},
			       {"last_stop_time", v.last_stop_time},
			       {"last_run_s", v.last_run_s},
			       {"checkpoint_requested_at", v.checkpoint_requested_at},
			       {"time_min", v.time_min}};
		for (const auto& n : numbers)
			if (!std::isfinite(n.value))
				return report(err, DLSCHED_EINVAL,
					      who + ": " + n.name + " is not a finite number");
		dlsched::Job& j = jobs[i];
		j.id = v.job_id;
		j.user = str(v.user);
		j.partition = str(v.partition);
		j.qos = str(v.qos);
		j.account = str(v.account);
		j.model = model_index(sched, v.model);
		j.submit_time = v.submit_time;
		j.gpus_requested = v.gpus_requested;
		j.gpus_min = v.gpus_min ? v.gpus_min : v.gpus_requested;
		j.gpus_max = v.gpus_max ? v.gpus_max : v.gpus_requested;
		if (j.gpus_min > j.gpus_requested || j.gpus_max < j.gpus_requested)
			return report(err, DLSCHED_EINVAL,
				      who + ": gpus_min <= gpus_requested <= gpus_max does not hold");
		j.epochs_total = v.epochs_total > 0 ? v.epochs_total : 1;
		j.epochs_done = v.epochs_done;
		j.epoch_time_1gpu = v.epoch_time_1gpu;
		j.time_limit = v.time_limit > 0 ? v.time_limit : dlsched::kNoTimeLimit;
		j.time_min = v.time_min > 0 ? v.time_min : 0;
		// Its user's word; what it comes to (with no evidence yet: the profile DB's comes in
		// decide) is prepare_runtime()'s, after its placement is known (below).
		out.claims.push_back({v.epoch_time_1gpu > 0 ? v.epoch_time_1gpu : 0, v.epochs_total > 0});
		j.deadline = v.deadline > 0 ? v.deadline : dlsched::kNoDeadline;
		j.state = v.state == DLSCHED_RUNNING ? dlsched::JobState::kRunning
						     : dlsched::JobState::kPending;
		j.start_time = v.start_time;
		j.attained_gpu_s = v.attained_gpu_s;
		j.executed_s = v.executed_s;
		j.restarts = v.restarts;
		j.last_stop_time = v.last_stop_time;
		j.last_run_s = v.last_run_s;
		j.requeueable = v.requeueable != 0;
		j.checkpoint_requested_at =
			j.running() && v.checkpoint_requested_at > 0 ? v.checkpoint_requested_at : -1;
		j.nice = v.nice;
		if (v.admin_priority > 0) {
			j.admin_pin = v.admin_priority >= DLSCHED_PRIORITY_FLOOR ? 1 : -1;
			j.admin_priority = v.admin_priority;
		}
		if (j.running()) {
			if (v.share_count && !v.shares)
				return report(err, DLSCHED_EINVAL,
					      who + ": NULL shares with a non-zero count");
			int sum = 0;
			for (size_t k = 0; k < v.share_count; ++k) {
				if (v.shares[k].node_index >= cv->node_count || v.shares[k].gpus <= 0)
					return report(err, DLSCHED_EINVAL,
						      who + ": share " + std::to_string(k) +
							      " names node index " +
							      std::to_string(v.shares[k].node_index) +
							      " of " + std::to_string(cv->node_count) +
							      " or non-positive GPUs");
				j.placement.push_back({v.shares[k].node_index, v.shares[k].gpus});
				sum += v.shares[k].gpus;
			}
			j.gpus_allocated = sum;
		}
		// The claims alone (predict/evidence.h); with nothing to go by, one epoch of unknown length.
		if (dlsched::predict::prepare_runtime(j, dlsched::predict::NoEvidence(), sched->models,
						      limits, out.claims.back()) ==
		    dlsched::predict::RuntimeSource::kUnknown)
			j.epochs_total = 1;
		// The host does not track progress: from the seconds run (predict/evidence.h); the profile
		// DB's records replace it in decide, where there are some.
		if (v.epochs_done < 0)
			j.epochs_done = dlsched::predict::progress_from_time(j, sched->models);
	}
	dlsched::ClusterView& view = out.view;
	view.now = cv->now;
	view.cycle = cv->cycle;
	view.inference_demand =
		std::isfinite(cv->inference_demand) ? std::clamp(cv->inference_demand, 0.0, 1.0) : 1.0;
	view.nodes = dlsched::Span<const dlsched::Node>(nodes.data(), nodes.size());
	view.models = &sched->models;
	view.accounts = dlsched::Span<const dlsched::Account>(out.accounts.data(), out.accounts.size());
	view.observations = dlsched::Span<const dlsched::SpeedObservation>(
		view_observations(sched, has_samples ? cv->epoch_samples : nullptr,
				  has_samples ? cv->epoch_sample_count : 0, nodes));
	for (const dlsched::Job& j : jobs)
		(j.running() ? view.running : view.pending).push_back(&j);
	std::sort(view.pending.begin(), view.pending.end(), [](const dlsched::Job* a, const dlsched::Job* b) {
		return a->submit_time != b->submit_time ? a->submit_time < b->submit_time : a->id < b->id;
	});
	std::sort(view.running.begin(), view.running.end(),
		  [](const dlsched::Job* a, const dlsched::Job* b) { return a->id < b->id; });

	return DLSCHED_OK;
}

// Appends a cycle's steps to the experience table, in one short transaction. Never fails the
// cycle: an error (the DB busy for more than kExperienceBusyMs, not writable, ...) drops the
// steps and is counted. A DB that could not be opened is tried again ProfileRefresh= seconds later
// (the cycles between drop their steps without trying).
void record_experience(ExperienceLog& log, const std::vector<dlsched::PolicyStep>& steps) noexcept
{
	const double now = steps.empty() ? 0 : steps.front().now;
	if (!log.db && now < log.retry_at) {
		log.dropped += steps.size();  // backing off: the last error stands
		return;
	}
	// Every error path below formats into the fixed buffer: none allocates, so that a
	// std::bad_alloc cannot become a second exception in this noexcept function (std::terminate).
	auto failed = [&log, &steps](const char* what, const char* detail) noexcept {
		log.errors++;
		log.dropped += steps.size();
		std::snprintf(log.last_error, sizeof log.last_error, "%s%s", what, detail);
	};
	try {
		if (!log.db) {
			auto db = dlsched::db::ProfileDb::open_writer(log.path, kExperienceBusyMs,
								      !log.checked);
			if (!db.is_ok()) {
				log.retry_at = now + log.refresh_s;
				return failed(db.status().message().c_str(), "");
			}
			log.db = std::make_unique<dlsched::db::ProfileDb>(std::move(db).value());
			log.checked = true;
		}
		const dlsched::Status st = log.db->add_experience(log.cluster, steps);
		if (st.is_ok()) {
			log.rows += steps.size();
			return;
		}
		failed(st.message().c_str(), "");
	} catch (const std::bad_alloc&) {
		failed("recording experience: ", "out of memory");
	} catch (const std::exception& e) {
		failed("recording experience: ", e.what());
	} catch (...) {
		failed("recording experience: ", "unknown exception");
	}
}

// The files DumpViews= already holds (an earlier slurmctld's), oldest first: removed first.
void adopt_dumps(ViewDump& dump)
{
	dump.scanned = true;
	DIR* d = opendir(dump.dir.c_str());
	if (!d)
		return;
	std::vector<std::string> names;
	while (const dirent* e = readdir(d)) {
		const std::string name = e->d_name;
		if (name.size() > 10 && name.compare(0, 5, "view-") == 0 &&
		    name.compare(name.size() - 5, 5, ".json") == 0)
			names.push_back(dump.dir + "/" + name);
	}
	closedir(d);
	std::sort(names.begin(), names.end());  // view-<now>-<cycle>.json: in time order
	dump.files.assign(names.begin(), names.end());
}

// Writes one cycle's file (DumpViews=): the view as the host gave it, each job as the evidence
// prepared it, and the decisions. Never fails the cycle: an error is counted and kept, and told
// on stderr once.
void dump_cycle(dlsched_scheduler_t* sched, const dlsched_cluster_view_t* cv,
		const std::vector<dlsched::Job>& jobs, const dlsched_decisions_t* d) noexcept
{
	ViewDump& dump = sched->dump;
	auto failed = [&dump](const char* what, const char* detail) noexcept {
		if (dump.errors++ == 0)
			std::fprintf(stderr,
				     "dlsched: DumpViews=%s: %s%s; views are not written, the cycles go on\n",
				     dump.dir.c_str(), what, detail);
		std::snprintf(dump.last_error, sizeof dump.last_error, "%s%s", what, detail);
	};
	try {
		if (!dump.scanned)
			adopt_dumps(dump);
		dlsched::json::Value f = dlsched::json::Value::object();
		f.set("schema", dlsched::json::Value::integer(dlsched::capi::kDumpSchema));
		f.set("cycle", dlsched::json::Value::integer(static_cast<std::int64_t>(cv->cycle)));
		f.set("now", dlsched::json::Value::number(cv->now));
		dlsched::json::Value conf = dlsched::json::Value::object();
		for (const dlsched::ConfigKey& k : dlsched::config_keys())
			if (sched->config.is_set(k.name))
				conf.set(k.name,
					 dlsched::json::Value::string(sched->config.get_text(k.name)));
		f.set("config", conf);
		// QuotaFile='s quotas as read at the last load of dlsched.conf: a replay uses these, not
		// the file (changed since, or not on the replaying machine).
		if (sched->quota_file_set) {
			dlsched::json::Value quotas = dlsched::json::Value::array();
			for (const dlsched::AccountQuota& q : sched->quota_file) {
				dlsched::json::Value o = dlsched::json::Value::object();
				o.set("account", dlsched::json::Value::string(q.account));
				o.set("gpus", dlsched::json::Value::number(q.gpus));
				quotas.push_back(o);
			}
			f.set("quota_file", quotas);
		}
		// Who decided the cycle (the guard's choice), so that a replay asks the same policy.
		if (sched->guard_scheduler)
			f.set("guard_choice",
			      dlsched::json::Value::string(sched->guard_learned ? "learned" : "heuristic"));
		f.set("view", dlsched::capi::view_json(*cv));
		dlsched::json::Value prepared = dlsched::json::Value::array();
		for (const dlsched::Job& j : jobs)
			prepared.push_back(dlsched::capi::prepared_json(j));
		f.set("prepared", prepared);
		f.set("decisions", dlsched::capi::decisions_json(d));
		const std::string text = f.dump(1, true) + "\n";
		char name[96];
		std::snprintf(name, sizeof name, "/view-%010.0f-%06llu.json", std::floor(cv->now),
			      static_cast<unsigned long long>(cv->cycle));
		const std::string path = dump.dir + name;
		const std::string tmp = path + ".tmp";
		FILE* out = std::fopen(tmp.c_str(), "w");
		if (!out)
			return failed(tmp.c_str(), ": cannot be created");
		const bool wrote = std::fwrite(text.data(), 1, text.size(), out) == text.size();
		if (std::fclose(out) != 0 || !wrote || std::rename(tmp.c_str(), path.c_str()) != 0) {
			std::remove(tmp.c_str());
			return failed(path.c_str(), ": cannot be written");
		}
		++dump.written;
		if (dump.files.empty() || dump.files.back() != path)
			dump.files.push_back(path);
		while (dump.files.size() > dlsched::capi::kDumpViewsKept) {
			std::remove(dump.files.front().c_str());
			dump.files.pop_front();
		}
	} catch (const std::bad_alloc&) {
		failed("out of memory", "");
	} catch (const std::exception& e) {
		failed(e.what(), "");
	} catch (...) {
		failed("unknown exception", "");
	}
}

// For placement alone (select/dlsched_cons_tres): a learned ordering or allocation that this
// library does not have (the models library is not linked) is replaced by ModelFallback= and
// kLearnedFallbackAllocation, which only ever order and size in this scheduler's decisions, never
// its placements; the preset's placement (gp-placement for dual-agent) is built as configured.
// Says what it replaced in `note`.
void placement_only(dlsched::Config& config, const dlsched::PolicyRegistry& registry, std::string& note)
{
	auto spec = registry.preset(config.get_string("Policy"));
	if (!spec.is_ok())
		return;  // Scheduler::create names it
	auto known = [&registry](const char* kind, const std::string& name) {
		for (const dlsched::PolicyRegistry::Entry& e : registry.list(kind))
			if (e.name == name)
				return true;
		return false;
	};
	auto chosen = [&config](const char* key, const std::string& preset_value) {
		return config.is_set(key) ? config.get_string(key) : preset_value;
	};
	const std::string ordering = chosen("OrderingPolicy", spec.value().ordering);
	const std::string allocation = chosen("AllocationPolicy", spec.value().allocation);
	std::string replaced;
	if (ordering == dlsched::kLearnedPolicy && !known("ordering", ordering)) {
		const std::string fb = config.get_string("ModelFallback");
		(void)config.set("OrderingPolicy", fb, "placement only");
		replaced = "ordering " + ordering + " -> " + fb;
	}
	if (allocation == dlsched::kLearnedPolicy && !known("allocation", allocation)) {
		(void)config.set("AllocationPolicy", dlsched::kLearnedFallbackAllocation, "placement only");
		replaced += (replaced.empty() ? "" : ", ") + std::string("allocation ") + allocation +
			    " -> " + dlsched::kLearnedFallbackAllocation;
	}
	if (!replaced.empty())
		note = "placement only: the learned policies decide in sched/dlsched; this library has no "
		       "models "
		       "library, so the scheduler built here stands in with " +
		       replaced + ", which never change where a job is placed";
}

int create_scheduler(const char* conf_path, bool for_placement, dlsched_scheduler_t** out,
		     dlsched_error_t* err)
{
	if (!out)
		return report(err, DLSCHED_EINVAL, "dlsched_scheduler_create: out is NULL");
	*out = nullptr;
	auto s = std::make_unique<dlsched_scheduler>();
	if (conf_path) {
		auto c = dlsched::Config::load_file(conf_path);
		if (!c.is_ok())
			return report(err, c.status());
		s->config = c.value();
	}
	auto models = dlsched::load_model_catalog(s->config.get_string("ModelProfiles"));
	if (!models.is_ok())
		return report(err, models.status());
	s->models = std::move(models).value();
	dlsched::register_builtin_policies(s->registry);
	dlsched::Config config = s->config;
	if (for_placement)
		placement_only(config, s->registry, s->placement_note);
	auto sched = dlsched::Scheduler::create(config, s->registry);
	if (!sched.is_ok())
		return report(err, sched.status());
	s->scheduler = std::move(sched).value();
	if (!for_placement) {
		// GuardPolicy='s scheduler beside a learned one, as dlsched-sim builds it.
		const dlsched::SchedulerSpec& sp = s->scheduler->spec();
		const bool learned = sp.ordering == std::string(dlsched::kLearnedPolicy) ||
				     sp.allocation == std::string(dlsched::kLearnedPolicy);
		auto guard = dlsched::GuardSettings::from_config(config, learned);
		if (!guard.is_ok())
			return report(err, guard.status());
		if (guard->enabled) {
			auto gc = dlsched::guard_policy_config(config, *guard);
			if (!gc.is_ok())
				return report(err, gc.status());
			auto g = dlsched::Scheduler::create(*gc, s->registry);
			if (!g.is_ok())
				return report(err, DLSCHED_EINVAL,
					      "GuardPolicy=" + guard->policy + ": " + g.status().message());
			s->guard_scheduler = std::move(g).value();
		}
	}
	s->experience.path = s->config.get_string("ProfileDB");
	// A scheduler for placement never decides a cycle: nothing to record.
	s->experience.enabled =
		!for_placement && s->config.get_bool("RecordExperience") && !s->experience.path.empty();
	s->experience.refresh_s = s->config.get_double("ProfileRefresh");
	// A scheduler for placement never decides a cycle: nothing to dump.
	if (!for_placement)
		s->dump.dir = s->config.get_string("DumpViews");
	s->overhead = dlsched::predict::OverheadParams::from_config(s->config);
	s->reader = std::make_unique<dlsched::predict::ProfileReader>(s->experience.path, s->cluster,
								      s->config.get_double("ProfileRefresh"));
	// A scheduler for placement never decides: its quotas would never be read.
	if (const std::string qf = s->config.get_string("QuotaFile"); !qf.empty() && !for_placement) {
		auto q = dlsched::read_quota_file(qf);
		if (!q.is_ok())
			return report(err,
				      q.status().code() == dlsched::StatusCode::kNotFound ? DLSCHED_EIO
											  : DLSCHED_EINVAL,
				      "QuotaFile=" + q.status().message());
		s->quota_file = std::move(q).value();
		s->quota_file_set = true;
	}
	*out = s.release();
	return ok(err);
}

// The keys the safety rules follow, whatever the policy: two-step preemptions in progress (their
// checkpoint reports in ProfileDB=, their grace and signal), the loan fence and reclaims, and the
// cycle that checks them.
const std::vector<std::string_view> kSafetyKeys = {
	"ProfileDB",          "ProfileRefresh",      "PreemptGrace",  "CheckpointSignal", "ReclaimTimeout",
	"InferencePartition", "InferenceDemandFile", "LoanStateFile", "SchedInterval",
};

int create_safety(const char* conf_path, dlsched_scheduler_t** out, dlsched_error_t* err)
{
	if (!out)
		return report(err, DLSCHED_EINVAL, "dlsched_scheduler_create_safety: out is NULL");
	*out = nullptr;
	auto s = std::make_unique<dlsched_scheduler>();
	s->safety_only = true;
	if (conf_path) {
		std::ifstream in(conf_path, std::ios::binary);
		if (in) {
			std::ostringstream text;
			text << in.rdbuf();
			s->config = dlsched::Config::parse_only(text.str(), conf_path, kSafetyKeys,
								&s->safety_skipped);
		}
	}
	dlsched::register_builtin_policies(s->registry);
	// Never asked to decide: the default policies only give describe() and notes() an object.
	auto sched = dlsched::Scheduler::create(dlsched::Config(), s->registry);
	if (!sched.is_ok())
		return report(err, sched.status());
	s->scheduler = std::move(sched).value();
	s->experience.path = s->config.get_string("ProfileDB");
	s->experience.enabled = false;
	s->overhead = dlsched::predict::OverheadParams::from_config(s->config);
	s->reader = std::make_unique<dlsched::predict::ProfileReader>(s->experience.path, s->cluster,
								      s->config.get_double("ProfileRefresh"));
	*out = s.release();
	return ok(err);
}

// The configuration a typed getter reads: the scheduler's, or every key at its default.
const dlsched::Config& config_of(const dlsched_scheduler_t* sched)
{
	static const dlsched::Config kDefaults;
	return sched ? sched->config : kDefaults;
}

// DLSCHED_OK when `key` is a known key of one of the types `a`, `b`.
int check_key(const char* key, dlsched::ConfigType a, dlsched::ConfigType b)
{
	if (!key)
		return DLSCHED_EINVAL;
	const dlsched::ConfigKey* k = dlsched::find_config_key(key);
	if (!k)
		return DLSCHED_ENOTFOUND;
	return k->type == a || k->type == b ? DLSCHED_OK : DLSCHED_EINVAL;
}

}  // namespace

extern "C" {

const char* dlsched_version(void)
{
	return "0.1.0";
}

int dlsched_files_trust_owner(uint32_t trusted_uid)
{
	dlsched::trust_files_owned_by(trusted_uid);
	return DLSCHED_OK;
}

int dlsched_scheduler_create(const char* conf_path, dlsched_scheduler_t** out, dlsched_error_t* err)
{
	return guarded(err, "dlsched_scheduler_create",
		       [&]() -> int { return create_scheduler(conf_path, false, out, err); });
}

int dlsched_scheduler_create_placement(const char* conf_path, dlsched_scheduler_t** out, dlsched_error_t* err)
{
	return guarded(err, "dlsched_scheduler_create_placement",
		       [&]() -> int { return create_scheduler(conf_path, true, out, err); });
}

int dlsched_scheduler_create_safety(const char* conf_path, dlsched_scheduler_t** out, dlsched_error_t* err)
{
	return guarded(err, "dlsched_scheduler_create_safety",
		       [&]() -> int { return create_safety(conf_path, out, err); });
}

int dlsched_scheduler_is_safety(const dlsched_scheduler_t* sched)
{
	return sched && sched->safety_only ? 1 : 0;
}

void dlsched_scheduler_destroy(dlsched_scheduler_t* sched)
{
	delete sched;
}

int dlsched_scheduler_describe(const dlsched_scheduler_t* sched, char* buf, size_t len)
{
	return guarded(nullptr, "dlsched_scheduler_describe", [&]() -> int {
		if (!sched || !buf || len == 0)
			return DLSCHED_EINVAL;
		if (sched->safety_only) {
			std::snprintf(
				buf, len,
				"safety settings only (ProfileDB=%s PreemptGrace=%s InferencePartition=%s)",
				sched->config.get_text("ProfileDB").c_str(),
				sched->config.get_text("PreemptGrace").c_str(),
				sched->config.get_text("InferencePartition").c_str());
			return DLSCHED_OK;
		}
		const dlsched::SchedulerSpec& sp = sched->scheduler->spec();
		std::snprintf(buf, len,
			      "preset=%s ordering=%s allocation=%s placement=%s admission=%s preemption=%s "
			      "loaning=%s fairness=%s",
			      sched->scheduler->preset_name().c_str(), sp.ordering.c_str(),
			      sp.allocation.c_str(), sp.placement.c_str(), sp.admission.c_str(),
			      sp.preemption.c_str(), sp.loaning.c_str(),
			      sp.fairness.empty() ? "none" : sp.fairness.c_str());
		return DLSCHED_OK;
	});
}

int dlsched_scheduler_notes(const dlsched_scheduler_t* sched, char* buf, size_t len)
{
	return guarded(nullptr, "dlsched_scheduler_notes", [&]() -> int {
		if (!sched || !buf || len == 0)
			return DLSCHED_EINVAL;
		std::string notes = sched->safety_only ? std::string() : sched->scheduler->notes();
		auto line = [&notes](const std::string& l) {
			if (!notes.empty())
				notes += '\n';
			notes += l;
		};
		if (!sched->placement_note.empty())
			line(sched->placement_note);
		for (const std::string& skipped : sched->safety_skipped)
			line("safety settings: passed over " + skipped);
		const ExperienceLog& x = sched->experience;
		if (x.enabled)
			line("experience: every cycle a learned ordering decides is appended to " + x.path +
			     (x.cluster.empty() ? std::string() : " (cluster " + x.cluster + ")"));
		else if (sched->config.get_bool("RecordExperience"))
			line("experience: RecordExperience=yes but ProfileDB= is empty: nothing is recorded");
		const ViewDump& v = sched->dump;
		if (!v.dir.empty()) {
			struct stat st;
			const char* why = nullptr;
			if (stat(v.dir.c_str(), &st) != 0)
				why = std::strerror(errno);
			else if (!S_ISDIR(st.st_mode))
				why = "not a directory";
			else if (access(v.dir.c_str(), W_OK | X_OK) != 0)
				why = std::strerror(errno);
			if (why)
				line("views: DumpViews=" + v.dir + " is not a writable directory (" + why +
				     "): no views are written; create it, or unset DumpViews=");
			else
				line("views: each cycle's view and decisions are written to " + v.dir +
				     "/view-*.json (the last " +
				     std::to_string(dlsched::capi::kDumpViewsKept) + " kept)");
		}
		std::snprintf(buf, len, "%s", notes.c_str());
		return notes.size() < len ? DLSCHED_OK : DLSCHED_EINVAL;
	});
}

int dlsched_scheduler_set_cluster(dlsched_scheduler_t* sched, const char* cluster)
{
	return guarded(nullptr, "dlsched_scheduler_set_cluster", [&]() -> int {
		if (!sched)
			return DLSCHED_EINVAL;
		sched->experience.cluster = str(cluster);
		sched->cluster = str(cluster);
		sched->reader = std::make_unique<dlsched::predict::ProfileReader>(
			sched->config.get_string("ProfileDB"), sched->cluster,
			sched->config.get_double("ProfileRefresh"));
		return DLSCHED_OK;
	});
}

int dlsched_scheduler_experience_stats(const dlsched_scheduler_t* sched, dlsched_experience_stats_t* out)
{
	return guarded(nullptr, "dlsched_scheduler_experience_stats", [&]() -> int {
		if (!sched || !out || out->struct_size < sizeof(dlsched_experience_stats_t))
			return DLSCHED_EINVAL;
		const ExperienceLog& x = sched->experience;
		out->enabled = x.enabled ? 1 : 0;
		out->rows = x.rows;
		out->errors = x.errors;
		out->dropped = x.dropped;
		std::snprintf(out->last_error, sizeof out->last_error, "%s", x.last_error);
		return DLSCHED_OK;
	});
}

int dlsched_scheduler_config(const dlsched_scheduler_t* sched, const char* key, char* buf, size_t len)
{
	return guarded(nullptr, "dlsched_scheduler_config", [&]() -> int {
		if (!sched || !key || !buf || len == 0)
			return DLSCHED_EINVAL;
		if (!dlsched::find_config_key(key))
			return DLSCHED_ENOTFOUND;
		const std::string v = sched->config.get_text(key);
		if (v.size() >= len)
			return DLSCHED_EINVAL;
		std::memcpy(buf, v.c_str(), v.size() + 1);
		return DLSCHED_OK;
	});
}

int dlsched_config_get_double(const dlsched_scheduler_t* sched, const char* key, double* out)
{
	return guarded(nullptr, "dlsched_config_get_double", [&]() -> int {
		using dlsched::ConfigType;
		if (!out)
			return DLSCHED_EINVAL;
		if (int rc = check_key(key, ConfigType::kDouble, ConfigType::kInt); rc != DLSCHED_OK)
			return rc;
		const dlsched::ConfigKey* k = dlsched::find_config_key(key);
		*out = k->type == ConfigType::kInt ? static_cast<double>(config_of(sched).get_int(key))
						   : config_of(sched).get_double(key);
		return DLSCHED_OK;
	});
}

int dlsched_config_get_int(const dlsched_scheduler_t* sched, const char* key, long* out)
{
	return guarded(nullptr, "dlsched_config_get_int", [&]() -> int {
		using dlsched::ConfigType;
		if (!out)
			return DLSCHED_EINVAL;
		if (int rc = check_key(key, ConfigType::kInt, ConfigType::kInt); rc != DLSCHED_OK)
			return rc;
		*out = config_of(sched).get_int(key);
		return DLSCHED_OK;
	});
}

int dlsched_config_get_bool(const dlsched_scheduler_t* sched, const char* key, int* out)
{
	return guarded(nullptr, "dlsched_config_get_bool", [&]() -> int {
		using dlsched::ConfigType;
		if (!out)
			return DLSCHED_EINVAL;
		if (int rc = check_key(key, ConfigType::kBool, ConfigType::kBool); rc != DLSCHED_OK)
			return rc;
		*out = config_of(sched).get_bool(key) ? 1 : 0;
		return DLSCHED_OK;
	});
}

int dlsched_config_get_text(const dlsched_scheduler_t* sched, const char* key, char* buf, size_t len)
{
	return guarded(nullptr, "dlsched_config_get_text", [&]() -> int {
		if (!key || !buf || len == 0)
			return DLSCHED_EINVAL;
		if (!dlsched::find_config_key(key))
			return DLSCHED_ENOTFOUND;
		const std::string v = config_of(sched).get_text(key);
		if (v.size() >= len)
			return DLSCHED_EINVAL;
		std::memcpy(buf, v.c_str(), v.size() + 1);
		return DLSCHED_OK;
	});
}

int dlsched_scheduler_decide(dlsched_scheduler_t* sched, const dlsched_cluster_view_t* cv,
			     dlsched_decisions_t** out, dlsched_error_t* err)
{
	return guarded(err, "dlsched_scheduler_decide", [&]() -> int {
		if (!sched || !cv || !out)
			return report(err, DLSCHED_EINVAL, "dlsched_scheduler_decide: NULL argument");
		*out = nullptr;
		if (sched->safety_only)
			return report(err, DLSCHED_EINVAL,
				      "dlsched_scheduler_decide: a scheduler of safety settings only never "
				      "decides");
		ConvertedView c;
		if (int rc = convert_view(sched, cv, c, err); rc != DLSCHED_OK)
			return rc;
		const dlsched::ClusterView& view = c.view;
		// Running jobs' progress and preemption costs from the profile DB (off the host's locks).
		// Runtimes and their spread from the same records and same-model histories: a queued job's
		// model history (read every ProfileRefresh seconds), a requeued one's checkpoints.
		if (sched->replay) {
			// A recorded cycle: each job as the recording's evidence prepared it.
			for (dlsched::Job& j : c.jobs) {
				const dlsched::json::Value& prepared = *sched->replay;
				std::size_t k = 0;
				while (k < prepared.size() &&
				       prepared.at(k).get("job_id").as_number() != static_cast<double>(j.id))
					++k;
				if (k == prepared.size())
					return report(err, DLSCHED_EINVAL,
						      "replay: job " + std::to_string(j.id) +
							      " of the view has no \"prepared\" entry");
				if (dlsched::Status st = dlsched::capi::apply_prepared(prepared.at(k), j);
				    !st.is_ok())
					return report(err, st);
			}
		} else {
			sched->reader->refresh(c.view.running, sched->models, cv->now, c.view.pending);
		}
		// Then each job's length by the one order of precedence both hosts use (predict/evidence.h),
		// from the profile DB's evidence.
		for (std::size_t i = 0; !sched->replay && i < c.jobs.size(); ++i) {
			dlsched::Job& j = c.jobs[i];
			if (j.running()) {
				(void)sched->reader->apply(j, sched->models, sched->overhead, cv->now,
							   element(cv->jobs, i).epochs_done < 0);
				// Slurm holds a requeued job back before it may start again: part of every
				// restart.
				j.preempt_cost.resume += c.requeue_delay;
			} else {
				sched->reader->checkpoint_progress(j);
			}
			if (dlsched::predict::prepare_runtime(j, *sched->reader, sched->models, c.limits,
							      c.claims[i]) ==
			    dlsched::predict::RuntimeSource::kUnknown)
				j.epochs_total = 1;
		}

		dlsched::StepLog steps;  // the learned ordering's steps of this call
		if (sched->experience.enabled)
			c.view.recorder = &steps;
		auto d = std::make_unique<dlsched_decisions>();
		dlsched::Scheduler& deciding = sched->guard_scheduler && !sched->guard_learned
						       ? *sched->guard_scheduler
						       : *sched->scheduler;
		d->decisions = deciding.decide(view);
		c.view.recorder = nullptr;
		if (!steps.steps.empty())
			record_experience(sched->experience, steps.steps);
		for (const dlsched::Action& a : d->decisions.actions) {
			std::vector<dlsched_share_t> sh;
			for (const dlsched::NodeShare& s : a.placement)
				sh.push_back({s.node, s.gpus});
			d->shares.push_back(std::move(sh));
		}
		d->order.assign(d->decisions.order.begin(), d->decisions.order.end());
		if (!sched->dump.dir.empty() && !sched->replay)
			dump_cycle(sched, cv, c.jobs, d.get());
		*out = d.release();
		return ok(err);
	});
}

int dlsched_scheduler_place(dlsched_scheduler_t* sched, const dlsched_cluster_view_t* cv, uint32_t job_id,
			    int gpus, dlsched_share_t* shares, size_t capacity, size_t* count,
			    dlsched_error_t* err)
{
	return guarded(err, "dlsched_scheduler_place", [&]() -> int {
		if (!sched || !cv || !count || (capacity && !shares))
			return report(err, DLSCHED_EINVAL, "dlsched_scheduler_place: NULL argument");
		*count = 0;
		if (sched->safety_only)
			return report(
				err, DLSCHED_EINVAL,
				"dlsched_scheduler_place: a scheduler of safety settings only never places");
		ConvertedView c;
		if (int rc = convert_view(sched, cv, c, err); rc != DLSCHED_OK)
			return rc;
		const dlsched::Job* job = nullptr;
		for (const dlsched::Job& j : c.jobs)
			if (j.id == job_id && !j.running())
				job = &j;
		if (!job)
			return report(err, DLSCHED_EINVAL,
				      "dlsched_scheduler_place: job " + std::to_string(job_id) +
					      " is not a pending job of the view");
		if (gpus <= 0)
			gpus = job->gpus_requested;
		dlsched::FreeMap free(c.view);
		std::vector<dlsched::NodeShare> placed;
		if (!sched->scheduler->placement().place(c.view, *job, gpus, free, placed))
			return report(err, DLSCHED_ENOTFOUND,
				      "job " + std::to_string(job_id) + ": no placement for " +
					      std::to_string(gpus) + " GPU(s) on the free GPUs");
		if (placed.size() > capacity)
			return report(err, DLSCHED_EINVAL,
				      "dlsched_scheduler_place: " + std::to_string(placed.size()) +
					      " shares do not fit in " + std::to_string(capacity));
		for (size_t i = 0; i < placed.size(); ++i)
			shares[i] = {placed[i].node, placed[i].gpus};
		*count = placed.size();
		return ok(err);
	});
}

int dlsched_scheduler_checkpoint_since(dlsched_scheduler_t* sched, uint32_t job_id, double since, double now,
				       double* at)
{
	return guarded(nullptr, "dlsched_scheduler_checkpoint_since", [&]() -> int {
		if (!sched || !at)
			return DLSCHED_EINVAL;
		const double t = sched->reader->checkpoint_since(job_id, since, now);
		if (t < 0)
			return DLSCHED_ENOTFOUND;
		*at = t;
		return DLSCHED_OK;
	});
}

namespace {

// The preemptions table's writer: opened at the first write (and again after a failure).
dlsched::Status preemption_writer(dlsched_scheduler_t* sched)
{
	if (sched->writer)
		return dlsched::Status::ok();
	const std::string path = sched->config.get_string("ProfileDB");
	if (path.empty())
		return dlsched::invalid_argument("ProfileDB= is not set: preemptions are not recorded");
	auto db = dlsched::db::ProfileDb::open_writer(path, kExperienceBusyMs, !sched->writer_checked);
	if (!db.is_ok())
		return db.status();
	sched->writer = std::make_unique<dlsched::db::ProfileDb>(std::move(db).value());
	sched->writer_checked = true;
	return dlsched::Status::ok();
}

int write_failed(dlsched_scheduler_t* sched, dlsched_error_t* err, const dlsched::Status& st)
{
	sched->writer.reset();
	return report(err, DLSCHED_EIO, st.message());
}

}  // namespace

int dlsched_scheduler_record_preemption(dlsched_scheduler_t* sched, uint32_t job_id, double requested_at,
					double grace, int gpus, double predicted_suspend,
					double predicted_resume, const char* reason, dlsched_error_t* err)
{
	return guarded(err, "dlsched_scheduler_record_preemption", [&]() -> int {
		if (!sched)
			return report(err, DLSCHED_EINVAL,
				      "dlsched_scheduler_record_preemption: NULL scheduler");
		dlsched::Status st = preemption_writer(sched);
		if (!st.is_ok())
			return write_failed(sched, err, st);
		dlsched::db::PreemptionRecord r;
		r.cluster = sched->cluster;
		r.job_id = job_id;
		r.requested_s = requested_at;
		r.grace_s = grace;
		r.gpus = gpus;
		r.predicted_suspend_s = predicted_suspend;
		r.predicted_resume_s = predicted_resume;
		r.reason = str(reason);
		st = sched->writer->add_preemption(r);
		return st.is_ok() ? ok(err) : write_failed(sched, err, st);
	});
}

int dlsched_scheduler_finish_preemption(dlsched_scheduler_t* sched, uint32_t job_id, double requested_at,
					const char* outcome, double requeued_at, dlsched_error_t* err)
{
	return guarded(err, "dlsched_scheduler_finish_preemption", [&]() -> int {
		if (!sched)
			return report(err, DLSCHED_EINVAL,
				      "dlsched_scheduler_finish_preemption: NULL scheduler");
		dlsched::Status st = preemption_writer(sched);
		if (!st.is_ok())
			return write_failed(sched, err, st);
		st = sched->writer->finish_preemption(sched->cluster, job_id, requested_at, str(outcome),
						      requeued_at);
		return st.is_ok() ? ok(err) : write_failed(sched, err, st);
	});
}

int dlsched_scheduler_profile_status(const dlsched_scheduler_t* sched, char* buf, size_t len)
{
	return guarded(nullptr, "dlsched_scheduler_profile_status", [&]() -> int {
		if (!sched || !buf || len == 0)
			return DLSCHED_EINVAL;
		const std::string& s = sched->reader->status();
		std::snprintf(buf, len, "%s", s.c_str());
		return s.size() < len ? DLSCHED_OK : DLSCHED_EINVAL;
	});
}

int dlsched_parse_job_metadata(const char* comment, const char* const* env, size_t env_count,
			       dlsched_job_metadata_t* out, dlsched_error_t* err)
{
	return guarded(err, "dlsched_parse_job_metadata", [&]() -> int {
		if (!out || out->struct_size < sizeof(dlsched_job_metadata_t) || (env_count && !env))
			return report(
				err, DLSCHED_EINVAL,
				"dlsched_parse_job_metadata: NULL out, struct_size too small, or NULL env");
		dlsched::JobMetadata m;
		if (comment)
			dlsched::parse_job_words(comment, m);
		std::vector<std::string_view> entries;
		for (size_t i = 0; i < env_count; ++i)
			if (env[i])
				entries.emplace_back(env[i]);
		if (!entries.empty())
			dlsched::parse_job_env(entries, m);
		const size_t size = out->struct_size;
		std::memset(out, 0, sizeof(dlsched_job_metadata_t));
		out->struct_size = size;
		std::snprintf(out->model, sizeof(out->model), "%s", m.model.c_str());  // <= 64 characters
		out->epochs = m.epochs;
		out->epoch_time_1gpu = m.epoch_time_1gpu;
		out->gpus_min = m.gpus_min;
		out->gpus_max = m.gpus_max;
		out->deadline = m.deadline;
		out->problems = static_cast<int>(m.problems.size());
		return ok(err);
	});
}

int dlsched_judge_deadline_word(double word, double first_seen, double earliest_start, double time_min_s,
				double* deadline, char* problem, size_t problem_len, dlsched_error_t* err)
{
	return guarded(err, "dlsched_judge_deadline_word", [&]() -> int {
		if (!deadline)
			return report(err, DLSCHED_EINVAL, "dlsched_judge_deadline_word: NULL deadline");
		const dlsched::DeadlineClaim c =
			dlsched::judge_deadline_word(word, first_seen, earliest_start, time_min_s);
		*deadline = c.deadline;
		if (problem && problem_len)
			std::snprintf(problem, problem_len, "%s", c.problem.c_str());
		return ok(err);
	});
}

int dlsched_epoch_reader_create(const char* db_path, const char* cluster, dlsched_epoch_reader_t** out,
				dlsched_error_t* err)
{
	return guarded(err, "dlsched_epoch_reader_create", [&]() -> int {
		if (!out || !db_path || !*db_path)
			return report(err, DLSCHED_EINVAL,
				      "dlsched_epoch_reader_create: NULL out or empty database path");
		*out = nullptr;
		auto r = std::make_unique<dlsched_epoch_reader>();
		r->path = db_path;
		r->cluster = str(cluster);
		*out = r.release();
		return ok(err);
	});
}

void dlsched_epoch_reader_destroy(dlsched_epoch_reader_t* reader)
{
	delete reader;
}

namespace {

// How long a read waits for dlsched-ingestd's write lock (as the profile reader of decide()).
constexpr int kEpochReaderBusyMs = 200;

}  // namespace

int dlsched_epoch_reader_read(dlsched_epoch_reader_t* reader, dlsched_epoch_sample_t* out, size_t capacity,
			      size_t* count, dlsched_error_t* err)
{
	return guarded(err, "dlsched_epoch_reader_read", [&]() -> int {
		if (!reader || !count || (capacity && !out))
			return report(err, DLSCHED_EINVAL, "dlsched_epoch_reader_read: NULL argument");
		*count = 0;
		if (!reader->db) {
			// The whole file is checked at the first open only: a reopen after a failed read does
			// not read every page again.
			auto db = dlsched::db::ProfileDb::open_reader(reader->path, kEpochReaderBusyMs,
								      !reader->checked);
			if (!db.is_ok())
				return report(err,
					      db.status().code() == dlsched::StatusCode::kNotFound
						      ? DLSCHED_ENOTFOUND
						      : DLSCHED_EIO,
					      db.status().message());
			reader->db = std::make_unique<dlsched::db::ProfileDb>(std::move(db).value());
			reader->checked = true;
		}
		auto runs = reader->db->recent_node_runs(reader->cluster, capacity);
		if (!runs.is_ok()) {
			reader->db.reset();  // opened again at the next read
			return report(err, DLSCHED_EIO, runs.status().message());
		}
		size_t n = 0;
		std::map<std::pair<std::string, std::string>, std::size_t> per_user_node;
		for (const dlsched::db::NodeRun& r : runs.value()) {
			if (n >= capacity || r.epochs.empty())
				break;
			if (!r.user.empty() &&
			    ++per_user_node[{r.user, r.node}] > dlsched::kSpeedRunsPerUserNode)
				continue;  // the user's most recent runs on that node are in already
			dlsched_epoch_sample_t& s = out[n];
			if (r.node.size() >= sizeof s.node || r.model.size() >= sizeof s.model)
				continue;  // no Slurm node or model name (spank/dlsched: 64 at most) is this
					   // long
			std::vector<double> seconds;
			for (const dlsched::db::EpochRecord& e : r.epochs)
				seconds.push_back(e.seconds());
			const double steady = dlsched::steady_epoch_seconds(seconds);
			if (!(steady > 0))
				continue;  // its warm-up epoch only, so far
			std::memset(&s, 0, sizeof s);
			std::memcpy(s.node, r.node.c_str(), r.node.size() + 1);
			std::memcpy(s.model, r.model.c_str(), r.model.size() + 1);
			s.gpus = r.epochs.back().gpus;
			s.nodes = r.nodes;
			s.epochs = static_cast<int>(r.epochs.size()) - 1;
			s.epoch_s = steady;
			s.at = r.epochs.back().end_s;
			++n;
		}
		*count = n;
		return ok(err);
	});
}

int dlsched_scheduler_guard_choice(const dlsched_scheduler_t* sched)
{
	if (!sched || !sched->guard_scheduler)
		return DLSCHED_GUARD_NONE;
	return sched->guard_learned ? DLSCHED_GUARD_LEARNED : DLSCHED_GUARD_HEURISTIC;
}

int dlsched_scheduler_set_guard_choice(dlsched_scheduler_t* sched, int choice, dlsched_error_t* err)
{
	return guarded(err, "dlsched_scheduler_set_guard_choice", [&]() -> int {
		if (!sched)
			return report(err, DLSCHED_EINVAL,
				      "dlsched_scheduler_set_guard_choice: sched is NULL");
		if (!sched->guard_scheduler)
			return report(
				err, DLSCHED_EINVAL,
				"dlsched_scheduler_set_guard_choice: this scheduler has no guard (not a "
				"learned policy, or LearnedGuard=no)");
		if (choice != DLSCHED_GUARD_HEURISTIC && choice != DLSCHED_GUARD_LEARNED)
			return report(
				err, DLSCHED_EINVAL,
				"dlsched_scheduler_set_guard_choice: choice " + std::to_string(choice) +
					" is neither DLSCHED_GUARD_HEURISTIC nor DLSCHED_GUARD_LEARNED");
		sched->guard_learned = choice == DLSCHED_GUARD_LEARNED;
		return ok(err);
	});
}

int dlsched_guard_verdict_parse(const char* text, const char* name, double now, double interval,
				dlsched_guard_verdict_t* out, dlsched_error_t* err)
{
	return guarded(err, "dlsched_guard_verdict_parse", [&]() -> int {
		if (!text || !out)
			return report(err, DLSCHED_EINVAL, "dlsched_guard_verdict_parse: NULL argument");
		if (out->struct_size < sizeof(dlsched_guard_verdict_t))
			return report(err, DLSCHED_EINVAL,
				      "dlsched_guard_verdict_parse: out->struct_size is " +
					      std::to_string(out->struct_size) + ", less than " +
					      std::to_string(sizeof(dlsched_guard_verdict_t)));
		const std::size_t size = out->struct_size;
		std::memset(out, 0, sizeof(dlsched_guard_verdict_t));
		out->struct_size = size;
		out->choice = DLSCHED_GUARD_HEURISTIC;
		auto v = dlsched::parse_guard_verdict(text, name ? name : "verdict");
		if (!v.is_ok())
			return report(err, v.status());
		out->at = v->at;
		out->age = now - v->at;
		out->learned_jct = v->learned_jct;
		out->heuristic_jct = v->heuristic_jct;
		out->jobs = v->jobs;
		out->switches = v->switches;
		out->choice = v->choice == dlsched::GuardChoice::kLearned ? DLSCHED_GUARD_LEARNED
									  : DLSCHED_GUARD_HEURISTIC;
		const std::string stale = dlsched::guard_verdict_stale(v->at, now, interval);
		if (!stale.empty())
			return report(err, DLSCHED_EINVAL, stale);
		return ok(err);
	});
}

size_t dlsched_decisions_count(const dlsched_decisions_t* d)
{
	return d ? d->decisions.actions.size() : 0;
}

int dlsched_decisions_get(const dlsched_decisions_t* d, size_t i, dlsched_action_t* out, dlsched_error_t* err)
{
	return guarded(err, "dlsched_decisions_get", [&]() -> int {
		if (!d || !out)
			return report(err, DLSCHED_EINVAL, "dlsched_decisions_get: NULL argument");
		// A caller built against API version 1 or 2 gets the fields its struct has.
		const std::size_t size = out->struct_size;
		constexpr std::size_t kV1 = offsetof(dlsched_action_t, grace);
		constexpr std::size_t kV2 = offsetof(dlsched_action_t, admission);
		if (size < kV1)
			return report(err, DLSCHED_EINVAL,
				      "dlsched_decisions_get: struct_size " + std::to_string(size) +
					      " is smaller than API version 1's " + std::to_string(kV1));
		if (i >= d->decisions.actions.size())
			return report(err, DLSCHED_EINVAL,
				      "dlsched_decisions_get: index " + std::to_string(i) +
					      " out of range (" +
					      std::to_string(d->decisions.actions.size()) + " actions)");
		const dlsched::Action& a = d->decisions.actions[i];
		out->kind = static_cast<int>(a.kind);
		out->job_id = a.job;
		out->node_index = a.node;
		out->gpus = a.gpus;
		out->shares = d->shares[i].empty() ? nullptr : d->shares[i].data();
		out->share_count = d->shares[i].size();
		out->priority = a.priority;
		out->reason = a.reason.c_str();
		if (size < kV2)
			return ok(err);
		out->grace = a.grace;
		out->predicted_suspend = a.predicted_suspend;
		out->predicted_resume = a.predicted_resume;
		if (size < sizeof(dlsched_action_t))
			return ok(err);
		out->admission = static_cast<int>(a.admission);
		return ok(err);
	});
}

const uint32_t* dlsched_decisions_order(const dlsched_decisions_t* d, size_t* count)
{
	if (count)
		*count = d ? d->order.size() : 0;
	return d && !d->order.empty() ? d->order.data() : nullptr;
}

void dlsched_decisions_free(dlsched_decisions_t* d)
{
	delete d;
}

}  // extern "C"

int dlsched_replay(dlsched_scheduler_t* sched, const std::string& text, const std::string& source,
		   std::string& decisions, dlsched_error_t* err)
{
	return guarded(err, "dlsched_replay", [&]() -> int {
		if (!sched)
			return report(err, DLSCHED_EINVAL, "dlsched_replay: NULL scheduler");
		auto file = dlsched::json::Value::parse(text, source);
		if (!file.is_ok())
			return report(err, file.status());
		const dlsched::json::Value& f = file.value();
		const auto schema = f.is_object() ? f.get("schema").as_number() : std::nullopt;
		if (!schema || *schema != dlsched::capi::kDumpSchema)
			return report(err, DLSCHED_EPARSE,
				      source + ": not a DumpViews= file of schema " +
					      std::to_string(dlsched::capi::kDumpSchema) +
					      " (no \"schema\": 1)");
		dlsched::capi::OwnedView view;
		if (dlsched::Status st = dlsched::capi::parse_view(f.get("view"), source, view); !st.is_ok())
			return report(err, st);
		const dlsched::json::Value prepared = f.get("prepared");
		if (!prepared.is_valid() || !prepared.is_array())
			return report(err, DLSCHED_EPARSE, source + ": prepared: missing or not an array");
		// The policy that decided the recorded cycle: the guard's choice then; a recording without
		// one was made before the guard, when the learned policy decided every cycle.
		const bool guard_learned = sched->guard_learned;
		const auto recorded = f.get("guard_choice").as_string();
		sched->guard_learned = !recorded || *recorded != "heuristic";
		// The recording's QuotaFile= quotas replace the replaying scheduler's, for this cycle.
		std::vector<dlsched::AccountQuota> quota_file;
		const dlsched::json::Value quotas = f.get("quota_file");
		for (std::size_t i = 0; quotas.is_valid() && quotas.is_array() && i < quotas.size(); ++i) {
			const auto account = quotas.at(i).get("account").as_string();
			const auto gpus = quotas.at(i).get("gpus").as_number();
			if (!account || !gpus || !std::isfinite(*gpus) || *gpus < 0)
				return report(err, DLSCHED_EPARSE,
					      source + ": quota_file[" + std::to_string(i) +
						      "]: needs \"account\" (a string) and \"gpus\" (>= 0)");
			quota_file.push_back({*account, *gpus});
		}
		const bool recorded_quotas = quotas.is_valid() && quotas.is_array();
		const bool quota_file_set = sched->quota_file_set;
		if (recorded_quotas) {
			std::swap(quota_file, sched->quota_file);
			sched->quota_file_set = true;
		}
		dlsched_decisions_t* d = nullptr;
		sched->replay = &prepared;
		const int rc = dlsched_scheduler_decide(sched, &view.view, &d, err);
		sched->replay = nullptr;
		sched->guard_learned = guard_learned;
		if (recorded_quotas) {
			std::swap(quota_file, sched->quota_file);
			sched->quota_file_set = quota_file_set;
		}
		if (rc != DLSCHED_OK)
			return rc;
		std::unique_ptr<dlsched_decisions_t, void (*)(dlsched_decisions_t*)> owned(
			d, dlsched_decisions_free);
		decisions = dlsched::capi::decisions_json(d).dump(1, true);
		return ok(err);
	});
}
