// Who owns a job and what Slurm knows of it (submit, start and end times, state, nodes): squeue,
// then sacct. The service asks Slurm first whenever it can, and checks each batch against the answer
// (profiledb/claims.h); the DB's jobs row is only a fallback where Slurm is not asked (db-only).
// Without libslurm only the DB is asked (--owner-lookup db-only).
//
// A lookup never holds the service's only thread: the commands run in the background
// (util/command.h) and owner_of() only looks whether they have answered; until they do it says
// kPending, and the service answers 503 with Retry-After (the collector sends again). An answer is
// kept for the job's next batches for `answer_ttl_s` (--job-info-ttl), then asked again.
#ifndef DLSCHED_INGESTD_OWNER_LOOKUP_H
#define DLSCHED_INGESTD_OWNER_LOOKUP_H

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "profiledb/claims.h"
#include "util/status.h"

namespace dlsched::ingest {

struct OwnerAnswer {
	enum class Kind {
		kFound,
		kNoSuchJob,  // slurmctld does not know the job
		kError,      // slurmctld could not be asked (retry later)
		kPending,    // asked, no answer yet (ask again later)
		kDeferred,   // not asked: may_start was false (the sender's lookups are spent)
	};
	Kind kind = Kind::kError;
	uid_t uid = 0;
	db::SlurmJob job;  // when kFound
	double age_s = 0;  // when kFound: seconds since Slurm said so
	std::string message;
};

class OwnerLookup {
public:
	virtual ~OwnerLookup() = default;
	// What Slurm said of job_id within the answer TTL, or whether it is still being asked; starts
	// asking only when `may_start` (else kDeferred). Never waits.
	virtual OwnerAnswer owner_of(std::int64_t job_id, bool may_start) = 0;
	// Drops what Slurm said of job_id: the next owner_of() asks again.
	virtual void forget(std::int64_t job_id) = 0;
	// Lookups started so far (a job asked of Slurm; /v1/stats owner_lookups).
	virtual std::uint64_t lookups_started() const = 0;
};

#ifdef DLSCHED_WITH_LIBSLURM
// Checks that slurm.conf is readable ($SLURM_CONF, else /etc/slurm/slurm.conf); an error names the file.
Result<std::unique_ptr<OwnerLookup>> make_slurm_owner_lookup(double answer_ttl_s);
#endif

// The passwd name of `uid`, else the number as text: the DB's jobs.user column.
std::string user_name(uid_t uid);
// The uid of the DB's jobs.user column: a number is a uid, a name is asked of NSS (getpwnam_r).
// An error (NSS failed, or does not know the name) is the service's to retry (503), never a
// reason to refuse the sender.
Result<uid_t> user_uid(const std::string& name);
// A user name or a numeric uid (--slurm-user); the error names `option`.
Result<uid_t> parse_user(const std::string& name_or_uid, const std::string& option);

}  // namespace dlsched::ingest

#endif
