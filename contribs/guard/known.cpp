#include "contribs/guard/known.h"

#include <algorithm>
#include <cmath>

#include "predict/evidence.h"
#include "predict/profile_reader.h"

namespace dlsched::guard {

namespace {

// A job as sched/dlsched's view had it at `t`: running from its start (when it had started by
// then and not ended), else pending.
Job as_viewed(const train::SacctGuardJob& s, double t)
{
	Job j = s.job;
	const bool ended = s.end >= 0 && s.end <= t;
	if (s.start >= 0 && s.start <= t && !ended) {
		j.state = JobState::kRunning;
		j.gpus_allocated = j.gpus_requested;
		j.start_time = j.first_start_time = s.start;
		j.executed_s = t - s.start;
		j.attained_gpu_s = j.executed_s * j.gpus_allocated;
	}
	return j;
}

}  // namespace

std::vector<GuardKnown> known_at(const std::vector<train::SacctGuardJob>& jobs, const ModelCatalog& models,
				 const KnownOptions& o, KnownSummary* summary)
{
	KnownSummary sum;
	const double start = o.now - o.window;
	std::vector<GuardKnown> out;
	std::vector<Job> viewed;  // the unfinished ones, as the view had them at o.now
	std::vector<std::size_t> slot;
	std::vector<const train::SacctGuardJob*> src;
	for (const train::SacctGuardJob& s : jobs) {
		if (s.job.submit_time > o.now)
			continue;
		const bool ended = s.end >= 0;  // sacct_guard_jobs: by o.now
		if (s.job.submit_time <= start && ended && s.end <= start)
			continue;  // done before the window
		GuardKnown k;
		k.job = s.job;
		k.finished = ended;
		if (ended)  // its whole (last) run, per epoch on one GPU
			k.measured_epoch_time_1gpu =
				(s.end - s.start) * k.job.gpus_requested / std::max(1.0, k.job.epochs_total);
		k.carried = s.job.submit_time <= start;
		if (!ended) {
			viewed.push_back(as_viewed(s, o.now));
			slot.push_back(out.size());
		}
		out.push_back(std::move(k));
		src.push_back(&s);
	}

	// The unfinished jobs' lengths as decide() had them: the one evidence path, from the profile DB
	// as it stood at o.now (a read-only reader, refused as sched/dlsched refuses a database).
	predict::ProfileReader reader(o.profile_db, o.cluster, /*refresh_s=*/0);
	reader.read_as_of(o.now);
	std::vector<const Job*> running, pending;
	for (const Job& j : viewed)
		(j.running() ? running : pending).push_back(&j);
	if (reader.enabled())
		reader.refresh(running, models, o.now, pending);
	sum.profile_db_note = reader.status();
	for (std::size_t i = 0; i < viewed.size(); ++i) {
		Job& j = viewed[i];
		if (j.running())
			(void)reader.apply(j, models, o.overhead, o.now, /*estimate_progress=*/true);
		else
			reader.checkpoint_progress(j);
		const train::SacctGuardJob& s = *src[slot[i]];
		predict::Claims claims;
		claims.epoch_time_1gpu = s.job.epoch_time_1gpu;
		claims.epochs_known = s.epochs_given;
		const predict::RuntimeSource from =
			predict::prepare_runtime(j, reader, models, o.limits, claims);
		if (from == predict::RuntimeSource::kMeasured || from == predict::RuntimeSource::kHistory)
			++sum.from_db;
		GuardKnown& k = out[slot[i]];
		k.job.epoch_time_1gpu = j.epoch_time_1gpu;
		k.job.runtime_cv = j.runtime_cv;
		k.job.runtime_from_limit = j.runtime_from_limit;
		if (from == predict::RuntimeSource::kUnknown)
			k.job.epochs_total = 1;
	}

	// The backlog at the window's start: the epochs each had left then, from its records before
	// the start (the last epoch it reported), else the time it had run at the length known now.
	predict::ProfileReader then(o.profile_db, o.cluster, /*refresh_s=*/0);
	then.read_as_of(start);
	std::vector<Job> at_start;
	std::vector<std::size_t> carried;
	for (std::size_t i = 0; i < out.size(); ++i) {
		if (!out[i].carried)
			continue;
		Job j = as_viewed(*src[i], start);
		j.epoch_time_1gpu =
			out[i].finished ? out[i].measured_epoch_time_1gpu : out[i].job.epoch_time_1gpu;
		j.epochs_total = out[i].job.epochs_total;
		at_start.push_back(j);
		carried.push_back(i);
	}
	std::vector<const Job*> running_then;
	for (const Job& j : at_start)
		if (j.running())
			running_then.push_back(&j);
	if (then.enabled() && !running_then.empty())
		then.refresh(running_then, models, start);
	for (std::size_t n = 0; n < at_start.size(); ++n) {
		const Job& j = at_start[n];
		GuardKnown& k = out[carried[n]];
		double done = 0;
		if (j.running()) {
			const predict::JobRecords* r = then.job(j.id);
			done = r && r->last_epoch > 0 ? r->last_epoch
						      : predict::progress_from_time(j, models);
		}
		// It was still there at the start: at least a sliver of it was left, whatever the estimate.
		k.epochs_left_then = std::max(0.01 * j.epochs_total, j.epochs_total - done);
		++sum.carried;
	}
	if (summary)
		*summary = sum;
	return out;
}

}  // namespace dlsched::guard
