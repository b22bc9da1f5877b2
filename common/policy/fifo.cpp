// `fifo`: first come, first served by submit time (Slurm's sched/builtin with equal priorities; the
// FIFO baseline of Tiresias, Gu et al., NSDI'19, and Gandiva, Xiao et al., OSDI'18).
#include "policy/builtin_policies.h"

namespace dlsched {

void FifoOrdering::order(const ClusterView&, std::vector<const Job*>& jobs) const
{
	sort_by_key(jobs, [](const Job& j) { return j.submit_time; });
}

}  // namespace dlsched
