// One batch of the ingest protocol (doc/protocol.md, section 2): the JSON that a node's collector
// sends to dlsched-ingestd, parsed and checked into the profile DB's typed records. Pure C++: no
// munge, no HTTP; the service authenticates the batch before it is parsed and writes it after.
//
// The check is strict, so that a collector's bug shows at once instead of as odd predictions: the
// protocol version must be 1, unknown keys and record types are errors, numbers are range-checked
// and times must be plausible. Every error names the place, as `records[3].end: 17.0 is before
// start 20.0`.
#ifndef DLSCHED_PROFILEDB_RECORDS_H
#define DLSCHED_PROFILEDB_RECORDS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiledb/profile_db.h"
#include "util/status.h"

namespace dlsched::db {

// The `job_end` record: when the job's run ended, and how.
struct JobEnd {
	double end_s = 0;
	std::string state;  // "completed", "checkpointed" or "failed"
};

struct Batch {
	std::string cluster;  // "" for one cluster
	std::int64_t job_id = 0;
	std::string step;  // "batch", "extern" or a step number
	std::string node;
	int run = 0;  // the job's restart count

	// Each record carries cluster, job_id and run from the batch. The job record's user is left
	// empty: the service fills in the verified owner, never a name the sender claims.
	std::optional<JobRecord> job;
	std::vector<EpochRecord> epochs;            // in the batch's order
	std::vector<CheckpointRecord> checkpoints;  // in the batch's order
	std::optional<JobEnd> job_end;

	std::size_t record_count() const
	{
		return (job ? 1 : 0) + epochs.size() + checkpoints.size() + (job_end ? 1 : 0);
	}
};

constexpr int kProtocolVersion = 1;
constexpr std::size_t kMaxBatchRecords = 1000;

// Parses and checks one batch. `now_s` (Unix seconds) bounds the times from above (a clock more
// than a day ahead is refused); the error's message names the record index and field.
Result<Batch> parse_batch(const std::string& text, double now_s);

}  // namespace dlsched::db

#endif
