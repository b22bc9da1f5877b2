// Admission: whether a pending job may be scheduled now, and at what size (deadline feasibility and
// GPU-count autoscaling live here).
#ifndef DLSCHED_POLICY_ADMISSION_H
#define DLSCHED_POLICY_ADMISSION_H

#include <string>

#include "model/cluster_view.h"

namespace dlsched {

struct AdmissionVerdict {
	bool admit = true;   // false: not scheduled this cycle (stays pending, behind every admitted job)
	std::string reason;  // why not, for logs and the user ("deadline infeasible: needs ...")
	bool best_effort =
		false;        // admitted, but behind every other admitted job (a deadline it cannot meet)
	bool hold = false;    // not admitted, and the host should hold it until someone releases it
	bool cancel = false;  // not admitted, and the host should end it (Slurm's own --deadline)
};

class Admission {
public:
	virtual ~Admission() = default;
	virtual const char* name() const = 0;
	virtual AdmissionVerdict admit(const ClusterView& view, const Job& job) const = 0;
};

}  // namespace dlsched

#endif
