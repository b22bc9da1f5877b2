// `preempt-qos`: what a Slurm site runs today, as the baseline for `overhead`: PreemptType=preempt/qos
// with PreemptMode=REQUEUE and GraceTime=0, select/cons_tres choosing the victims (Slurm 22.05:
// src/slurmctld/preempt.c, src/plugins/preempt/qos/preempt_qos.c, src/plugins/select/cons_common/
// job_test.c; doc/html/preempt.shtml). Written from that behaviour, not from Slurm's code:
//  - Candidates (running jobs of lower QoS) are sorted by QoS priority, lowest first, then by the
//    number of nodes they span, fewest first; ties keep Slurm's job-list order (job id).
//  - They are taken out one at a time, in that order, until the waiting job fits; the victims are
//    those taken out that share a node with the nodes it is then placed on (jobs taken out on other
//    nodes are spared, needless ones on its nodes are not).
//  - Then the list is reordered - the job that made it fit first, then the others taken out by how
//    many nodes they share with that placement - and the search is run again
//    (SchedulerParameters=preempt_reorder_count, default 1: at most two reorderings).
//  - Victims get SIGTERM and, KillWait seconds later, SIGKILL: they have KillWait to checkpoint.
// Departures: Slurm preempts for one waiting job per partition per main-scheduler pass (backfill may
// do several); here every waiting high-class job is served each cycle, as backfill can, which
// favours this baseline. PreemptExemptTime is not modelled (Slurm's default is none).
#include <algorithm>
#include <set>

#include "policy/builtin_policies.h"

namespace dlsched {

namespace {

int shared_nodes(const Job& j, const std::set<NodeIndex>& nodes)
{
	int n = 0;
	for (const NodeShare& s : j.placement)
		n += nodes.count(s.node) ? 1 : 0;
	return n;
}

}  // namespace

VictimChoice QosPreemption::select_victims(const PreemptionInput& in) const
{
	const ClusterView& view = in.view;
	const Job& w = in.waiting;
	// Lowest class first, then fewest nodes, then job id.
	std::vector<std::size_t> idx(in.candidates.size());
	for (std::size_t i = 0; i < idx.size(); ++i)
		idx[i] = i;
	std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
		const Job& ja = *in.candidates[a];
		const Job& jb = *in.candidates[b];
		if (in.classes[a] != in.classes[b])
			return in.classes[a] < in.classes[b];
		if (ja.placement.size() != jb.placement.size())
			return ja.placement.size() < jb.placement.size();
		return ja.id < jb.id;
	});
	std::vector<const Job*> list;
	for (std::size_t i : idx)
		list.push_back(in.candidates[i]);
	VictimChoice out;
	for (int pass = 0;; ++pass) {
		FreeMap trial = in.free;
		std::size_t made_fit = list.size();
		std::vector<NodeShare> where;
		for (std::size_t i = 0; i < list.size(); ++i) {
			trial.release(list[i]->placement);
			if (in.placement.place(view, w, w.gpus_requested, trial, where)) {
				made_fit = i;
				break;
			}
		}
		if (made_fit == list.size())
			return {};  // does not fit even with every candidate gone
		std::set<NodeIndex> chosen;
		for (const NodeShare& s : where)
			chosen.insert(s.node);
		if (pass >= reorder_count_ + 1 || list.size() <= static_cast<std::size_t>(pass) + 1) {
			for (std::size_t i = 0; i <= made_fit; ++i)
				if (shared_nodes(*list[i], chosen) > 0)
					out.victims.push_back({list[i], kill_wait_});
			return out;
		}
		// Reorder: the job that made it fit first, then those before it by nodes shared with the
		// placement, then the rest as they were.
		const Job* key = list[made_fit];
		std::vector<const Job*> before(list.begin(),
					       list.begin() + static_cast<std::ptrdiff_t>(made_fit));
		std::stable_sort(before.begin(), before.end(), [&](const Job* a, const Job* b) {
			return shared_nodes(*a, chosen) > shared_nodes(*b, chosen);
		});
		std::vector<const Job*> next{key};
		next.insert(next.end(), before.begin(), before.end());
		next.insert(next.end(), list.begin() + static_cast<std::ptrdiff_t>(made_fit) + 1, list.end());
		list = std::move(next);
	}
}

}  // namespace dlsched
