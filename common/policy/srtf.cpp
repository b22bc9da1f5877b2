// `srtf`: preemptive shortest remaining time first (SRPT: Schrage, "A proof of the optimality of the
// shortest remaining processing time discipline", Operations Research 16(3), 1968; the oracle
// SRTF baseline of Tiresias, Gu et al., NSDI'19), with the oracle remaining time (the simulator
// knows each job's true length; in Slurm it comes from the runtime predictors). A running job that
// no longer ranks within capacity is checkpointed and requeued.
#include "policy/builtin_policies.h"
#include "policy/estimates.h"

namespace dlsched {

// Remaining time at the size the job asked for, not the size it holds: ranking an elastic job by its
// current allocation feeds the allocation back into the ranking, and allocations then flip every
// cycle (thousands of preemptions). For rigid jobs both are the same.
void SrtfOrdering::order(const ClusterView& view, std::vector<const Job*>& jobs) const
{
	sort_by_key(jobs, [&](const Job& j) { return remaining_time(view, j, j.gpus_requested); });
}

}  // namespace dlsched
