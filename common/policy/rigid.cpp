// `rigid` / `rigid-strict`: every job at the GPUs it asked for, in the ordering's order. `rigid-strict`
// stops at the first job that does not fit (head-of-line blocking, as Slurm's sched/builtin); `rigid`
// skips it and tries the next.
#include "policy/builtin_policies.h"

namespace dlsched {

void RigidAllocation::allocate(const AllocationInput& in, Plan& plan) const
{
	FreeMap free = in.free;
	if (!in.reconsider_running)
		keep_running(in.view, plan);
	greedy_fill(in, free, strict_, plan);
}

}  // namespace dlsched
