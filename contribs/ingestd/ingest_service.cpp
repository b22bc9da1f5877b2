#include "ingest_service.h"

#include "json/json.h"

namespace dlsched::ingest {

namespace {

struct RefusalInfo {
	const char* name;
	int status;
};
// In the order of enum Refusal.
const RefusalInfo kRefusals[kRefusalCount] = {
	{"bad_credential", 401}, {"wrong_user", 403}, {"unknown_job", 403},      {"malformed", 400},
	{"too_large", 413},      {"db_error", 503},   {"auth_unavailable", 503}, {"lookup_failed", 503},
	{"bad_method", 405},     {"bad_path", 404},   {"bad_content_type", 415},
};

constexpr double kLookupPauseS = 30;  // after slurmctld failed to answer an owner lookup

std::string who(uid_t uid, const std::string& name)
{
	const std::string n = std::to_string(uid);
	return "uid " + n + (name == n ? std::string() : " (" + name + ")");
}

// The columns that job and job_end records set.
bool same_job(const db::JobRecord& a, const db::JobRecord& b)
{
	return a.model == b.model && a.gpus == b.gpus && a.nodes == b.nodes &&
	       a.epochs_total == b.epochs_total && a.start_s == b.start_s && a.end_s == b.end_s &&
	       a.state == b.state;
}

std::string job_name(const db::Batch& b)
{
	return "job " + std::to_string(b.job_id) +
	       (b.cluster.empty() ? std::string() : " on cluster " + b.cluster);
}

}  // namespace

const char* refusal_name(Refusal r)
{
	return kRefusals[static_cast<std::size_t>(r)].name;
}

int refusal_http_status(Refusal r)
{
	return kRefusals[static_cast<std::size_t>(r)].status;
}

IngestService::IngestService(db::ProfileDb db, Authenticator& auth, OwnerLookup* lookup, uid_t slurm_uid,
			     Log& log, Clock clock)
    : db_(std::move(db)),
      auth_(auth),
      lookup_(lookup),
      slurm_uid_(slurm_uid),
      log_(log),
      clock_(clock),
      started_s_(clock())
{
}

std::uint64_t IngestService::refused_total() const
{
	std::uint64_t n = 0;
	for (std::uint64_t r : refused_)
		n += r;
	return n;
}

Reply IngestService::refuse(Refusal why, const std::string& peer, const std::string& message,
			    const std::string& sender)
{
	++refused_[static_cast<std::size_t>(why)];
	Reply r;
	r.status = refusal_http_status(why);
	log_.info("refused " + peer + (sender.empty() ? std::string() : ", " + sender) + ": " +
		  std::to_string(r.status) + " " + refusal_name(why) + ": " + message);
	json::Value body = json::Value::object();
	body.set("error", json::Value::string(refusal_name(why)));
	body.set("message", json::Value::string(message));
	r.body = body.dump(0);
	return r;
}

Reply IngestService::stats() const
{
	json::Value o = json::Value::object();
	o.set("batches_accepted", json::Value::integer(static_cast<std::int64_t>(batches_)));
	o.set("records_accepted", json::Value::integer(static_cast<std::int64_t>(records_)));
	o.set("duplicates", json::Value::integer(static_cast<std::int64_t>(duplicates_)));
	json::Value refused = json::Value::object();
	for (std::size_t i = 0; i < kRefusalCount; ++i)
		refused.set(kRefusals[i].name, json::Value::integer(static_cast<std::int64_t>(refused_[i])));
	o.set("refused", refused);
	o.set("refused_total", json::Value::integer(static_cast<std::int64_t>(refused_total())));
	o.set("uptime_s", json::Value::number(clock_() - started_s_));
	Reply r;
	r.body = o.dump(0);
	return r;
}

Result<IngestService::Owner> IngestService::owner_of(const db::Batch& b, Refusal& why)
{
	Owner o;
	auto row = db_.job_record(b.cluster, b.job_id);
	if (row.is_ok()) {
		o.in_db = true;
		o.name = row->user;
	} else if (row.status().code() != StatusCode::kNotFound) {
		why = Refusal::kDbError;
		return row.status();
	}
	if (o.name.empty() && lookup_) {
		// While slurmctld does not answer, each attempt would hold the only request thread for
		// libslurm's whole connect timeout: answer 503 at once for a while instead.
		const double now = clock_();
		if (now < lookup_paused_until_s_) {
			why = Refusal::kLookupFailed;
			return io_error("owner lookups are paused for " +
					std::to_string(static_cast<int>(lookup_paused_until_s_ - now) + 1) +
					" s: slurmctld could not be asked " +
					std::to_string(static_cast<int>(now - lookup_failed_at_s_)) +
					" s ago (" + lookup_error_ + "); retry later");
		}
		const OwnerAnswer a = lookup_->owner_of(b.job_id);
		switch (a.kind) {
			case OwnerAnswer::Kind::kFound:
				o.in_slurm = true;
				o.name = user_name(a.uid);
				break;
			case OwnerAnswer::Kind::kNoSuchJob:
				break;
			case OwnerAnswer::Kind::kError:
				why = Refusal::kLookupFailed;
				lookup_failed_at_s_ = clock_();
				lookup_paused_until_s_ = lookup_failed_at_s_ + kLookupPauseS;
				lookup_error_ = a.message;
				return io_error(a.message + " (retry later)");
		}
	}
	return o;
}

Result<IngestService::Stored> IngestService::store(const db::Batch& b, const std::string& owner)
{
	Stored s;
	db::Transaction tx = db_.transaction();
	if (!tx.status().is_ok())
		return tx.status();
	auto row = db_.job_record(b.cluster, b.job_id);
	if (!row.is_ok() && row.status().code() != StatusCode::kNotFound)
		return row.status();
	// The jobs row is merged, never replaced by what one batch says: put_job rewrites all its columns.
	db::JobRecord j;
	if (row.is_ok()) {
		j = row.value();
	} else {
		j.cluster = b.cluster;
		j.job_id = b.job_id;
	}
	bool write = !row.is_ok();  // a job the DB did not have gets its row (and its owner) now
	if (!owner.empty() && j.user != owner) {
		j.user = owner;  // the verified owner, never a name from the batch
		write = true;
	}
	// A job or job_end record that changes nothing (a batch sent again) counts as a duplicate.
	if (b.job) {
		const db::JobRecord& n = *b.job;
		const db::JobRecord before = j;
		if (!n.model.empty())
			j.model = n.model;
		if (n.epochs_total > 0)
			j.epochs_total = n.epochs_total;
		j.gpus = n.gpus;  // a restart may bring a different size
		j.nodes = n.nodes;
		// start_s is the job's first start; a run that starts after the recorded end is running
		// again.
		if (j.start_s <= 0 || n.start_s < j.start_s)
			j.start_s = n.start_s;
		if (j.state.empty() || n.start_s > j.end_s)
			j.state = "running";
		const bool changed = !same_job(before, j);
		write = write || changed;
		++(changed ? s.accepted : s.duplicates);
	}
	if (b.job_end) {
		const db::JobRecord before = j;
		// An end older than the job's start belongs to an earlier run, delivered late: skipped.
		if (b.job_end->end_s >= j.start_s) {
			j.end_s = b.job_end->end_s;
			j.state = b.job_end->state;
		}
		const bool changed = !same_job(before, j);
		write = write || changed;
		++(changed ? s.accepted : s.duplicates);
	}
	if (write) {
		Status st = db_.put_job(j);
		if (!st.is_ok())
			return st;
	}
	for (const db::EpochRecord& e : b.epochs) {
		auto added = db_.add_epoch(e);
		if (!added.is_ok())
			return added.status();
		++(added.value() ? s.accepted : s.duplicates);
	}
	for (const db::CheckpointRecord& c : b.checkpoints) {
		auto added = db_.add_checkpoint(c);
		if (!added.is_ok())
			return added.status();
		++(added.value() ? s.accepted : s.duplicates);
	}
	Status st = tx.commit();
	if (!st.is_ok())
		return st;
	return s;
}

Reply IngestService::post_records(const std::string& body, const std::string& peer)
{
	const AuthResult a = auth_.decode(body);
	if (a.kind != AuthResult::Kind::kOk)
		return refuse(a.kind == AuthResult::Kind::kUnavailable ? Refusal::kAuthUnavailable
								       : Refusal::kBadCredential,
			      peer, a.message);
	const uid_t uid = a.cred.uid;
	const std::string sender = user_name(uid);
	auto b = db::parse_batch(a.cred.payload, clock_());
	if (!b.is_ok())
		return refuse(Refusal::kMalformed, peer, b.status().message(), who(uid, sender));

	Refusal why = Refusal::kDbError;
	auto owner = owner_of(b.value(), why);
	if (!owner.is_ok())
		return refuse(why, peer, owner.status().message(), who(uid, sender));
	const bool privileged = uid == 0 || uid == slurm_uid_;
	if (privileged) {
		// With slurmctld to ask, even SlurmUser reports only jobs that exist.
		if (lookup_ && !owner->in_db && !owner->in_slurm)
			return refuse(
				Refusal::kUnknownJob, peer,
				job_name(*b) + " is unknown: slurmctld and the profile DB do not know it",
				who(uid, sender));
	} else if (owner->name.empty()) {
		const std::string why_unknown =
			lookup_ ? "slurmctld and the profile DB do not know it"
				: "the profile DB does not know its owner (owner lookup db-only: only SlurmUser "
				  "may report it)";
		return refuse(Refusal::kUnknownJob, peer, job_name(*b) + " is unknown: " + why_unknown,
			      who(uid, sender));
	} else if (owner->name != sender) {
		return refuse(Refusal::kWrongUser, peer,
			      who(uid, sender) + " may not report for " + job_name(*b) +
				      ": it belongs to another user (only its owner and SlurmUser may)",
			      who(uid, sender));
	}

	auto stored = store(b.value(), owner->name);
	if (!stored.is_ok())
		return refuse(Refusal::kDbError, peer, stored.status().message() + " (retry later)",
			      who(uid, sender));
	++batches_;
	records_ += stored->accepted;
	duplicates_ += stored->duplicates;
	log_.debug("accepted from " + peer + ", " + who(uid, sender) + ": " + job_name(*b) + " step " +
		   b->step + " node " + b->node + " run " + std::to_string(b->run) + ": " +
		   std::to_string(stored->accepted) + " record(s), " + std::to_string(stored->duplicates) +
		   " duplicate(s)");
	json::Value o = json::Value::object();
	o.set("accepted", json::Value::integer(static_cast<std::int64_t>(stored->accepted)));
	o.set("duplicates", json::Value::integer(static_cast<std::int64_t>(stored->duplicates)));
	return Reply{200, o.dump(0)};
}

}  // namespace dlsched::ingest
