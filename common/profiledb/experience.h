// The scheduler's experience as the profile DB keeps it: one row of the `experience` table per
// PolicyStep (model/policy_step.h) that a learned ordering recorded, for online fine-tuning
// (dlsched-train reads the rows back with ProfileDb::experience()).
//
// Columns: cluster, cycle, at_s (the step's `now`), and
//   state  TEXT  JSON {"schema", "rows", "features", "x": [rows x features, row-major], "context": [...],
//                      "ids": [...], "need": [...], "free_gpus", "in_system", "value", "log_prob",
//                      "sampled"}
//   action TEXT  JSON {"order": [rows in the order the policy chose]}
//   reward REAL  -in_system: jobs in the system during the cycle (the trainer multiplies it by the
//                seconds to the next row of the same cluster)
// Numbers are written with 10 significant digits: the features (floats) come back exactly, `value`
// and `log_prob` to float precision, which is the network's own.
#ifndef DLSCHED_PROFILEDB_EXPERIENCE_H
#define DLSCHED_PROFILEDB_EXPERIENCE_H

#include <string>

#include "json/json.h"
#include "model/policy_step.h"
#include "util/status.h"

namespace dlsched::db {

inline constexpr char kExperienceTable[] = "experience";

json::Value experience_state(const PolicyStep& step);
json::Value experience_action(const PolicyStep& step);
double experience_reward(const PolicyStep& step);

// Reads a row's state and action texts back into `out` (all fields but `cycle` and `now`, which are
// columns). Checks the shapes (x is rows x features; ids, need and order have one entry per row;
// order is a permutation of 0..rows-1); errors name the field at fault.
Status parse_experience(const std::string& state, const std::string& action, PolicyStep& out);

}  // namespace dlsched::db

#endif
