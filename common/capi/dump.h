// Recorded cycles (DumpViews=, dlsched.conf(5)): a C cluster view and the decisions made of it, as
// JSON, and back. sched/dlsched writes one file per cycle through dlsched_scheduler_decide();
// `dlsched-sim decide --view FILE` reads one and replays it through the C ABI (dlsched_replay()),
// printing the decisions in the same JSON, so that a cycle recorded on a real cluster is a test.
//
// A file: {"schema": 1, "cycle", "now", "config": {Key: value, ...: the keys set},
//          "view": {every field of dlsched_cluster_view_t and its arrays},
//          "prepared": [per job, what decide() saw after the profile DB's evidence],
//          "decisions": {"actions": [...], "order": [...]}}
// Reals are written with 17 digits: they read back bit for bit.
#ifndef DLSCHED_CAPI_DUMP_H
#define DLSCHED_CAPI_DUMP_H

#include <deque>
#include <string>
#include <vector>

#include "dlsched/api.h"
#include "json/json.h"
#include "model/job.h"
#include "util/status.h"

namespace dlsched::capi {

inline constexpr int kDumpSchema = 1;
// DumpViews= keeps this many files (the most recent; older ones it wrote are removed).
inline constexpr std::size_t kDumpViewsKept = 200;

json::Value view_json(const dlsched_cluster_view_t& cv);
// Through the public accessors (dlsched_decisions_get, dlsched_decisions_order): what a host sees.
json::Value decisions_json(const dlsched_decisions_t* d);

// What the evidence made of one job (the profile DB's records and histories, the users' bounded
// claims): enough to decide again without the database.
json::Value prepared_json(const Job& j);
// Sets those fields of `j` from a "prepared" entry (matched by id by the caller).
Status apply_prepared(const json::Value& p, Job& j);

// A C view read back from view_json(): owns every array and string it points to.
struct OwnedView {
	std::deque<std::string> strings;  // stable addresses
	std::vector<dlsched_node_view_t> nodes;
	std::vector<dlsched_job_view_t> jobs;
	std::deque<std::vector<dlsched_share_t>> shares;
	std::vector<dlsched_epoch_sample_t> samples;
	std::vector<dlsched_account_view_t> accounts;
	dlsched_cluster_view_t view{};
};
// Errors name `source` and the field ("FILE: view.jobs[3].gpus_requested: not a number").
Status parse_view(const json::Value& v, const std::string& source, OwnedView& out);

}  // namespace dlsched::capi

// Replays a recorded cycle (the text of a DumpViews= file, named `source` in errors) through
// dlsched_scheduler_decide() on `sched`, each job as the recording's "prepared" entry says (no
// profile DB is read); `decisions` gets decisions_json() of the result, dumped. Never throws.
int dlsched_replay(dlsched_scheduler_t* sched, const std::string& text, const std::string& source,
		   std::string& decisions, dlsched_error_t* err);

#endif
