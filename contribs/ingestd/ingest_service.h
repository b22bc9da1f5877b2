// What dlsched-ingestd does with a request, apart from HTTP: authenticate the batch (munge), hold
// each uid to its rate and row quota, check it (db::parse_batch, the configured cluster), check that
// the sender may report for the job (its owner by uid, SlurmUser or root: Slurm says who, the DB
// only where Slurm is not asked), check its claims against what Slurm knows of the job
// (db::check_claims), and write it to the profile DB in one transaction. Every refusal is counted
// by reason and logged with the peer's address. Called from one thread only (the HTTP server's):
// the DB has a single writer.
#ifndef DLSCHED_INGESTD_INGEST_SERVICE_H
#define DLSCHED_INGESTD_INGEST_SERVICE_H

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>

#include "log.h"
#include "munge_auth.h"
#include "owner_lookup.h"
#include "profiledb/claims.h"
#include "profiledb/profile_db.h"
#include "profiledb/records.h"

namespace dlsched::ingest {

enum class Refusal {
	kBadCredential,    // 401: invalid, forged, expired or replayed credential
	kWrongUser,        // 403: the uid is neither the job's owner nor SlurmUser
	kUnknownJob,       // 403: neither slurmctld nor the DB knows the job
	kMalformed,        // 400: the batch fails the protocol's checks
	kTooLarge,         // 413: body over --max-request
	kDbError,          // 503: the DB is busy or cannot be written
	kAuthUnavailable,  // 503: munged cannot be reached
	kLookupFailed,     // 503: slurmctld cannot be asked for the owner
	kBadMethod,        // 405
	kBadPath,          // 404
	kBadContentType,   // 415: not application/x-munge
	kWrongCluster,     // 403: the batch's cluster is not --cluster
	kRateLimited,      // 429: the uid sent more batches than --rate-limit allows
	kRowQuota,         // 429: the uid's rows in this hour would pass --row-quota
	kLookupPending,    // 503: Slurm was asked for the job's owner and has not answered yet
	kImplausible,      // 403: a record contradicts what Slurm knows of the job (profiledb/claims.h)
	kLookupLimited,    // 503: the uid started more job lookups than --lookup-rate allows
};
constexpr std::size_t kRefusalCount = 17;
const char* refusal_name(Refusal r);
int refusal_http_status(Refusal r);

struct Reply {
	int status = 200;
	std::string body;       // JSON
	int retry_after_s = 0;  // > 0: a Retry-After header (429, 503)
};

// The service's limits (dlsched-ingestd(8) gives the options and their defaults).
struct Limits {
	std::string cluster;     // a batch's cluster must be this one
	double rate_per_s = 20;  // batches per second per uid (a bucket of rate_burst)
	double rate_burst = 100;
	std::int64_t row_quota = 20000;  // records per uid per quota_window_s (100 jobs, an epoch / 20 s)
	double quota_window_s = 3600;
	double unknown_job_ttl_s = 60;         // a job found unknown is answered from memory this long
	std::size_t unknown_job_cache = 4096;  // at most this many such jobs are remembered
	double lookup_rate_per_s = 2;  // new Slurm lookups per second per uid (a bucket of lookup_burst)
	double lookup_burst = 20;
	double clock_skew_s = db::kClockSkewS;  // tolerance of the claims' times
};

class IngestService {
public:
	using Clock = double (*)();

	// `lookup` may be null (db-only). `slurm_uid` may always report, and so may root.
	IngestService(db::ProfileDb db, Authenticator& auth, OwnerLookup* lookup, uid_t slurm_uid, Log& log,
		      Clock clock, Limits limits);

	// POST /v1/records: the body is one munge credential carrying one batch.
	Reply post_records(const std::string& body, const std::string& peer);
	// GET /v1/stats
	Reply stats() const;
	// Counts and logs a refusal; the reply's body names the reason and says why. `sender` (the
	// credential's uid, when it decoded) goes to the log only.
	Reply refuse(Refusal why, const std::string& peer, const std::string& message,
		     const std::string& sender = std::string());

	// A connection closed at once: its address had --max-connections-per-ip open already.
	void connection_refused(const std::string& peer);

	std::uint64_t batches_accepted() const { return batches_; }
	// The seconds one epoch of each profiled model takes on one reference GPU (--profiles): the
	// bound of a job too young for its own reference when no other user ran its model.
	void set_profile_epochs(std::map<std::string, double> epoch_gpu_s)
	{
		profile_epochs_ = std::move(epoch_gpu_s);
	}
	std::uint64_t refused_total() const;

private:
	struct Owner {
		bool in_db = false;      // the DB has a row for the job
		bool in_slurm = false;   // slurmctld named its owner
		std::string name;        // "" when nobody knows
		uid_t uid = 0;           // when in_slurm
		db::SlurmJob job;        // when in_slurm
		bool stale_row = false;  // the DB's row is of an earlier job with the same id
		double age_s = 0;        // when in_slurm: how old Slurm's answer is
	};
	struct PerUid {
		double tokens = 0, refilled_at = 0;  // the rate's bucket
		double window_start = 0;             // the row quota's window
		std::int64_t rows = 0;
		double lookup_tokens = 0;  // the Slurm lookups' bucket
		bool started = false;
	};
	using JobKey = std::pair<std::string, std::int64_t>;  // cluster, job id
	struct Stored {
		std::uint64_t accepted = 0;
		std::uint64_t duplicates = 0;
	};

	// Slurm's owner of the job (the DB's where Slurm is not asked or does not know it). A new
	// lookup takes one of `limit`'s lookup tokens unless `privileged`.
	Result<Owner> owner_of(const db::Batch& b, PerUid& limit, bool privileged, Refusal& why);
	PerUid& per_uid(uid_t uid, double now);
	bool known_unknown(const JobKey& k, double now);
	void remember_unknown(const JobKey& k, double now);
	Result<Stored> store(const db::Batch& b, const Owner& owner);
	// peer_reference_gpu_s() of `model` without `user`'s jobs, from the model's recent history
	// (its 50 latest jobs, read at most once a minute per model).
	double peer_reference(const std::string& model, const std::string& user, double now,
			      std::string* what);
	std::map<std::string, double> profile_epochs_;

	db::ProfileDb db_;
	Authenticator& auth_;
	OwnerLookup* lookup_;
	uid_t slurm_uid_;
	Log& log_;
	Clock clock_;
	Limits limits_;
	double started_s_;
	std::map<uid_t, PerUid> per_uid_;
	std::map<JobKey, double> unknown_until_;  // negative cache: expiry per job
	struct PeerHistory {
		double read_s = 0;
		std::vector<db::JobProfile> jobs;
	};
	std::map<std::string, PeerHistory> peers_;             // by model, at most kPeerModels
	std::deque<std::pair<JobKey, double>> unknown_order_;  // insertion order, for eviction
	std::uint64_t connections_refused_ = 0;
	// After slurmctld failed to answer, owner lookups wait until lookup_paused_until_s_.
	double lookup_failed_at_s_ = 0, lookup_paused_until_s_ = 0;
	std::string lookup_error_;

	std::uint64_t batches_ = 0, records_ = 0, duplicates_ = 0;
	std::array<std::uint64_t, kRefusalCount> refused_{};
};

}  // namespace dlsched::ingest

#endif
