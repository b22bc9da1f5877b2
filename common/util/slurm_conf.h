// One key of slurm.conf read as text (no Slurm header, no libslurm): the tools beside slurmctld
// (dlsched-ingestd, dlsched-guard) default to the cluster's own ClusterName with it.
#ifndef DLSCHED_UTIL_SLURM_CONF_H
#define DLSCHED_UTIL_SLURM_CONF_H

#include <string>

namespace dlsched {

// The value of `key` (case-insensitive, the last one wins; '#' starts a comment) in $SLURM_CONF,
// else /etc/slurm/slurm.conf; "" when the file or the key is not there. Included files are not read.
std::string slurm_conf_value(const std::string& key);

}  // namespace dlsched

#endif
