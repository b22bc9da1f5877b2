// dlsched-db accuracy: how well the predictors do on the jobs in a profile DB (a benchmark: it
// prints figures, it asserts nothing).
#ifndef DLSCHED_CONTRIBS_DB_ACCURACY_H
#define DLSCHED_CONTRIBS_DB_ACCURACY_H

#include <string>

#include "profiledb/profile_db.h"

namespace dlsched::db {

// Prints the runtime MAPE after 1, 2, 4 and 8 same-model jobs and the suspend/resume overhead error
// as a table, or as JSON; `each`: then every preemption sched/dlsched carried out, predicted against
// measured. Returns the process exit status.
int run_accuracy(ProfileDb& db, const std::string& profiles_dir, bool json, bool each = false);

}  // namespace dlsched::db

#endif
