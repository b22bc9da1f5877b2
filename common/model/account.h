// Account: a team that shares the cluster (Slurm: an association's account; dlsched-sim: Philly's
// virtual cluster, or the native format's user column). What FairnessPolicy= reads of it.
#ifndef DLSCHED_MODEL_ACCOUNT_H
#define DLSCHED_MODEL_ACCOUNT_H

#include <string>

#include "model/types.h"

namespace dlsched {

struct Account {
	std::string name;
	// GPUs guaranteed to the account while it has work (FairnessPolicy=quota); 0: none, it only
	// borrows. Hosts derive it from the shares normalised over the training GPUs, or a quota file.
	double quota_gpus = 0;
	// Raw fair-share shares (sacctmgr Fairshare=); normalised over the view's accounts.
	double shares = 1;
	// GPU-seconds used, decayed with PriorityDecayHalfLife= (Slurm: the association's usage_raw).
	double usage_gpu_s = 0;
};

}  // namespace dlsched

#endif
