// Slurm's node lists ("n1", "n[1-3,05]", "a1,b[2-3]") as node names, for the tools and services
// that read them from Slurm's commands or environment (dlsched-ingestd's job lookups,
// dlsched-emu-train's SLURM_JOB_NODELIST). Not Slurm's own hostlist code: the forms above only.
#ifndef DLSCHED_UTIL_NODE_LIST_H
#define DLSCHED_UTIL_NODE_LIST_H

#include <string>
#include <vector>

namespace dlsched {

// The names in `list`, in its order, zero padding kept; false (and `out` empty) when it has another
// form (an unclosed bracket, a range backwards or over 100,000 names, a range not of numbers).
bool expand_node_list(const std::string& list, std::vector<std::string>& out);

}  // namespace dlsched

#endif
