// What dlsched-ingestd does with a request, apart from HTTP: authenticate the batch (munge),
// check it (db::parse_batch), check that the sender may report for the job (its owner, SlurmUser or
// root), and write it to the profile DB in one transaction. Every refusal is counted by reason and
// logged with the peer's address. Called from one thread only (the HTTP server's): the DB has a
// single writer.
#ifndef DLSCHED_INGESTD_INGEST_SERVICE_H
#define DLSCHED_INGESTD_INGEST_SERVICE_H

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>

#include "log.h"
#include "munge_auth.h"
#include "owner_lookup.h"
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
};
constexpr std::size_t kRefusalCount = 11;
const char* refusal_name(Refusal r);
int refusal_http_status(Refusal r);

struct Reply {
	int status = 200;
	std::string body;  // JSON
};

class IngestService {
public:
	using Clock = double (*)();

	// `lookup` may be null (db-only). `slurm_uid` may always report, and so may root.
	IngestService(db::ProfileDb db, Authenticator& auth, OwnerLookup* lookup, uid_t slurm_uid, Log& log,
		      Clock clock);

	// POST /v1/records: the body is one munge credential carrying one batch.
	Reply post_records(const std::string& body, const std::string& peer);
	// GET /v1/stats
	Reply stats() const;
	// Counts and logs a refusal; the reply's body names the reason and says why. `sender` (the
	// credential's uid, when it decoded) goes to the log only.
	Reply refuse(Refusal why, const std::string& peer, const std::string& message,
		     const std::string& sender = std::string());

	std::uint64_t batches_accepted() const { return batches_; }
	std::uint64_t refused_total() const;

private:
	struct Owner {
		bool in_db = false;     // the DB has a row for the job
		bool in_slurm = false;  // slurmctld named its owner
		std::string name;       // "" when nobody knows
	};
	struct Stored {
		std::uint64_t accepted = 0;
		std::uint64_t duplicates = 0;
	};

	Result<Owner> owner_of(const db::Batch& b, Refusal& why);
	Result<Stored> store(const db::Batch& b, const std::string& owner);

	db::ProfileDb db_;
	Authenticator& auth_;
	OwnerLookup* lookup_;
	uid_t slurm_uid_;
	Log& log_;
	Clock clock_;
	double started_s_;
	// After slurmctld failed to answer, owner lookups wait until lookup_paused_until_s_.
	double lookup_failed_at_s_ = 0, lookup_paused_until_s_ = 0;
	std::string lookup_error_;

	std::uint64_t batches_ = 0, records_ = 0, duplicates_ = 0;
	std::array<std::uint64_t, kRefusalCount> refused_{};
};

}  // namespace dlsched::ingest

#endif
