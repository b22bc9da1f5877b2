// What a Slurm job says about itself to dlsched, read once, by one parser: the comment's words
// (`model=resnet50 epochs=90 epoch_time_1gpu=120 gpus_min=2 gpus_max=8 deadline=1767225900`,
// separated by spaces or commas) and spank/dlsched's options as slurmctld keeps them in the job's
// environment (`DL_MODEL=`, `DL_EPOCHS=`, `DL_ELASTIC=MIN:MAX`; prolog and epilog see them with a
// `SPANK_` prefix), which take precedence over the words. The limits are spank/dlsched's submit-time
// checks; a value outside them, or not a plain decimal number, is ignored and named in `problems`.
// The plugins reach it through the C ABI (dlsched_parse_job_metadata), dlsched-train's sacct reader
// directly.
#ifndef DLSCHED_MODEL_JOB_METADATA_H
#define DLSCHED_MODEL_JOB_METADATA_H

#include <string>
#include <string_view>
#include <vector>

#include "dlsched/limits.h"

namespace dlsched {

// spank/dlsched's limits (its --dl-* checks), the same everywhere a job's metadata is read.
inline constexpr std::size_t kMaxModelName = DLSCHED_MAX_MODEL_NAME;  // letters, digits, '-', '_', '.'
inline constexpr double kMaxEpochs = DLSCHED_MAX_EPOCHS;
inline constexpr double kMaxEpochTime = 1e9;  // seconds per epoch on one reference GPU
inline constexpr int kMaxJobGpus = DLSCHED_MAX_JOB_GPUS;
inline constexpr double kMaxDeadline = 1e11;  // seconds since the epoch

struct JobMetadata {
	std::string model;           // "" when none (or an invalid name)
	double epochs = 0;           // 0: not given
	double epoch_time_1gpu = 0;  // 0: not given (a comment word only)
	int gpus_min = 0;            // 0: not given; both or neither, 1 <= min <= max
	int gpus_max = 0;
	double deadline = 0;                // the comment word deadline=<epoch s>; 0: none
	std::vector<std::string> problems;  // "epochs=abc: not a number in (0, 1e+07]", ...

	bool elastic() const { return gpus_min > 0 && gpus_max > gpus_min; }
	bool any() const
	{
		return !model.empty() || epochs > 0 || epoch_time_1gpu > 0 || gpus_min > 0 || deadline > 0;
	}
};

// Reads the comment's words into `m` (a later word replaces an earlier one). Unknown words are
// left alone: the comment is the user's.
void parse_job_words(std::string_view comment, JobMetadata& m);

// Reads spank/dlsched's environment entries ("DL_MODEL=bert", "SPANK_DL_ELASTIC=2:8") into `m`,
// over what the comment said. Other entries are left alone.
void parse_job_env(const std::vector<std::string_view>& env, JobMetadata& m);

// A deadline the comment word claims (Slurm never checked it), judged as Slurm judges --deadline
// at submission, and held to what it was when dlsched first saw the job:
//  - `first_seen` > 0 (the deadline dlsched recorded then: the admin comment's deadline=) counts
//    whatever the word says now: a later `scontrol update Comment=` cannot move it;
//  - otherwise the word counts only when it falls after the job's earliest start (its submit or
//    begin time, `earliest_start`) plus its --time-min (`time_min_s`, 0: none), as Slurm refuses
//    `sbatch --deadline` before the begin time + time-min.
// A word that did not count is named in `problem`.
struct DeadlineClaim {
	double deadline = 0;  // the deadline that counts; 0: none
	std::string problem;  // "" when the word counted (or there was none)
};
DeadlineClaim judge_deadline_word(double word, double first_seen, double earliest_start, double time_min_s);

}  // namespace dlsched

#endif
