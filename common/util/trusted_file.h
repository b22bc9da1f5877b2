// Which files a daemon serving every user (slurmctld) may read decisions from: the model file
// (ModelFile=, or the shipped one) and the profile DB (ProfileDB=). A model file is code and data
// that order everyone's jobs, and a profile DB holds the measurements the estimates come from: a file
// a user could write would let that user move other users' jobs.
//
// Off by default: dlsched-sim, dlsched-train and the other tools open the files their user names.
// A host that serves other users turns it on once (the C ABI's dlsched_files_trust_owner(), called by
// the Slurm plugins with SlurmUser's uid). Then:
// - a model file must be a regular file owned by root or that user and writable by nobody else;
// - a profile DB must be a regular file writable by neither "other" users (group members may: the ingest
//   service and SlurmUser share a group, doc/admin-guide.md), in a directory that "other" users cannot
//   write either (nobody else can put a file of their own in its place).
// A refusal is an error that names the file, what is wrong, and the fix.
#ifndef DLSCHED_UTIL_TRUSTED_FILE_H
#define DLSCHED_UTIL_TRUSTED_FILE_H

#include <cstdint>
#include <string>

#include "util/status.h"

namespace dlsched {

// Turns the checks on, trusting root and `uid` (SlurmUser) as owners of model files.
void trust_files_owned_by(std::uint32_t uid);
// Turns them off again (tests).
void trust_any_file();
// Whether the checks are on.
bool file_trust_enabled();

// OK when the checks are off, or `path` passes them (a missing file passes: the caller reports it).
Status check_model_file(const std::string& path);
Status check_profile_db(const std::string& path);

}  // namespace dlsched

#endif
