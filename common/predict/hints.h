// How far sched/dlsched trusts what a user says about a job's length. Runtime hints (--dl-epochs,
// the comment's epochs= and epoch_time_1gpu= words) come from the job's owner and decide where the
// job goes in the queue, and, under a preemptive policy, which running jobs make room for it. A
// claim that costs nothing would let anyone jump the queue by calling a long job tiny. So a claim
// counts only within what Slurm enforces:
//  - never longer than the job's time limit (Slurm ends it there anyway) at its largest size (an
//    elastic job may be scaled up to finish within it);
//  - never shorter than its time limit / HintTrustFactor: a user who wants to look shorter must ask
//    for a shorter time limit, which Slurm enforces; a job without a time limit gets no credit for
//    claims shorter than HintFloorNoTimeLimit;
//  - once the job has run longer than its claim (by a quarter, plus a minute), the claim is void:
//    it counts as long as its time limit, or, without one, twice what it has run so far.
// Measurements of the job itself (its epochs, through the profile DB) are not hints and are not
// bounded here. Pure functions: the C ABI applies them to every job a Slurm host passes in.
#ifndef DLSCHED_PREDICT_HINTS_H
#define DLSCHED_PREDICT_HINTS_H

#include "model/job.h"
#include "model/model_catalog.h"

namespace dlsched::predict {

// Relative spread of a runtime that rests on a model profile or a user's claim alone (no
// measurement of the job or its model on this cluster): the profiles are another cluster's
// measurements, and the claims are bounded (below), not checked. sched/dlsched (the C ABI) and
// dlsched-sim's predicted estimates both use it.
inline constexpr double kUnmeasuredRuntimeCv = 0.25;

struct HintLimits {
	double trust_factor = 10;        // HintTrustFactor
	double floor_no_limit_s = 3600;  // HintFloorNoTimeLimit
	int gpus_per_node = 8;           // packing assumed for the claimed runtime
};

// What bound_hints() did to a job, for logs and tests.
enum class HintVerdict { kKept, kCappedAtLimit, kRaisedToFloor, kVoid, kUnknown };
const char* hint_verdict_name(HintVerdict v);

// The runtime the job's hints claim at its requested GPUs (epochs x epoch time over the model's
// speedup); 0 when it has no epoch time.
double claimed_runtime(const Job& job, const ModelCatalog& models, int gpus_per_node);

// The 1-GPU epoch time that makes the job's epochs_total epochs at its requested GPUs (on the
// fewest nodes of gpus_per_node) last `runtime`: the inverse of claimed_runtime(). For a job that
// says nothing but its time limit, sched/dlsched and dlsched-sim's predicted estimates both assume,
// as Slurm's backfill does, that it runs all of it (an unknown model scales linearly). 0 when
// runtime or epochs_total is not positive.
double epoch_time_for_runtime(const Job& job, const ModelCatalog& models, int gpus_per_node, double runtime);

// Bounds job.epoch_time_1gpu (scaling it) so that the claimed runtime lies within the limits
// above, given job.time_limit and job.executed_s. epochs_total is kept: progress stays in epochs.
HintVerdict bound_hints(Job& job, const ModelCatalog& models, const HintLimits& limits);

}  // namespace dlsched::predict

#endif
