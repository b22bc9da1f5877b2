// The guard's verdict file (doc/admin-guide.md "The learned policy's guard"): what dlsched-guard
// writes after each shadow evaluation and sched/dlsched follows. One `key=value` a line, '#'
// comments:
//   choice=learned|heuristic    who schedules until the next evaluation
//   at=SECONDS                  when the evaluation ran (seconds since the epoch)
//   learned_jct=S heuristic_jct=S jobs=N switches=N   what it measured (optional)
// The text is a claim from another process: parsed strictly, and a verdict older than twice
// GuardInterval= (or from the future) is stale, which means GuardPolicy=.
#ifndef DLSCHED_POLICY_GUARD_VERDICT_H
#define DLSCHED_POLICY_GUARD_VERDICT_H

#include <cstdint>
#include <string>

#include "policy/guard.h"
#include "util/status.h"

namespace dlsched {

struct GuardVerdictFile {
	GuardChoice choice = GuardChoice::kHeuristic;
	double at = 0;  // seconds since the epoch
	double learned_jct = 0;
	double heuristic_jct = 0;
	std::uint64_t jobs = 0;
	std::uint64_t switches = 0;
};

// A verdict from more than this far in the future (clocks of two hosts) is refused.
inline constexpr double kGuardVerdictSkew = 60;
// A verdict file is short; the reader refuses a longer one.
inline constexpr std::size_t kGuardVerdictMaxBytes = 4096;

// The file's text. `name` names it in errors. Errors (parse_error, naming the line): a line that is
// not key=value, an unknown key, a value that is not a number, a choice other than learned or
// heuristic, a missing choice= or at=.
Result<GuardVerdictFile> parse_guard_verdict(const std::string& text, const std::string& name);

// The text dlsched-guard writes for `v` (parse_guard_verdict reads it back exactly).
std::string format_guard_verdict(const GuardVerdictFile& v);

// Why a verdict evaluated at `at` cannot be followed at `now` with GuardInterval= `interval`
// (older than 2 x interval, or more than kGuardVerdictSkew in the future); "" when it can.
std::string guard_verdict_stale(double at, double now, double interval);

}  // namespace dlsched

#endif
