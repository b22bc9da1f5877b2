// Who owns a job, when the profile DB does not know it yet: Slurm (squeue, then sacct).
// The service remembers the answer in the DB's jobs row, so each job is asked about once.
// Without libslurm only the DB is asked (--owner-lookup db-only).
//
// A lookup never holds the service's only thread for long: the commands run in the background
// (util/command.h) and owner_of() waits for them at most `wait_s`; until they answer it says
// kPending, and the service answers 503 with Retry-After (the collector sends again).
#ifndef DLSCHED_INGESTD_OWNER_LOOKUP_H
#define DLSCHED_INGESTD_OWNER_LOOKUP_H

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "util/status.h"

namespace dlsched::ingest {

struct OwnerAnswer {
	enum class Kind {
		kFound,
		kNoSuchJob,  // slurmctld does not know the job
		kError,      // slurmctld could not be asked (retry later)
		kPending,    // asked, no answer yet (ask again later)
	};
	Kind kind = Kind::kError;
	uid_t uid = 0;
	std::string message;
};

class OwnerLookup {
public:
	virtual ~OwnerLookup() = default;
	// Starts or goes on asking for job_id's owner, waiting at most wait_s.
	virtual OwnerAnswer owner_of(std::int64_t job_id, double wait_s) = 0;
	// Lookups started so far (a job asked of Slurm; /v1/stats owner_lookups).
	virtual std::uint64_t lookups_started() const = 0;
};

#ifdef DLSCHED_WITH_LIBSLURM
// Reads slurm.conf ($SLURM_CONF, else /etc/slurm/slurm.conf); an error names the file.
Result<std::unique_ptr<OwnerLookup>> make_slurm_owner_lookup();
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
