// Who owns a job, when the profile DB does not know it yet: Slurm (squeue, then sacct).
// The service remembers the answer in the DB's jobs row, so each job is asked about once.
// Without libslurm only the DB is asked (--owner-lookup db-only).
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
	};
	Kind kind = Kind::kError;
	uid_t uid = 0;
	std::string message;
};

class OwnerLookup {
public:
	virtual ~OwnerLookup() = default;
	virtual OwnerAnswer owner_of(std::int64_t job_id) = 0;
};

#ifdef DLSCHED_WITH_LIBSLURM
// Reads slurm.conf ($SLURM_CONF, else /etc/slurm/slurm.conf); an error names the file.
Result<std::unique_ptr<OwnerLookup>> make_slurm_owner_lookup();
#endif

// The passwd name of `uid`, else the number as text: the DB's jobs.user column.
std::string user_name(uid_t uid);
// A user name or a numeric uid (--slurm-user); the error names `option`.
Result<uid_t> parse_user(const std::string& name_or_uid, const std::string& option);

}  // namespace dlsched::ingest

#endif
