// What the controller knew, at a shadow evaluation, of the jobs dlsched-guard replays
// (dlsched-guard(1)): the jobs of the last GuardWindow= and the backlog at the window's start, each
// at the length sched/dlsched's view had for it - its measured run when it had ended, else the one
// evidence path of predict/evidence.h fed by the profile DB (ProfileDB=: its own epochs, its
// model's history), the user's claims bounded by its time limit, the time limit itself. Only what
// was recorded by the evaluation is read: a start, end or profile record after it is not there.
#ifndef DLSCHED_GUARD_KNOWN_H
#define DLSCHED_GUARD_KNOWN_H

#include <string>
#include <vector>

#include "contribs/train/sacct.h"
#include "model/model_catalog.h"
#include "policy/guard.h"
#include "predict/hints.h"
#include "predict/overhead.h"

namespace dlsched::guard {

struct KnownOptions {
	double now = 0;          // the evaluation (seconds since the epoch)
	double window = 86400;   // GuardWindow=
	std::string profile_db;  // ProfileDB=; "": lengths from claims and time limits only
	std::string cluster;     // the profile DB's cluster (slurm.conf's ClusterName)
	predict::HintLimits limits;
	predict::OverheadParams overhead;
};

// Where each job's length came from, for dlsched-guard's output and tests.
struct KnownSummary {
	std::size_t carried = 0;      // backlog at the window's start
	std::size_t from_db = 0;      // lengths from the profile DB (own epochs or model history)
	std::string profile_db_note;  // "" or why the profile DB was not read (as sched/dlsched logs it)
};

// `jobs` as sacct_guard_jobs() read them at `o.now`, as guard_snapshot() takes them: the finished
// ones measured, the others estimated; a job submitted before the window that was pending or running
// at its start carried with the epochs it had left then (its records before the window's start,
// else its time run at the length known now). Times stay absolute.
std::vector<GuardKnown> known_at(const std::vector<train::SacctGuardJob>& jobs, const ModelCatalog& models,
				 const KnownOptions& o, KnownSummary* summary = nullptr);

}  // namespace dlsched::guard

#endif
