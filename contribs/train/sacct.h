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

// One job of sacct output as dlsched-guard reads it at `now`: submit time, GPUs, user, time limit
// (the Timelimit column when there is one) and the comment's words, as claims (model, epochs,
// epoch_time_1gpu in job.epoch_time_1gpu: 0 when it gave none). A start or end after `now` is not
// there yet (-1): what was recorded later is never read.
struct SacctGuardJob {
	Job job;
	double start = -1, end = -1;  // seconds since the epoch (UTC); -1: not by `now`
	bool epochs_given = false;    // the comment's epochs=
};

// Every job with GPUs submitted by `now` (sacct -X -P -o JobID,Submit,Start,End,AllocTRES,ReqTRES,
// Comment,User[,Timelimit]), pending, running or ended. Errors as sacct_rounds.
Result<std::vector<SacctGuardJob>> sacct_guard_jobs(std::istream& in, const std::string& source,
						    const ModelCatalog& models, double now);

// A Timelimit cell of sacct ("1-02:03:04", "02:03:04", "30:00", "45") in seconds; kNoTimeLimit for
// "UNLIMITED", "Partition_Limit", "" or anything else.
double sacct_time_limit(const std::string& cell);

}  // namespace dlsched::train

#endif
