// `edf`: earliest deadline first; jobs without a deadline come after all others, first come first
// served among themselves.
#include "policy/builtin_policies.h"

namespace dlsched {

void EdfOrdering::order(const ClusterView&, std::vector<const Job*>& jobs) const
{
	sort_by_key(jobs, [](const Job& j) { return j.deadline; });  // kNoDeadline is +infinity
}

}  // namespace dlsched
