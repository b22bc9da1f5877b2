// Loaning: which inference nodes to borrow for training and which to give back (Aryl).
#ifndef DLSCHED_POLICY_LOANING_H
#define DLSCHED_POLICY_LOANING_H

#include <vector>

#include "model/cluster_view.h"
#include "model/decisions.h"

namespace dlsched {

class Loaning {
public:
	virtual ~Loaning() = default;
	virtual const char* name() const = 0;
	// Appends kLoan / kReclaim actions (and the kRequeue actions a reclaim needs) to `out`.
	virtual void plan(const ClusterView& view, std::vector<Action>& out) const = 0;
};

}  // namespace dlsched

#endif
