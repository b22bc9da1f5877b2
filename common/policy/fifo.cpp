// `fifo`: first come, first served by submit time (Slurm's sched/builtin with equal priorities).
#include "policy/builtin_policies.h"

namespace dlsched {

void FifoOrdering::order(const ClusterView&, std::vector<const Job*>& jobs) const
{
	sort_by_key(jobs, [](const Job& j) { return j.submit_time; });
}

}  // namespace dlsched
