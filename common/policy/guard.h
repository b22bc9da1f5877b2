// The guard of a learned policy (LearnedGuard=, doc/admin-guide.md "The learned policy's guard"):
// every GuardInterval= of cluster time a shadow evaluation replays the recent work twice, once with
// the learned policy and once with GuardPolicy=, and the cluster is scheduled by the better of the
// two until the next evaluation. The learned policy comes back only when it wins by more than
// GuardMargin=.
//
// This file holds what every host shares and what does not need a simulator: the settings, the
// snapshot of what the controller knew at the evaluation (guard_snapshot: never a job submitted
// after it, never a length it had not measured), and the switching rule (GuardState). The replay
// itself is dlsched-sim's engine (contribs/sim/engine.h, SimOptions::guard), run by dlsched-sim in
// its own loop and, for Slurm, by a process outside slurmctld that writes a verdict file.
#ifndef DLSCHED_POLICY_GUARD_H
#define DLSCHED_POLICY_GUARD_H

#include <string>
#include <vector>

#include "config/config.h"
#include "model/job.h"
#include "util/status.h"

namespace dlsched {

// Every host fills it with from_config(): the keys' defaults live in one place, config/keys.cpp.
struct GuardSettings {
	bool enabled = false;  // LearnedGuard=yes and the policy is a learned one (dl2, dual-agent)
	Seconds interval = 0;  // GuardInterval=: cluster seconds between evaluations
	Seconds window = 0;    // GuardWindow=: the jobs submitted this far back are replayed
	std::string policy;    // GuardPolicy=: the heuristic preset it is judged against
	double margin = 0;     // GuardMargin=: the learned policy comes back only when this much better

	// The settings of `config`; `learned`: whether its Policy= is a learned one (the guard is only
	// for those). Errors: a window shorter than the interval.
	static Result<GuardSettings> from_config(const Config& config, bool learned);
};

// GuardPolicy='s configuration beside the learned one's: `config` with Policy= set to `s.policy`; an
// OrderingPolicy= or AllocationPolicy= that sets the learned policy over the preset stays with the
// learned side. Errors name GuardPolicy=. Every host (dlsched-sim, the C ABI, dlsched-guard) builds
// the heuristic side with it.
Result<Config> guard_policy_config(const Config& config, const GuardSettings& s);

// Who schedules the cluster until the next evaluation.
enum class GuardChoice { kLearned, kHeuristic };
const char* guard_choice_name(GuardChoice c);  // "learned", "heuristic"

// One shadow evaluation's outcome: the average JCT of the replayed jobs under each policy.
struct GuardVerdict {
	Seconds at = 0;        // cluster time of the evaluation
	std::size_t jobs = 0;  // jobs replayed
	double learned_jct = 0;
	double heuristic_jct = 0;
	GuardChoice before = GuardChoice::kHeuristic;
	GuardChoice after = GuardChoice::kHeuristic;
	bool switched() const { return before != after; }
};

// The switching rule. It starts with the heuristic (what the site ran before: a smooth transition),
// hands the cluster to the learned policy when it wins by more than the margin, and back to the
// heuristic as soon as the heuristic is better. An evaluation with no job leaves the choice alone.
class GuardState {
public:
	explicit GuardState(double margin, GuardChoice start = GuardChoice::kHeuristic)
	    : margin_(margin), choice_(start)
	{
	}
	GuardVerdict evaluate(Seconds at, std::size_t jobs, double learned_jct, double heuristic_jct);
	GuardChoice choice() const { return choice_; }
	long switches() const { return switches_; }
	long evaluations() const { return evaluations_; }

private:
	double margin_;
	GuardChoice choice_;
	long switches_ = 0;
	long evaluations_ = 0;
};

// What the controller knew of one job at the evaluation.
struct GuardKnown {
	Job job;  // as the policies saw it (a pending or running job: its estimated epoch time)
	bool finished = false;
	// A finished job: its epoch time on one reference GPU as measured over its whole run (the truth
	// of its length, known once it ended). Ignored otherwise.
	Seconds measured_epoch_time_1gpu = 0;
	// Submitted before the window and still unfinished at its start: replayed from the window's
	// start with the epochs it had left then (as the controller recorded them at that time).
	bool carried = false;
	double epochs_left_then = 0;
};

// The workload a shadow evaluation at `now` replays: the jobs submitted in (now - window, now], each
// from its submission on an empty cluster, and the carried ones (GuardKnown::carried: the backlog at
// the window's start) submitted at the window's start with the epochs they had left then; each at
// the length per epoch the controller knows now (finished: as measured; else as estimated; unknown:
// its time limit, else `unknown_runtime_s`). A job submitted after `now` is never in it, whatever
// `known` holds. Sorted by submit time then id, run state cleared.
std::vector<Job> guard_snapshot(const std::vector<GuardKnown>& known, Seconds now, Seconds window,
				Seconds unknown_runtime_s = 3600);

}  // namespace dlsched

#endif
