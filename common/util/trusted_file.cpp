// Which files a daemon serving every user may read decisions from (trusted_file.h).
#include "util/trusted_file.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace dlsched {

namespace {

// -1: checks off; else the trusted uid. Set once by the host before any scheduler is built (a plain
// atomic: constant-initialised, no static constructor).
std::atomic<std::int64_t> g_trusted_uid{-1};

std::string dir_of(const std::string& path)
{
	const std::size_t slash = path.find_last_of('/');
	if (slash == std::string::npos)
		return ".";
	return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

void trust_files_owned_by(std::uint32_t uid)
{
	g_trusted_uid.store(static_cast<std::int64_t>(uid));
}

void trust_any_file()
{
	g_trusted_uid.store(-1);
}

bool file_trust_enabled()
{
	return g_trusted_uid.load() >= 0;
}

Status check_model_file(const std::string& path)
{
	const std::int64_t uid = g_trusted_uid.load();
	struct stat st;
	if (uid < 0 || path.empty() || ::stat(path.c_str(), &st) != 0)
		return Status::ok();
	std::string why;
	if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_uid != 0 && static_cast<std::int64_t>(st.st_uid) != uid)
		why = "owned by uid " + std::to_string(st.st_uid) + ", neither root nor SlurmUser (uid " +
		      std::to_string(uid) + ")";
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		why = "writable by others than its owner";
	else
		return Status::ok();
	return invalid_argument(
		path + ": model file refused: " + why +
		"; a model that orders every user's jobs must be a regular file owned by root or "
		"SlurmUser and writable by nobody else (chown root " +
		path + "; chmod go-w " + path + ")");
}

Status check_profile_db(const std::string& path)
{
	if (g_trusted_uid.load() < 0 || path.empty())
		return Status::ok();
	struct stat st;
	if (::stat(path.c_str(), &st) != 0)
		return Status::ok();
	std::string why;
	if (!S_ISREG(st.st_mode))
		why = "is not a regular file";
	else if (st.st_mode & S_IWOTH)
		why = "is writable by every user";
	else {
		const std::string dir = dir_of(path);
		struct stat ds;
		if (::stat(dir.c_str(), &ds) != 0)
			why = "has a directory that cannot be checked (" + std::string(std::strerror(errno)) +
			      ")";
		else if (ds.st_mode & S_IWOTH)
			why = "is in " + dir + ", a directory every user can write";
		else
			return Status::ok();
	}
	return invalid_argument(
		path + ": profile database refused: it " + why +
		"; keep ProfileDB= in a directory only root, SlurmUser and the ingest service can write, "
		"writable by nobody else (dlsched-ingestd's unit makes it mode 0660 in a directory of mode "
		"2770; doc/admin-guide.md)");
}

}  // namespace dlsched
