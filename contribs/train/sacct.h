// A real cluster's history as supervised examples: the jobs sacct recorded (submit, start, end, GPUs,
// and the model, epochs and epoch time dlsched-replay and spank/dlsched put in the job's comment),
// turned into one decision round per moment jobs started - who was waiting and running, and whom the
// scheduler started (DL2's warm-up from an existing scheduler's decisions, here the site's own).
#ifndef DLSCHED_TRAIN_SACCT_H
#define DLSCHED_TRAIN_SACCT_H

#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "model/model_catalog.h"
#include "model/node.h"
#include "model/policy_step.h"
#include "policy/guard.h"
#include "util/status.h"

namespace dlsched::train {

// Reads `sacct -X -P -o JobID,Submit,Start,End,AllocTRES,ReqTRES,Comment` output (a header line
// first; other columns are ignored, any order) and returns the decision rounds on `nodes`. Errors
// name the source and line. Jobs that never started, or have no GPUs, are skipped. `time_scale`: the
// history's clock ran this many times faster than the model's (ModelTimeScale=; an emulated cluster's
// replay speedup), and the rounds are encoded in the model's hours.
Result<std::vector<PolicyStep>> sacct_rounds(std::istream& in, const std::string& source,
					     const ModelCatalog& models, const std::vector<Node>& nodes,
					     std::size_t window, double time_scale = 1.0);

// The same records as a workload in dlsched's native CSV (doc/workload-format.md), written to `out`:
// each job at its GPUs for the time it ran (End - Start, x time_scale), its model= and epochs= words
// when its comment has them (else a model by its GPU-hours, as for Philly traces). Returns the jobs
// written.
Result<std::size_t> sacct_workload(std::istream& in, const std::string& source, const ModelCatalog& models,
				   std::ostream& out, double time_scale = 1.0);

// The same records as the guard knows them (dlsched-guard): every job with GPUs, submit times in
// seconds since the epoch (UTC); a job that ended finished, measured at the length it ran; one still
// pending or running (Start or End Unknown) at its comment's epoch time, else unknown (0: the
// snapshot takes its time limit or a default). Errors as sacct_rounds.
Result<std::vector<GuardKnown>> sacct_guard_known(std::istream& in, const std::string& source,
						  const ModelCatalog& models);

}  // namespace dlsched::train

#endif
