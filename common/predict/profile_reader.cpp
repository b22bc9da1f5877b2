#include "predict/profile_reader.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

namespace dlsched::predict {

namespace {

// Same-model jobs a history holds at most (the most recent): PickyMan predicts from a few.
constexpr std::size_t kHistoryJobs = 20;

}  // namespace

JobRecords job_records(const db::JobProfile& p)
{
	JobRecords r;
	r.measured = measurements(p);
	for (const db::EpochRecord& e : p.epochs)
		if (e.epoch >= r.last_epoch) {
			r.last_epoch = e.epoch;
			r.last_epoch_end_s = e.end_s;
		}
	int last_load_run = -1;
	for (const db::CheckpointRecord& c : p.checkpoints) {
		if (std::fabs(c.epoch - std::round(c.epoch)) > 1e-6)
			r.fractional_saves = true;
		if (c.kind == "save") {
			if (c.at_s >= r.last_save_s) {
				r.last_save_s = c.at_s;
				r.last_save_epoch = c.epoch;
			}
			if (c.bytes > 0)
				r.checkpoint_bytes = c.bytes;
		} else if (c.kind == "load" && c.run >= last_load_run) {
			last_load_run = c.run;
			r.last_load_epoch = c.epoch;
		}
	}
	return r;
}

db::JobProfile profile_as_of(const db::JobProfile& p, double t)
{
	db::JobProfile out;
	out.job = p.job;
	if (out.job.start_s > t)
		out.job.start_s = 0;
	if (out.job.end_s > t) {
		out.job.end_s = 0;
		out.job.state = out.job.start_s > 0 ? "running" : "pending";
	}
	for (const db::EpochRecord& e : p.epochs)
		if (e.end_s <= t)
			out.epochs.push_back(e);
	for (const db::CheckpointRecord& c : p.checkpoints)
		if (c.at_s <= t)
			out.checkpoints.push_back(c);
	for (db::PreemptionRecord r : p.preemptions) {
		if (r.requested_s > t)
			continue;
		if (r.requeued_s > t) {
			r.requeued_s = 0;
			r.outcome.clear();
		}
		out.preemptions.push_back(std::move(r));
	}
	return out;
}

ProfileReader::ProfileReader(std::string path, std::string cluster, double refresh_s, int busy_ms)
    : path_(std::move(path)),
      cluster_(std::move(cluster)),
      refresh_s_(refresh_s),
      as_of_(std::numeric_limits<double>::infinity()),
      busy_ms_(busy_ms)
{
}

void ProfileReader::read_as_of(double t)
{
	as_of_ = t;
	models_.clear();
}

void ProfileReader::give_up(const std::string& why, double now)
{
	status_ = why;
	db_.reset();
	retry_at_ = now + refresh_s_;
}

bool ProfileReader::connect(double now)
{
	if (db_)
		return true;
	if (path_.empty() || now < retry_at_)
		return false;
	const bool check = checked_at_ < 0 || now - checked_at_ >= kQuickCheckInterval;
	auto d = db::ProfileDb::open_reader(path_, busy_ms_, check);
	if (check)
		++quick_checks_;
	if (!d.is_ok()) {
		const bool missing = d.status().code() == StatusCode::kNotFound;
		give_up(d.status().message() +
				"; overhead and progress estimates come from the model profiles until it " +
				(missing ? "is there (looked for every cycle)"
					 : "can be read (tried again every ProfileRefresh seconds)"),
			now);
		// Not there yet (a new cluster: dlsched-ingestd creates it with the first report): a stat
		// per cycle finds it as soon as it is.
		if (missing)
			retry_at_ = now;
		return false;
	}
	if (check)
		checked_at_ = now;
	db_ = std::make_unique<db::ProfileDb>(std::move(d).value());
	status_.clear();
	return true;
}

void ProfileReader::refresh(const std::vector<const Job*>& running, const ModelCatalog& models, double now,
			    const std::vector<const Job*>& pending)
{
	jobs_.clear();
	if (!connect(now))
		return;
	// A job's own records and its model's history (when due); false when the DB failed.
	auto read = [&](const Job* j, bool own) {
		const bool past = std::isfinite(as_of_);
		if (own) {
			// A past moment: every row (the newest kJobRowLimit may all be later).
			auto p = db_->job(cluster_, j->id, past ? 0 : db::ProfileDb::kJobRowLimit);
			if (p.is_ok()) {
				jobs_[j->id] =
					job_records(past ? profile_as_of(p.value(), as_of_) : p.value());
			} else if (p.status().code() != StatusCode::kNotFound) {
				give_up(p.status().message(), now);
				return false;
			}
		}
		if (j->model < 0)
			return true;
		ModelHistory& h = models_[j->model];
		if (h.read_at >= 0 && now - h.read_at < refresh_s_)
			return true;
		// A past moment: the most recent kHistoryJobs that had epochs by then.
		auto history = db_->model_history(models.at(j->model).name, past ? 0 : kHistoryJobs);
		if (!history.is_ok()) {
			give_up(history.status().message(), now);
			return false;
		}
		std::vector<JobMeasurements> pooled;
		h.fractional_saves = false;
		for (const db::JobProfile& all : history.value()) {
			if (all.job.job_id == static_cast<std::int64_t>(j->id) && all.job.cluster == cluster_)
				continue;
			const db::JobProfile q = past ? profile_as_of(all, as_of_) : all;
			if (q.epochs.empty())
				continue;
			if (pooled.size() == kHistoryJobs)
				break;
			pooled.push_back(measurements(q));
			h.fractional_saves = h.fractional_saves || job_records(q).fractional_saves;
		}
		h.history = pool(pooled, kHistoryJobsPerUser);
		h.read_at = now;
		return true;
	};
	try {
		for (const Job* j : running)
			if (!read(j, true))
				return;
		for (const Job* j : pending)
			if (!read(j, j->restarts > 0))
				return;
	} catch (const std::exception& e) {
		give_up(std::string("reading the profile DB: ") + e.what(), now);
	}
	// The cluster's: the histories (which leave out the running jobs asked about) and those jobs.
	std::vector<JobMeasurements> all;
	for (const auto& [model, h] : models_) {
		JobMeasurements m;
		m.runs = h.history.runs;
		m.warmups = h.history.warmups;
		m.saves = h.history.saves;
		m.loads = h.history.loads;
		m.stop_waits = h.history.stop_waits;
		all.push_back(std::move(m));
	}
	for (const auto& [id, r] : jobs_)
		all.push_back(r.measured);
	everyone_ = pool(all);
}

const JobRecords* ProfileReader::job(JobId id) const
{
	auto it = jobs_.find(id);
	return it == jobs_.end() ? nullptr : &it->second;
}

const History* ProfileReader::model(int model) const
{
	auto it = models_.find(model);
	return it == models_.end() || it->second.history.runs.empty() ? nullptr : &it->second.history;
}

bool ProfileReader::apply(Job& j, const ModelCatalog& models, const OverheadParams& params, double now,
			  bool estimate_progress) const
{
	const JobRecords* r = job(j.id);
	const History* h = model(j.model);
	if (!r && !h) {
		j.preempt_cost = profile_cost(j, models, params);
		return false;
	}
	const int nodes = std::max<int>(1, static_cast<int>(j.placement.size()));
	if (r && !r->measured.runs.empty()) {
		// Its own steady epochs at its current size: a measurement, not a claim.
		const Estimate epoch = steady_epoch_time(r->measured.runs.back().epoch_s);
		if (epoch.known() && j.gpus_allocated > 0)
			j.epoch_time_1gpu = epoch.value * models.speedup(j.model, j.gpus_allocated, nodes);
	}
	if (r && estimate_progress && (r->last_epoch > 0 || r->last_load_epoch >= 0)) {
		const double epoch_s = epoch_seconds(j, models);
		const double base = std::max<double>(r->last_epoch, r->last_load_epoch);
		const double since = now - std::max(r->last_epoch_end_s, j.start_time);
		const double frac = epoch_s > 0 ? std::clamp(since / epoch_s, 0.0, 0.999) : 0.0;
		j.epochs_done = std::min(j.epochs_total, base + frac);
	}
	j.preempt_cost = preemption_cost(j, *this, models, params, now);
	return true;
}

bool ProfileReader::cost_evidence(const Job& j, JobEvidence& e) const
{
	const JobRecords* r = job(j.id);
	const History* h = model(j.model);
	if (!r && !h)
		return false;
	e.own = r ? &r->measured : nullptr;
	e.model = h;
	if (r) {
		e.last_epoch_end_s = std::max(r->last_epoch_end_s, j.start_time);
		e.last_checkpoint_s = r->last_save_s;
		e.checkpoint_bytes = r->checkpoint_bytes;
		e.fractional_saves = r->fractional_saves;
		// It saved after the epoch before its latest one, not yet after that one. (A job that saves
		// less often looks so for one write's time after an epoch it does not save at.)
		e.save_pending = r->last_epoch >= 2 && r->last_save_s >= 0 &&
				 r->last_save_s < r->last_epoch_end_s &&
				 std::fabs(r->last_save_epoch - (r->last_epoch - 1)) < 1e-6;
	}
	// Where jobs of its model stopped when asked: between iterations, if any saved mid-epoch.
	auto mh = models_.find(j.model);
	if (mh != models_.end() && mh->second.fractional_saves)
		e.fractional_saves = true;
	e.cluster = &everyone_;
	if (e.checkpoint_bytes == 0 && h && !h->saves.empty())
		e.checkpoint_bytes = h->saves.back().bytes;
	return true;
}

Estimate ProfileReader::own_epoch(const Job& j, const ModelCatalog& models) const
{
	const JobRecords* r = job(j.id);
	if (!j.running() || !r || r->measured.runs.empty() || j.gpus_allocated <= 0)
		return {};
	const std::vector<double>& epochs = r->measured.runs.back().epoch_s;
	const Estimate epoch = steady_epoch_time(epochs);
	if (!epoch.known() || !(epoch.value > 0))
		return {};
	const int nodes = std::max<int>(1, static_cast<int>(j.placement.size()));
	Estimate out;
	out.value = epoch.value * models.speedup(j.model, j.gpus_allocated, nodes);
	const Estimate left = remaining_time(epochs, j.epochs_total, j.epochs_done);
	const double cv = left.known() && left.value > 0 ? left.stddev / left.value : kUnmeasuredRuntimeCv;
	out.stddev = cv * out.value;
	out.samples = epoch.samples;
	return out;
}

void ProfileReader::checkpoint_progress(Job& j) const
{
	const JobRecords* r = job(j.id);
	if (!j.running() && r && r->last_save_epoch > 0)
		j.epochs_done = std::min(j.epochs_total, std::max(j.epochs_done, r->last_save_epoch));
}

bool ProfileReader::estimate_runtime(Job& j, const ModelCatalog& models, bool from_profile,
				     double profile_cv) const
{
	checkpoint_progress(j);
	j.runtime_cv = profile_cv;
	const JobRecords* r = job(j.id);
	if (j.running() && r && !r->measured.runs.empty()) {
		const Estimate left =
			remaining_time(r->measured.runs.back().epoch_s, j.epochs_total, j.epochs_done);
		if (left.known() && left.value > 0) {
			j.runtime_cv = left.stddev / left.value;
			return false;
		}
	}
	const Estimate e = history_epoch(j, *this, models);
	if (!e.known())
		return false;
	j.runtime_cv = e.stddev / e.value;
	if (!from_profile)
		return false;
	j.epoch_time_1gpu = e.value;
	return true;
}

double ProfileReader::checkpoint_since(JobId id, double since, double now)
{
	// Asked once a second per stopping job: a database that failed is not reopened before its
	// back-off ends (one that did not exist yet is looked for at once: a stat).
	if (!connect(now))
		return -1;
	try {
		auto p = db_->job(cluster_, id);
		if (!p.is_ok()) {
			if (p.status().code() != StatusCode::kNotFound)
				give_up(p.status().message(), now);
			return -1;
		}
		double at = -1;
		for (const db::CheckpointRecord& c : p->checkpoints)
			if (c.kind == "save" && c.at_s >= since)
				at = std::max(at, c.at_s);
		return at;
	} catch (const std::exception& e) {
		give_up(std::string("reading the profile DB: ") + e.what(), now);
		return -1;
	}
}

}  // namespace dlsched::predict
