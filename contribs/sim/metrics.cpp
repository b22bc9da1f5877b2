#include "metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>

#include "policy/free_map.h"

namespace dlsched::sim {

double percentile(std::vector<double> v, double p)
{
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	std::size_t rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
	rank = std::min(std::max<std::size_t>(rank, 1), v.size());
	return v[rank - 1];
}

std::vector<double> bound_runtimes(const Workload& w, const ModelCatalog& models,
				   const std::vector<Node>& nodes)
{
	std::vector<Node> empty = nodes;
	for (std::size_t k = 0; k < empty.size(); ++k) {
		empty[k].index = static_cast<NodeIndex>(k);
		empty[k].gpus_free = empty[k].gpus_total;
	}
	ClusterView view;
	view.nodes = Span<const Node>(empty.data(), empty.size());
	view.models = &models;
	const FreeMap free(view);
	std::vector<double> out;
	out.reserve(w.jobs.size());
	for (std::size_t i = 0; i < w.jobs.size(); ++i) {
		const Job& j = w.jobs[i];
		// Eligible nodes by GPU type, and all of them together (a mixed placement).
		std::map<std::string, std::vector<int>> by_type;
		std::vector<int> all;
		std::vector<std::string> all_types;
		for (const Node& n : view.nodes) {
			if (!free.eligible(j, n.index))
				continue;
			by_type[n.gpu_type].push_back(n.gpus_total);
			all.push_back(n.gpus_total);
			all_types.push_back(n.gpu_type);
		}
		double best_rate = 0;
		// The fewest nodes (largest first) that hold the job at its requested size, and their speed.
		auto consider = [&](std::vector<int> sizes, const std::vector<std::string>& types) {
			std::sort(sizes.begin(), sizes.end(), std::greater<int>());
			int got = 0, used = 0;
			for (int g : sizes) {
				if (got >= j.gpus_requested)
					break;
				got += g;
				++used;
			}
			if (got >= j.gpus_requested)
				best_rate = std::max(
					best_rate,
					models.placed_speedup(j.model, j.gpus_requested, used, types));
		};
		for (const auto& [type, sizes] : by_type)
			consider(sizes, {type});
		consider(all, all_types);
		// A job no node set can hold keeps the trace's own runtime (such jobs are errors or dropped).
		out.push_back(best_rate > 0 ? j.epochs_total * j.epoch_time_1gpu / best_rate
					    : w.trace_runtime_s[i]);
	}
	return out;
}

RunMetrics compute_metrics(const std::string& policy, const SimResult& r, const Workload& w,
			   const std::vector<double>& bound_s)
{
	RunMetrics m;
	m.policy = policy;
	m.estimates = r.estimates;
	m.jobs = r.jobs.size();
	std::vector<double> jct, queue;
	double held = 0;
	std::size_t with_deadline = 0, met = 0;
	// A job the Admission policy cancelled (or held: the simulator has nobody to release it) never
	// ran: it misses its deadline and has no JCT.
	auto met_deadline = [](const JobOutcome& o) { return !o.cancelled && o.finish <= o.deadline + 1e-6; };
	for (const JobOutcome& o : r.jobs) {
		if (o.cancelled) {
			++m.cancelled;
		} else {
			jct.push_back(o.finish - o.submit);
			queue.push_back(o.first_start - o.submit);
		}
		held += o.gpu_seconds;
		m.preemptions += o.preemptions;
		m.resizes += o.resizes;
		if (o.deadline != kNoDeadline) {
			++with_deadline;
			if (met_deadline(o))
				++met;
		}
	}
	auto mean = [](const std::vector<double>& v) {
		return v.empty() ? 0.0
				 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
	};
	m.avg_jct_s = mean(jct);
	m.p50_jct_s = percentile(jct, 50);
	m.p95_jct_s = percentile(jct, 95);
	m.p99_jct_s = percentile(jct, 99);
	m.avg_queue_s = mean(queue);
	m.makespan_s = r.makespan;
	m.gpu_util = r.makespan > 0 && r.total_gpus > 0 ? held / (r.total_gpus * r.makespan) : 0;
	if (with_deadline)
		m.deadline_met_rate = static_cast<double>(met) / static_cast<double>(with_deadline);
	m.lost_gpu_s = r.lost_gpu_s;
	m.decision_ms_p50 = percentile(r.decision_ms, 50);
	m.decision_ms_p99 = percentile(r.decision_ms, 99);
	// The bound over the jobs that ran (dropped ones excluded), by job id.
	double bound = 0;
	for (const JobOutcome& o : r.jobs)
		bound += bound_s.empty() ? w.trace_runtime_s[o.id - 1] : bound_s[o.id - 1];
	m.bound_avg_jct_s = r.jobs.empty() ? 0 : bound / static_cast<double>(r.jobs.size());
	m.cycles = r.cycles;
	m.dropped = r.dropped;
	m.loaning = r.inference_gpus > 0 && r.inference_gpu_s + r.loaned_gpu_s + r.reclaims > 0;
	m.loaned_gpu_s = r.loaned_gpu_s;
	m.reclaims = r.reclaims;
	m.late_reclaims = r.late_reclaims;
	m.reclaim_preemptions = r.reclaim_preemptions;
	m.inference_shortfall_gpu_s = r.inference_shortfall_gpu_s;
	m.cluster_gpu_util = r.makespan > 0 && r.total_gpus > 0
				     ? (held + r.inference_gpu_s) / (r.total_gpus * r.makespan)
				     : 0;
	m.window_gpu_util =
		r.window_s > 0 && r.total_gpus > 0 ? r.window_gpu_s / (r.total_gpus * r.window_s) : 0;
	m.guard = r.guard;
	if (r.guard) {
		m.guard_evaluations = static_cast<long>(r.guard_log.size());
		m.guard_switches = r.guard_switches;
		m.guard_learned_fraction = r.cycles > 0 ? static_cast<double>(r.guard_learned_cycles) /
								  static_cast<double>(r.cycles)
							: 0;
		m.guard_eval_ms_p50 = percentile(r.guard_eval_ms, 50);
		m.guard_eval_ms_max = percentile(r.guard_eval_ms, 100);
	}
	// Per QoS: the same figures over its jobs.
	std::map<std::string, std::vector<const JobOutcome*>> groups;
	for (const JobOutcome& o : r.jobs)
		groups[o.qos.empty() ? "normal" : o.qos].push_back(&o);
	for (const auto& [qos, outs] : groups) {
		QosMetrics q;
		std::vector<double> qjct, qqueue;
		std::size_t qdl = 0, qmet = 0;
		for (const JobOutcome* o : outs) {
			if (!o->cancelled) {
				qjct.push_back(o->finish - o->submit);
				qqueue.push_back(o->first_start - o->submit);
			}
			if (o->deadline != kNoDeadline) {
				++qdl;
				qmet += met_deadline(*o) ? 1 : 0;
			}
		}
		q.jobs = outs.size();
		q.avg_jct_s = mean(qjct);
		q.avg_queue_s = mean(qqueue);
		q.p95_queue_s = percentile(qqueue, 95);
		if (qdl)
			q.deadline_met_rate = static_cast<double>(qmet) / static_cast<double>(qdl);
		m.by_qos[qos] = q;
	}
	return m;
}

json::Value to_json(const RunMetrics& m)
{
	using json::Value;
	Value o = Value::object();
	o.set("policy", Value::string(m.policy));
	o.set("fallback", m.fallback.empty() ? Value::null() : Value::string(m.fallback));
	o.set("estimates", Value::string(estimates_name(m.estimates)));
	o.set("jobs", Value::integer(static_cast<std::int64_t>(m.jobs)));
	o.set("avg_jct_s", Value::number(m.avg_jct_s));
	o.set("p50_jct_s", Value::number(m.p50_jct_s));
	o.set("p95_jct_s", Value::number(m.p95_jct_s));
	o.set("p99_jct_s", Value::number(m.p99_jct_s));
	o.set("avg_queue_s", Value::number(m.avg_queue_s));
	o.set("makespan_s", Value::number(m.makespan_s));
	o.set("gpu_util", Value::number(m.gpu_util));
	o.set("deadline_met_rate", m.deadline_met_rate ? Value::number(*m.deadline_met_rate) : Value::null());
	o.set("preemptions", Value::integer(m.preemptions));
	// doc/metrics.md: the same names as dlsched-report's (a preemption here is a checkpoint-and-requeue).
	o.set("requeues", Value::integer(m.preemptions));
	o.set("restarts", Value::integer(m.preemptions + m.resizes));
	o.set("lost_gpu_s", Value::number(m.lost_gpu_s));
	o.set("decision_ms_p50", Value::number(m.decision_ms_p50));
	o.set("decision_ms_p99", Value::number(m.decision_ms_p99));
	o.set("bound_avg_jct_s", Value::number(m.bound_avg_jct_s));
	o.set("resizes", Value::integer(m.resizes));
	o.set("cycles", Value::integer(static_cast<std::int64_t>(m.cycles)));
	o.set("cancelled", Value::integer(static_cast<std::int64_t>(m.cancelled)));
	o.set("loaned_gpu_s", Value::number(m.loaned_gpu_s));
	o.set("reclaims", Value::integer(m.reclaims));
	o.set("late_reclaims", Value::integer(m.late_reclaims));
	o.set("reclaim_preemptions", Value::integer(m.reclaim_preemptions));
	o.set("inference_shortfall_gpu_s", Value::number(m.inference_shortfall_gpu_s));
	o.set("cluster_gpu_util", Value::number(m.cluster_gpu_util));
	o.set("window_gpu_util", Value::number(m.window_gpu_util));
	if (m.learned ||
	    m.guard) {  // learned policies: with LearnedGuard=no, 0 switches and every cycle learned
		o.set("guard", Value::boolean(m.guard));
		o.set("guard_policy", m.guard ? Value::string(m.guard_policy) : Value::null());
		o.set("guard_evaluations", Value::integer(m.guard_evaluations));
		o.set("guard_switches", Value::integer(m.guard_switches));
		o.set("guard_learned_fraction", Value::number(m.guard_learned_fraction));
		o.set("guard_eval_ms_p50", Value::number(m.guard_eval_ms_p50));
		o.set("guard_eval_ms_max", Value::number(m.guard_eval_ms_max));
	}
	Value by_qos = Value::object();
	for (const auto& [qos, q] : m.by_qos) {
		Value v = Value::object();
		v.set("jobs", Value::integer(static_cast<std::int64_t>(q.jobs)));
		v.set("avg_jct_s", Value::number(q.avg_jct_s));
		v.set("avg_queue_s", Value::number(q.avg_queue_s));
		v.set("p95_queue_s", Value::number(q.p95_queue_s));
		v.set("deadline_met_rate",
		      q.deadline_met_rate ? Value::number(*q.deadline_met_rate) : Value::null());
		by_qos.set(qos, v);
	}
	o.set("by_qos", by_qos);
	if (m.fairness) {
		Value by_account = Value::object();
		for (const auto& [name, a] : m.fairness->by_account) {
			Value v = Value::object();
			v.set("jobs", Value::integer(static_cast<std::int64_t>(a.jobs)));
			v.set("avg_jct_s", Value::number(a.avg_jct_s));
			v.set("avg_queue_s", Value::number(a.avg_queue_s));
			v.set("gpu_s", Value::number(a.gpu_s));
			v.set("quota_gpus", Value::number(a.quota_gpus));
			v.set("borrowed_gpu_s", Value::number(a.borrowed_gpu_s));
			v.set("below_quota_gpu_s", Value::number(a.below_quota_gpu_s));
			v.set("demanded_quota_gpu_s", Value::number(a.demanded_quota_gpu_s));
			v.set("rho", Value::number(a.rho));
			by_account.set(name, v);
		}
		o.set("by_account", by_account);
		Value f = Value::object();
		f.set("below_quota_gpu_s", Value::number(m.fairness->below_quota_gpu_s));
		f.set("demanded_quota_gpu_s", Value::number(m.fairness->demanded_quota_gpu_s));
		f.set("jain_index", Value::number(m.fairness->jain_index));
		f.set("max_rho", Value::number(m.fairness->max_rho));
		f.set("reclaims", Value::integer(m.fairness->reclaims));
		f.set("reclaimed_gpus", Value::number(m.fairness->reclaimed_gpus));
		o.set("fairness", f);
	}
	return o;
}

std::string human_duration(double s)
{
	char buf[32];
	if (s < 90)
		std::snprintf(buf, sizeof buf, "%.0fs", s);
	else if (s < 5400)
		std::snprintf(buf, sizeof buf, "%.1fm", s / 60);
	else if (s < 172800)
		std::snprintf(buf, sizeof buf, "%.2fh", s / 3600);
	else
		std::snprintf(buf, sizeof buf, "%.1fd", s / 86400);
	return buf;
}

std::string format_table(const std::vector<RunMetrics>& runs)
{
	std::string out;
	char line[512];
	std::snprintf(line, sizeof line, "%-16s %6s %8s %8s %8s %8s %8s %8s %5s %6s %7s %8s %8s %6s %8s\n",
		      "policy", "jobs", "avg JCT", "p50", "p95", "p99", "queue", "makespan", "util", "dl met",
		      "preempt", "lost GPUh", "slowdown", "vs 1st", "cycle p99");
	out += line;
	const double first = runs.empty() ? 0 : runs.front().avg_jct_s;
	for (const RunMetrics& m : runs) {
		char dl[16], dec[16];
		if (m.deadline_met_rate)
			std::snprintf(dl, sizeof dl, "%.1f%%", 100 * *m.deadline_met_rate);
		else
			std::snprintf(dl, sizeof dl, "-");
		std::snprintf(dec, sizeof dec, "%.2fms", m.decision_ms_p99);
		const std::string label =
			m.fallback.empty() ? m.policy : m.policy + " (fallback: " + m.fallback + ")";
		std::snprintf(line, sizeof line,
			      "%-16s %6zu %8s %8s %8s %8s %8s %8s %4.0f%% %6s %7ld %9.1f %7.2fx %5.2fx %8s\n",
			      label.c_str(), m.jobs, human_duration(m.avg_jct_s).c_str(),
			      human_duration(m.p50_jct_s).c_str(), human_duration(m.p95_jct_s).c_str(),
			      human_duration(m.p99_jct_s).c_str(), human_duration(m.avg_queue_s).c_str(),
			      human_duration(m.makespan_s).c_str(), 100 * m.gpu_util, dl, m.preemptions,
			      m.lost_gpu_s / 3600,
			      m.bound_avg_jct_s > 0 ? m.avg_jct_s / m.bound_avg_jct_s : 0,
			      first > 0 ? m.avg_jct_s / first : 0, dec);
		out += line;
	}
	if (!runs.empty())
		out += "bound (each job alone at its requested GPUs): avg JCT " +
		       human_duration(runs.front().bound_avg_jct_s) +
		       "; slowdown = avg JCT / bound; vs 1st = avg JCT / " + runs.front().policy +
		       "'s (below 1.00x: better)\n"
		       "columns: JCT = completion - submission (trace time); queue = average wait before the "
		       "first start; "
		       "util = GPU time held / (GPUs x makespan);\n"
		       "  dl met = deadlines met; preempt = checkpoint-and-requeues; lost GPUh = GPU-hours "
		       "of restart costs and "
		       "work redone;\n  cycle p99 = the slowest 1% of scheduling "
		       "decisions (wall time of one decide())\n";
	// The learned policies' guards (LearnedGuard=).
	for (const RunMetrics& m : runs)
		if (m.guard) {
			std::snprintf(line, sizeof line,
				      "guard of %s: %ld evaluation(s) against %s, %ld switch(es), learned "
				      "policy decided %.0f%% of "
				      "cycles; an evaluation took %.0f ms (p50), %.0f ms (max), outside the "
				      "decisions\n",
				      m.policy.c_str(), m.guard_evaluations, m.guard_policy.c_str(),
				      m.guard_switches, 100 * m.guard_learned_fraction, m.guard_eval_ms_p50,
				      m.guard_eval_ms_max);
			out += line;
		}
	// What the policies saw of the jobs' lengths (dlsched-sim: one --estimates for all runs).
	bool mixed = false;
	for (const RunMetrics& m : runs)
		mixed = mixed || m.estimates != runs.front().estimates;
	if (!runs.empty() && !mixed)
		out += std::string("estimates: ") + estimates_name(runs.front().estimates) +
		       (runs.front().estimates == Estimates::kPredicted
				? " (policies saw predicted epoch times: their own timed epochs, else "
				  "same-model history, "
				  "else the user's word)\n"
				: " (policies saw each job's true epoch time)\n");
	else if (mixed)
		for (const RunMetrics& m : runs)
			out += "estimates of " + m.policy + ": " + estimates_name(m.estimates) + "\n";
	// Capacity loaning, when a demand series was given.
	bool loaning = false;
	for (const RunMetrics& m : runs)
		loaning = loaning || m.loaning;
	if (loaning) {
		std::snprintf(line, sizeof line, "%-16s %10s %8s %6s %8s %12s %8s %9s %9s\n", "policy",
			      "loaned GPUh", "reclaims", "late", "preempt", "shortfall GPUh", "resizes",
			      "all util", "arrivals");
		out += line;
		for (const RunMetrics& m : runs) {
			std::snprintf(line, sizeof line,
				      "%-16s %10.1f %8ld %6ld %8ld %14.2f %8ld %8.0f%% %8.0f%%\n",
				      m.policy.c_str(), m.loaned_gpu_s / 3600, m.reclaims, m.late_reclaims,
				      m.reclaim_preemptions, m.inference_shortfall_gpu_s / 3600, m.resizes,
				      100 * m.cluster_gpu_util, 100 * m.window_gpu_util);
			out += line;
		}
		out += "loaning: loaned GPUh = GPU-hours training held on inference nodes; reclaims = nodes "
		       "taken back\n"
		       "  (late: not free within ReclaimTimeout=); preempt = jobs requeued to free them; "
		       "shortfall GPUh = "
		       "GPU-hours inference needed and lacked beyond the timeout;\n"
		       "  all util = training and inference GPU "
		       "time / all GPUs; arrivals = the same over the arrival window\n";
	}
	// Per QoS, when the jobs have more than one.
	if (!runs.empty() && runs.front().by_qos.size() > 1) {
		std::snprintf(line, sizeof line, "%-16s %-10s %6s %8s %8s %8s %6s\n", "policy", "qos", "jobs",
			      "avg JCT", "queue", "p95 q", "dl met");
		out += line;
		for (const RunMetrics& m : runs)
			for (const auto& [qos, q] : m.by_qos) {
				char dl[16];
				if (q.deadline_met_rate)
					std::snprintf(dl, sizeof dl, "%.1f%%", 100 * *q.deadline_met_rate);
				else
					std::snprintf(dl, sizeof dl, "-");
				std::snprintf(line, sizeof line, "%-16s %-10s %6zu %8s %8s %8s %6s\n",
					      m.policy.c_str(), qos.c_str(), q.jobs,
					      human_duration(q.avg_jct_s).c_str(),
					      human_duration(q.avg_queue_s).c_str(),
					      human_duration(q.p95_queue_s).c_str(), dl);
				out += line;
			}
	}
	return out;
}

}  // namespace dlsched::sim
