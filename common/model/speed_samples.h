// From measured epoch times to the speed observations a speed-aware placement learns from
// (ClusterView::observations; gp-placement, dual-agent's placement agent).
//
// dlsched-sim's engine feeds one observation per run and node: the model's per-GPU speed there
// relative to one reference GPU (ModelCatalog::kReferenceGpuType), which is the catalog's speed of
// the node's GPU type times the node's own (hidden) factor. A host that measures epoch times
// (Slurm: the profile DB's epochs with the node that reported them) feeds the same quantity:
//  - one sample per run and node: the run's steady epoch time (steady_epoch_seconds: the median of
//    its epochs but the first, which holds the warm-up, as predict/history.h counts them);
//  - the epoch time on one GPU of that node: times the model's measured speedup at the run's GPUs
//    (ModelCatalog::speedup), so that runs of any size compare;
//  - the scale: what one reference GPU takes for an epoch of the model is not known on a real
//    cluster (datasets differ from the profile's reference run, emulated clusters compress time).
//    It is taken from the cluster itself: each node's epoch time converted to the reference type
//    by the catalog's type speed, the median over its runs, then the median over the nodes that ran
//    the model. A node at that median is at its type's catalog speed; the others deviate by how
//    much faster or slower they ran - what gp-placement learns (y = log(actual / nominal) with
//    prior mean 0: the catalog is right until measured otherwise).
// So a model teaches something once it has run on two nodes or more; a model seen on one node
// only is left out (its one node would look exactly nominal, which nobody measured). Runs over
// several nodes are left out too: their epoch time is their slowest node's, and which one that
// was is not known.
#ifndef DLSCHED_MODEL_SPEED_SAMPLES_H
#define DLSCHED_MODEL_SPEED_SAMPLES_H

#include <cstddef>
#include <string>
#include <vector>

#include "model/cluster_view.h"
#include "model/model_catalog.h"
#include "model/node.h"
#include "util/span.h"

namespace dlsched {

// A host that reads its samples from the profile DB takes at most this many runs of one user on
// one node (the most recent): one user's runs, whatever their epochs claim, cannot make a node's
// median (speed_observations) on their own.
constexpr std::size_t kSpeedRunsPerUserNode = 3;

// One run's steady epochs on one node, as measured.
struct EpochSample {
	NodeIndex node = 0;
	std::string model;   // the job's model ("" or a name the catalog lacks: unknown, scaled linearly)
	int gpus = 1;        // GPUs the run held
	int nodes = 1;       // nodes it spanned
	double epoch_s = 0;  // its steady epoch time (steady_epoch_seconds)
	Seconds at = 0;      // when its latest epoch ended
};

// The steady epoch time of a run from its epochs' lengths in epoch order: the median of all but the
// first (an even count: the mean of the middle two); 0 when there is no steady epoch (one epoch or
// none), or a length is not a positive finite number.
double steady_epoch_seconds(const std::vector<double>& epoch_seconds);

// The samples as speed observations, oldest first (by time, then node, then model name): per-GPU
// speed relative to one reference GPU, scaled per model by the median node (see above). Samples on
// a node outside `nodes`, of a run over several nodes, of a model no second node ran, or without a
// positive epoch time or GPU count give none.
std::vector<SpeedObservation> speed_observations(const std::vector<EpochSample>& samples,
						 Span<const Node> nodes, const ModelCatalog& models);

}  // namespace dlsched

#endif
