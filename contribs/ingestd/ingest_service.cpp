#include "ingest_service.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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
	{"bad_method", 405},     {"bad_path", 404},   {"bad_content_type", 415}, {"wrong_cluster", 403},
	{"rate_limited", 429},   {"row_quota", 429},  {"lookup_pending", 503},   {"implausible", 403},
	{"lookup_limited", 503},
};

constexpr double kLookupPauseS = 30;  // after slurmctld failed to answer an owner lookup
// A batch is refused as implausible only on an answer of Slurm at most this old; on an older one
// Slurm is asked again first.
constexpr double kFreshAnswerS = 5;
constexpr std::size_t kMaxUids = 65536;  // per-uid state kept; idle uids are forgotten past it

int retry_after(double seconds)
{
	return std::max(1, static_cast<int>(std::ceil(seconds)));
}

std::size_t record_count(const db::Batch& b)
{
	return (b.job ? 1 : 0) + (b.job_end ? 1 : 0) + b.epochs.size() + b.checkpoints.size();
}

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

std::string fmt_rate(double r)
{
	char buf[32];
	std::snprintf(buf, sizeof buf, "%g", r);
	return buf;
}

// Unix seconds, whole (0: Slurm gave none).
std::string fmt_time(double t)
{
	char buf[32];
	std::snprintf(buf, sizeof buf, "%.0f", t);
	return buf;
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
			     Log& log, Clock clock, Limits limits)
    : db_(std::move(db)),
      auth_(auth),
      lookup_(lookup),
      slurm_uid_(slurm_uid),
      log_(log),
      clock_(clock),
      limits_(std::move(limits)),
      started_s_(clock())
{
}

void IngestService::connection_refused(const std::string& peer)
{
	// Counted; logged for the first and then every 1,000th, so that a flood does not fill the log.
	if (connections_refused_++ % 1000 == 0)
		log_.info("refused a connection from " + peer +
			  ": it has --max-connections-per-ip open already (" +
			  std::to_string(connections_refused_) + " refused so far)");
}

IngestService::PerUid& IngestService::per_uid(uid_t uid, double now)
{
	if (per_uid_.size() >= kMaxUids && !per_uid_.count(uid)) {
		// Forget the uids idle for a quota window (their bucket is full again anyway).
		for (auto it = per_uid_.begin(); it != per_uid_.end();)
			it = now - it->second.refilled_at > limits_.quota_window_s ? per_uid_.erase(it)
										   : std::next(it);
	}
	PerUid& p = per_uid_[uid];
	if (!p.started) {
		p.started = true;
		p.tokens = limits_.rate_burst;
		p.refilled_at = now;
		p.window_start = now;
		p.lookup_tokens = limits_.lookup_burst;
	}
	p.tokens = std::min(limits_.rate_burst, p.tokens + (now - p.refilled_at) * limits_.rate_per_s);
	p.lookup_tokens = std::min(limits_.lookup_burst,
				   p.lookup_tokens + (now - p.refilled_at) * limits_.lookup_rate_per_s);
	p.refilled_at = now;
	if (now - p.window_start >= limits_.quota_window_s) {
		p.window_start = now;
		p.rows = 0;
	}
	return p;
}

bool IngestService::known_unknown(const JobKey& k, double now)
{
	auto it = unknown_until_.find(k);
	if (it == unknown_until_.end())
		return false;
	if (now < it->second)
		return true;
	unknown_until_.erase(it);
	return false;
}

void IngestService::remember_unknown(const JobKey& k, double now)
{
	if (limits_.unknown_job_cache == 0 || limits_.unknown_job_ttl_s <= 0)
		return;
	// Bounded: the oldest entries go first (expired or not); entries already replaced are skipped.
	while (unknown_until_.size() >= limits_.unknown_job_cache && !unknown_order_.empty()) {
		auto it = unknown_until_.find(unknown_order_.front().first);
		if (it != unknown_until_.end() && it->second == unknown_order_.front().second)
			unknown_until_.erase(it);
		unknown_order_.pop_front();
	}
	const double until = now + limits_.unknown_job_ttl_s;
	unknown_until_[k] = until;
	unknown_order_.emplace_back(k, until);
	while (unknown_order_.size() > 2 * limits_.unknown_job_cache + 16)
		unknown_order_.pop_front();  // stale order entries of keys remembered again
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
	o.set("connections_refused", json::Value::integer(static_cast<std::int64_t>(connections_refused_)));
	o.set("unknown_jobs_cached", json::Value::integer(static_cast<std::int64_t>(unknown_until_.size())));
	o.set("owner_lookups",
	      json::Value::integer(static_cast<std::int64_t>(lookup_ ? lookup_->lookups_started() : 0)));
	o.set("uptime_s", json::Value::number(clock_() - started_s_));
	Reply r;
	r.body = o.dump(0);
	return r;
}

Result<IngestService::Owner> IngestService::owner_of(const db::Batch& b, PerUid& limit, bool privileged,
						     Refusal& why)
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
	if (!lookup_)
		return o;
	// Slurm first: the DB's row may be of an earlier job that had this id (MaxJobId wrapped, or
	// slurmctld's state was rebuilt while the DB was kept). Only a job Slurm does not know is
	// answered from the DB.
	const double now = clock_();
	if (known_unknown({b.cluster, b.job_id}, now))
		return o;  // slurmctld said so less than --unknown-job-ttl ago
	// After slurmctld failed to answer, answer 503 at once for a while rather than start
	// lookups that will fail the same way.
	if (now < lookup_paused_until_s_) {
		why = Refusal::kLookupFailed;
		return io_error("job lookups are paused for " +
				std::to_string(static_cast<int>(lookup_paused_until_s_ - now) + 1) +
				" s: slurmctld could not be asked " +
				std::to_string(static_cast<int>(now - lookup_failed_at_s_)) + " s ago (" +
				lookup_error_ + "); retry later");
	}
	// Each uid starts at most --lookup-rate lookups a second; root and SlurmUser are not limited.
	const std::uint64_t before = lookup_->lookups_started();
	const OwnerAnswer a = lookup_->owner_of(b.job_id, privileged || limit.lookup_tokens >= 1);
	if (lookup_->lookups_started() > before && !privileged)
		limit.lookup_tokens -= 1;
	switch (a.kind) {
		case OwnerAnswer::Kind::kFound:
			o.in_slurm = true;
			o.uid = a.uid;
			o.job = a.job;
			o.age_s = a.age_s;
			if (o.in_db && !o.name.empty()) {
				// The row's owner by uid. A name NSS cannot resolve is another user's when
				// NSS names Slurm's owner (an earlier job's owner who has left); while NSS
				// names nobody it may be down: 503, never records deleted on its word.
				auto stored = user_uid(o.name);
				const std::string current = user_name(a.uid);
				if (stored.is_ok()) {
					o.stale_row = stored.value() != a.uid;
				} else if (current != std::to_string(a.uid)) {
					o.stale_row = current != o.name;
				} else {
					why = Refusal::kLookupFailed;
					return io_error(stored.status().message() + " (retry later)");
				}
			}
			o.name = user_name(a.uid);
			log_.debug(job_name(b) + ": Slurm says uid " + std::to_string(a.uid) + ", " +
				   a.job.state + ", submitted " + fmt_time(a.job.submit_s) + ", started " +
				   fmt_time(a.job.start_s) + ", ends " + fmt_time(a.job.end_s) + ", " +
				   std::to_string(a.job.nodes.size()) + " node(s), " +
				   std::to_string(a.job.gpus) + " GPU(s)");
			break;
		case OwnerAnswer::Kind::kNoSuchJob:
			remember_unknown({b.cluster, b.job_id}, clock_());
			break;
		case OwnerAnswer::Kind::kPending:
			why = Refusal::kLookupPending;
			return io_error(a.message + "; retry in a second");
		case OwnerAnswer::Kind::kDeferred:
			why = Refusal::kLookupLimited;
			return io_error(a.message + ": this uid started more than " +
					fmt_rate(limits_.lookup_rate_per_s) +
					" job lookups per second (--lookup-rate); retry later");
		case OwnerAnswer::Kind::kError:
			why = Refusal::kLookupFailed;
			lookup_failed_at_s_ = clock_();
			lookup_paused_until_s_ = lookup_failed_at_s_ + kLookupPauseS;
			lookup_error_ = a.message;
			return io_error(a.message + " (retry later)");
	}
	return o;
}

double IngestService::peer_reference(const std::string& model, const std::string& user, double now,
				     std::string* what)
{
	const auto prof = profile_epochs_.find(model);
	const double profile_s = prof == profile_epochs_.end() ? 0 : prof->second;
	constexpr std::size_t kPeerModels = 256;
	constexpr double kPeerRefreshS = 60;
	auto it = peers_.find(model);
	if (it == peers_.end() || now - it->second.read_s >= kPeerRefreshS) {
		auto h = db_.model_history(model, 50);
		if (!h.is_ok())
			return it == peers_.end()
				       ? db::model_reference_gpu_s({}, user, profile_s, what)
				       : db::model_reference_gpu_s(it->second.jobs, user, profile_s, what);
		if (it == peers_.end()) {
			if (peers_.size() >= kPeerModels)
				peers_.erase(peers_.begin());
			it = peers_.emplace(model, PeerHistory{}).first;
		}
		it->second.read_s = now;
		it->second.jobs = std::move(h).value();
	}
	return db::model_reference_gpu_s(it->second.jobs, user, profile_s, what);
}

Result<IngestService::Stored> IngestService::store(const db::Batch& b, const Owner& o)
{
	Stored s;
	const std::string& owner = o.name;
	db::Transaction tx = db_.transaction();
	if (!tx.status().is_ok())
		return tx.status();
	if (o.stale_row) {
		// Another job had this id: its records must not count as this one's.
		Status st = db_.forget_job(b.cluster, b.job_id);
		if (!st.is_ok())
			return st;
	}
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
	if (o.in_slurm && o.job.submit_s > 0 && j.submit_s != o.job.submit_s) {
		j.submit_s = o.job.submit_s;  // Slurm's (a requeue moves it on)
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
	const std::string sender = user_name(uid);  // for messages only: owners are compared by uid
	const double now = clock_();
	PerUid& limit = per_uid(uid, now);
	if (limit.tokens < 1) {
		Reply r = refuse(Refusal::kRateLimited, peer,
				 who(uid, sender) + " sent more than " + fmt_rate(limits_.rate_per_s) +
					 " batches per second (--rate-limit); slow down",
				 who(uid, sender));
		r.retry_after_s = retry_after((1 - limit.tokens) / limits_.rate_per_s);
		return r;
	}
	limit.tokens -= 1;
	auto b = db::parse_batch(a.cred.payload, clock_());
	if (!b.is_ok())
		return refuse(Refusal::kMalformed, peer, b.status().message(), who(uid, sender));
	if (b->cluster != limits_.cluster)
		return refuse(Refusal::kWrongCluster, peer,
			      job_name(*b) + ": this service stores cluster '" + limits_.cluster +
				      "' only (--cluster); send it to that cluster's dlsched-ingestd",
			      who(uid, sender));
	const std::int64_t rows = static_cast<std::int64_t>(record_count(*b));
	if (limit.rows + rows > limits_.row_quota) {
		Reply r = refuse(Refusal::kRowQuota, peer,
				 who(uid, sender) + " has sent " + std::to_string(limit.rows) +
					 " records in this " +
					 std::to_string(static_cast<long long>(limits_.quota_window_s)) +
					 " s window; " + std::to_string(rows) +
					 " more would pass --row-quota " + std::to_string(limits_.row_quota),
				 who(uid, sender));
		r.retry_after_s = retry_after(limit.window_start + limits_.quota_window_s - now);
		return r;
	}

	Refusal why = Refusal::kDbError;
	const bool privileged = uid == 0 || uid == slurm_uid_;
	auto owner = owner_of(b.value(), limit, privileged, why);
	if (!owner.is_ok()) {
		Reply r = refuse(why, peer, owner.status().message(), who(uid, sender));
		if (why == Refusal::kLookupPending)
			r.retry_after_s = 1;
		else if (why == Refusal::kLookupLimited)
			r.retry_after_s = retry_after((1 - limit.lookup_tokens) / limits_.lookup_rate_per_s);
		else if (why == Refusal::kLookupFailed)
			r.retry_after_s = retry_after(lookup_paused_until_s_ - clock_());
		return r;
	}
	if (privileged) {
		// With slurmctld to ask, even SlurmUser reports only jobs that exist.
		if (lookup_ && !owner->in_db && !owner->in_slurm)
			return refuse(
				Refusal::kUnknownJob, peer,
				job_name(*b) + " is unknown: slurmctld and the profile DB do not know it",
				who(uid, sender));
	} else if (owner->name.empty()) {
		const std::string why_unknown = lookup_ ? "slurmctld and the profile DB do not know it"
							: "the profile DB does not know its owner (owner "
							  "lookup db-only: only SlurmUser "
							  "may report it)";
		return refuse(Refusal::kUnknownJob, peer, job_name(*b) + " is unknown: " + why_unknown,
			      who(uid, sender));
	} else {
		// By uid: a name could be another user's alias, and NSS may fail for the sender's uid.
		uid_t owner_uid = owner->uid;
		if (!owner->in_slurm) {
			auto u = user_uid(owner->name);
			if (!u.is_ok()) {
				Reply r = refuse(Refusal::kLookupFailed, peer,
						 u.status().message() + " (retry later)", who(uid, sender));
				r.retry_after_s = 10;
				return r;
			}
			owner_uid = u.value();
		}
		if (owner_uid != uid)
			return refuse(Refusal::kWrongUser, peer,
				      who(uid, sender) + " may not report for " + job_name(*b) +
					      ": it belongs to uid " + std::to_string(owner_uid) +
					      " (only its owner and SlurmUser may)",
				      who(uid, sender));
	}

	// The claims, against what Slurm knows of the job (where it was asked) and what the DB holds.
	{
		Status claims = Status::ok();
		if (owner->in_slurm) {
			auto recorded = owner->stale_row ? Result<db::JobProfile>(not_found("another job"))
							 : db_.job(b->cluster, b->job_id);
			if (!recorded.is_ok() && recorded.status().code() != StatusCode::kNotFound)
				return refuse(Refusal::kDbError, peer,
					      recorded.status().message() + " (retry later)",
					      who(uid, sender));
			// Its model's speed on other users' jobs bounds a job too young for a reference of
			// its own (forged from its first epoch on).
			// (The model first recorded: a batch that renames it does not escape its peers.)
			const std::string model = recorded.is_ok() && !recorded->job.model.empty()
							  ? recorded->job.model
						  : b->job ? b->job->model
							   : std::string();
			std::string peer_what = "other users' jobs of its model";
			const double peer_s =
				model.empty() ? 0 : peer_reference(model, owner->name, now, &peer_what);
			claims = db::check_claims(*b, owner->job,
						  recorded.is_ok() ? &recorded.value() : nullptr, now,
						  limits_.clock_skew_s, peer_s, peer_what);
		} else {
			claims = db::check_not_future(*b, now, limits_.clock_skew_s);
		}
		// Refused on what Slurm said a while ago (the job may have been requeued, resized since):
		// asked again first, and the batch sent again (503) is checked against the new answer.
		if (!claims.is_ok() && owner->in_slurm && owner->age_s > kFreshAnswerS) {
			lookup_->forget(b->job_id);
			Reply r = refuse(Refusal::kLookupPending, peer,
					 job_name(*b) + ": " + claims.message() + "; Slurm said so " +
						 fmt_time(owner->age_s) +
						 " s ago: asking again, retry in a second",
					 who(uid, sender));
			r.retry_after_s = 1;
			return r;
		}
		if (!claims.is_ok())
			return refuse(Refusal::kImplausible, peer, job_name(*b) + ": " + claims.message(),
				      who(uid, sender));
	}
	if (owner->stale_row) {
		auto old = db_.job_record(b->cluster, b->job_id);
		log_.info(job_name(*b) + " is a new job of uid " + std::to_string(owner->uid) +
			  " (Slurm); the records of the earlier job with this id, of user " +
			  (old.is_ok() ? old->user : std::string("?")) + ", are forgotten");
	}
	auto stored = store(b.value(), owner.value());
	if (!stored.is_ok())
		return refuse(Refusal::kDbError, peer, stored.status().message() + " (retry later)",
			      who(uid, sender));
	unknown_until_.erase({b->cluster, b->job_id});  // SlurmUser may have made its row
	limit.rows += rows;
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
