// A quota file: each account's guaranteed GPUs, one `account,gpus` line each (# comments, blank lines
// and an `account,gpus` header allowed). dlsched.conf's QuotaFile= (sched/dlsched and the advisor:
// it replaces the quotas Slurm's shares give) and dlsched-sim's --quotas FILE read it.
#ifndef DLSCHED_CONFIG_QUOTA_FILE_H
#define DLSCHED_CONFIG_QUOTA_FILE_H

#include <string>
#include <vector>

#include "util/status.h"

namespace dlsched {

struct AccountQuota {
	std::string account;
	double gpus = 0;
};

// The file's quotas, in its order. Errors name PATH (cannot open: kNotFound) or PATH:LINE and the
// fix (kInvalidArgument): a line that is not `account,gpus`, no account name, a count that is not a
// number >= 0, an account listed twice.
Result<std::vector<AccountQuota>> read_quota_file(const std::string& path);

}  // namespace dlsched

#endif
