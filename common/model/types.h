// Basic identifiers and time units shared by every part of the core.
#ifndef DLSCHED_MODEL_TYPES_H
#define DLSCHED_MODEL_TYPES_H

#include <cstdint>
#include <limits>

namespace dlsched {

using JobId = std::uint32_t;      // Slurm job ids are 32-bit
using NodeIndex = std::uint32_t;  // index into ClusterView::nodes
using Seconds = double;           // all times are seconds (absolute times: seconds since the epoch or
				  // since the start of a simulation, as the host decides)

constexpr Seconds kNoDeadline = std::numeric_limits<double>::infinity();
constexpr Seconds kNoTimeLimit = std::numeric_limits<double>::infinity();

}  // namespace dlsched

#endif
