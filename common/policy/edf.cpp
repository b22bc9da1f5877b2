// `edf`: earliest deadline first (Liu and Layland, "Scheduling algorithms for multiprogramming in a
// hard-real-time environment", JACM 20(1), 1973); jobs without a deadline come after all others, first come
// first served among themselves.
#include "policy/builtin_policies.h"

namespace dlsched {

void EdfOrdering::order(const ClusterView&, std::vector<const Job*>& jobs) const
{
	sort_by_key(jobs, [](const Job& j) { return j.deadline; });  // kNoDeadline is +infinity
}

}  // namespace dlsched
