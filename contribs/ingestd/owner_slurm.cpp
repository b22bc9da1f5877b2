// The owner of a job, asked of slurmctld through libslurm's public API (built only with libslurm).
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "owner_lookup.h"

namespace dlsched::ingest {

namespace {

class SlurmOwnerLookup : public OwnerLookup {
public:
	OwnerAnswer owner_of(std::int64_t job_id) override
	{
		OwnerAnswer a;
		job_info_msg_t* resp = nullptr;
		if (slurm_load_job(&resp, static_cast<uint32_t>(job_id), SHOW_ALL) != SLURM_SUCCESS) {
			const int err = slurm_get_errno();
			if (err == ESLURM_INVALID_JOB_ID) {
				a.kind = OwnerAnswer::Kind::kNoSuchJob;
				a.message = "slurmctld does not know job " + std::to_string(job_id);
			} else {
				a.kind = OwnerAnswer::Kind::kError;
				a.message = "asking slurmctld for job " + std::to_string(job_id) +
					    "'s owner: " + slurm_strerror(err);
			}
			return a;
		}
		if (!resp || resp->record_count == 0) {
			a.kind = OwnerAnswer::Kind::kNoSuchJob;
			a.message = "slurmctld does not know job " + std::to_string(job_id);
		} else {
			a.kind = OwnerAnswer::Kind::kFound;
			a.uid = static_cast<uid_t>(resp->job_array[0].user_id);
		}
		slurm_free_job_info_msg(resp);
		return a;
	}
};

}  // namespace

Result<std::unique_ptr<OwnerLookup>> make_slurm_owner_lookup()
{
	// slurm_init() gives up on the whole process when it cannot read slurm.conf: check first.
	const char* env = std::getenv("SLURM_CONF");
	const std::string conf = env && *env ? env : "/etc/slurm/slurm.conf";
	if (access(conf.c_str(), R_OK) != 0)
		return not_found("--owner-lookup slurm: cannot read " + conf + " (" + std::strerror(errno) +
				 "); set SLURM_CONF to slurm.conf's path, or use --owner-lookup db-only");
	slurm_init(conf.c_str());
	return std::unique_ptr<OwnerLookup>(new SlurmOwnerLookup());
}

}  // namespace dlsched::ingest
