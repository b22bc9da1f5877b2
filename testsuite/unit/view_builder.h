// A small world for policy tests: owns nodes, jobs and a hand-made model catalog, and renders
// decisions compactly ("start 2 [0:4]; requeue 1; prio 3=1").
#ifndef DLSCHED_TEST_VIEW_BUILDER_H
#define DLSCHED_TEST_VIEW_BUILDER_H

#include <check.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "policy/registry.h"
#include "policy/scheduler.h"

namespace dlsched::test {

struct World {
	std::vector<Node> nodes;
	std::deque<Job> jobs;  // stable addresses
	ModelCatalog models;
	Seconds now = 0;
	int linear = -1;  // speedup == GPUs
	int flat = -1;    // 1, 1.2 at 2 GPUs, 1.3 at 4

	explicit World(std::vector<int> gpus_per_node)
	{
		for (std::size_t i = 0; i < gpus_per_node.size(); ++i) {
			Node n;
			n.index = static_cast<NodeIndex>(i);
			n.name = "n" + std::to_string(i);
			n.gpus_total = n.gpus_free = gpus_per_node[i];
			n.partition = "train";
			nodes.push_back(n);
		}
		ModelProfile lin;
		lin.name = "linear";
		lin.points = {{1, 1, 1}, {2, 1, 2}, {4, 1, 4}, {8, 1, 8}};
		linear = models.add(lin);
		ModelProfile fl;
		fl.name = "flat";
		fl.points = {{1, 1, 1}, {2, 1, 1.2}, {4, 1, 1.3}};
		flat = models.add(fl);
	}
	// A rigid pending job of the linear model: `epochs` epochs of 60 s on one GPU.
	Job& pending(JobId id, Seconds submit, int gpus, double epochs = 10)
	{
		Job j;
		j.id = id;
		j.user = "alice";
		j.model = linear;
		j.submit_time = submit;
		j.gpus_requested = j.gpus_min = j.gpus_max = gpus;
		j.epochs_total = epochs;
		j.epoch_time_1gpu = 60;
		j.time_limit = 1e6;
		jobs.push_back(j);
		return jobs.back();
	}
	Job& running(JobId id, Seconds submit, std::vector<NodeShare> where, double epochs = 10)
	{
		int g = 0;
		for (const NodeShare& s : where)
			g += s.gpus;
		Job& j = pending(id, submit, g, epochs);
		j.state = JobState::kRunning;
		j.placement = where;
		j.gpus_allocated = g;
		j.start_time = submit;
		for (const NodeShare& s : where)
			nodes[s.node].gpus_free -= s.gpus;
		return j;
	}
	ClusterView view() const
	{
		ClusterView v;
		v.now = now;
		v.nodes = Span<const Node>(nodes.data(), nodes.size());
		v.models = &models;
		for (const Job& j : jobs)
			(j.running() ? v.running : v.pending).push_back(&j);
		std::sort(v.pending.begin(), v.pending.end(), [](const Job* a, const Job* b) {
			return a->submit_time != b->submit_time ? a->submit_time < b->submit_time
								: a->id < b->id;
		});
		return v;
	}
};

inline std::string render(const Decisions& d)
{
	std::string s;
	for (const Action& a : d.actions) {
		if (!s.empty())
			s += "; ";
		if (a.kind == ActionKind::kSetPriority) {
			s += "prio " + std::to_string(a.job) + "=" +
			     std::to_string(static_cast<int>(a.priority));
			continue;
		}
		s += std::string(action_kind_name(a.kind)) + " " + std::to_string(a.job);
		if (a.kind == ActionKind::kStart || a.kind == ActionKind::kResize) {
			s += " [";
			for (std::size_t i = 0; i < a.placement.size(); ++i)
				s += (i ? "," : "") + std::to_string(a.placement[i].node) + ":" +
				     std::to_string(a.placement[i].gpus);
			s += "]";
		}
	}
	return s;
}

// The scheduler of the named preset (and optional Key=Value overrides), with the builtin policies.
inline std::unique_ptr<Scheduler> make_scheduler(const std::string& preset,
						 std::vector<std::pair<std::string, std::string>> keys = {})
{
	Config c;
	ck_assert(c.set("Policy", preset, "test").is_ok());
	for (const auto& kv : keys)
		ck_assert_msg(c.set(kv.first, kv.second, "test").is_ok(), "set %s", kv.first.c_str());
	PolicyRegistry r;
	register_builtin_policies(r);
	auto s = Scheduler::create(c, r);
	ck_assert_msg(s.is_ok(), "%s", s.status().message().c_str());
	return std::move(s.value());
}

// Decides with the named preset (and optional Key=Value overrides) and compares the rendering.
inline void expect_decisions(const World& w, const std::string& preset, const char* want,
			     std::vector<std::pair<std::string, std::string>> keys = {})
{
	const std::string got = render(make_scheduler(preset, std::move(keys))->decide(w.view()));
	ck_assert_msg(got == want, "%s: got \"%s\", want \"%s\"", preset.c_str(), got.c_str(), want);
}

}  // namespace dlsched::test

#endif
