// What a collector posts is a claim about a job; this checks it against what Slurm knows of the job
// (squeue or sacct, asked by dlsched-ingestd) and against what the profile DB already holds, before
// the batch is written. Pure C++: the service does the asking and the HTTP.
//
// The rules (dlsched-ingestd(8), "What a batch may claim"), with `skew_s` of clock tolerance:
//  - no time in the batch is in the future (after now + skew);
//  - no time is before the job started (Slurm's start - skew), and, when the job is no longer
//    running, none is after it ended (Slurm's end + skew; for a requeued, pending job its last
//    run's end, once past): a checkpoint or an epoch counts only while the job ran;
//  - the reporting node is one the job holds (Slurm's node list), while Slurm says which, and no
//    record claims more GPUs than Slurm allocated it;
//  - progress is no faster than plausible: epochs of one job do not overlap (each one starts after
//    the one before it ended), none takes under a tenth of the GPU-seconds of the job's first
//    steady epochs recorded (their median, once it has 2 of them; at most the first 5 count, so
//    that epochs accepted later never lower the bound; each run's first epoch is a warm-up or part
//    of one: neither counted nor checked),
//    epoch numbers do not jump (the one before is reported, or the run resumed from a checkpoint
//    load past it), a load resumes from at most one epoch past what the job has recorded, and a
//    save holds at most one epoch more than the job has reported (recorded or in the batch).
#ifndef DLSCHED_PROFILEDB_CLAIMS_H
#define DLSCHED_PROFILEDB_CLAIMS_H

#include <cstdint>
#include <string>
#include <vector>

#include "profiledb/profile_db.h"
#include "profiledb/records.h"
#include "util/status.h"

namespace dlsched::db {

// A job as Slurm describes it (times in Unix seconds; 0: Slurm gave none).
struct SlurmJob {
	std::uint32_t uid = 0;
	double submit_s = 0, start_s = 0, end_s = 0;
	std::string state;               // squeue/sacct's, e.g. "RUNNING", "PENDING", "COMPLETED"
	std::vector<std::string> nodes;  // the node list expanded; empty: none or unknown
	int gpus = -1;                   // GPUs allocated (its TRES' gres/gpu, 0 without); -1: unknown

	// Running, or still holding its nodes (suspended, completing, being signalled).
	bool holds_nodes() const;
};

constexpr double kClockSkewS = 60;             // tolerance between the nodes' and the service's clocks
constexpr double kFastestEpochFraction = 0.1;  // of the job's reference: the median, in GPU-seconds,
constexpr std::size_t kMinSteadyEpochs = 2;    // of its first steady epochs recorded, once it has
constexpr std::size_t kReferenceEpochs = 5;    // this many (at most the first 5 count)

// Refuses times after now + skew (used also where Slurm cannot be asked).
Status check_not_future(const Batch& b, double now_s, double skew_s = kClockSkewS);

// What other users' jobs of the same model say of its speed: the median over those jobs (at most 3
// per user, none of `user`'s) of each one's first steady epochs in GPU-seconds (as the job's own
// reference); 0 when no other user's job of the model has 2 steady epochs. A job too young for a
// reference of its own is held to a twentieth of it: an epoch may be that much quicker on faster
// GPUs, not more.
constexpr double kFastestPeerFraction = 0.05;
double peer_reference_gpu_s(const std::vector<JobProfile>& history, const std::string& user);

// The reference a job too young for its own is held to: other users' jobs of its model
// (peer_reference_gpu_s()), else the model's profile (`profile_epoch_gpu_s`: what the site's model
// profiles say one epoch takes on one reference GPU; 0: not a profiled model). *what names it for
// the message. 0 when neither: a model nobody else ran and no profile knows has no such bound
// (dlsched-ingestd(8), BUGS).
double model_reference_gpu_s(const std::vector<JobProfile>& history, const std::string& user,
			     double profile_epoch_gpu_s, std::string* what);

// The rules above. `recorded`: what the DB holds of the job already (its epochs and checkpoints;
// null when nothing). `peer_gpu_s`: model_reference_gpu_s() of its model (0: none), `peer_what` its
// name. The message names the record, as parse_batch's do.
Status check_claims(const Batch& b, const SlurmJob& job, const JobProfile* recorded, double now_s,
		    double skew_s = kClockSkewS, double peer_gpu_s = 0,
		    const std::string& peer_what = "other users' jobs of its model");

}  // namespace dlsched::db

#endif
