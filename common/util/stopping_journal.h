// The journal of the jobs sched/dlsched asked to checkpoint and has not requeued yet
// (StateSaveLocation/dlsched-stopping.state, written by plugins/sched/dlsched/stopping.c, which
// documents the format), read from outside slurmctld: dlsched-replay must not count such a job
// done while it shows a final state between its exit on the request and its requeue.
#ifndef DLSCHED_UTIL_STOPPING_JOURNAL_H
#define DLSCHED_UTIL_STOPPING_JOURNAL_H

#include <cstdint>
#include <map>
#include <string>

#include "util/status.h"

namespace dlsched {

// One job being stopped: when it was asked to checkpoint, and when sched/dlsched requeues it at the
// latest (the request + PreemptGrace=), both in Unix seconds.
struct StoppingJob {
	double requested = 0;
	double deadline = 0;
};

// The file's name in StateSaveLocation.
constexpr const char* kStoppingJournalName = "dlsched-stopping.state";

// The jobs the journal at `path` still lists as stopping: each "v2"/"v1" record adds (or replaces)
// its job, "del" removes it, "rec" changes nothing here. Malformed lines are skipped, as the plugin
// skips them when it loads the file. A missing file is an empty table (sched/dlsched never stopped
// a job there); a file that cannot be read is an error naming it.
Result<std::map<std::uint32_t, StoppingJob>> read_stopping_journal(const std::string& path);

}  // namespace dlsched

#endif
