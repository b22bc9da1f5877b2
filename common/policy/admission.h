// Admission: whether a pending job may be scheduled now, and at what size (deadline feasibility and
// GPU-count autoscaling live here).
#ifndef DLSCHED_POLICY_ADMISSION_H
#define DLSCHED_POLICY_ADMISSION_H

#include <string>

#include "model/cluster_view.h"

namespace dlsched {

struct AdmissionVerdict {
	bool admit = true;
	std::string reason;  // why not, for logs
};

class Admission {
public:
	virtual ~Admission() = default;
	virtual const char* name() const = 0;
	virtual AdmissionVerdict admit(const ClusterView& view, const Job& job) const = 0;
};

}  // namespace dlsched

#endif
