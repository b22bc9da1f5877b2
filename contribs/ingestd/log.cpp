#include "log.h"

#include <cerrno>
#include <cstring>
#include <ctime>

namespace dlsched::ingest {

Log::~Log()
{
	if (f_)
		std::fclose(f_);
}

Status Log::open(const std::string& path)
{
	path_ = path;
	return path.empty() ? Status::ok() : reopen();
}

Status Log::reopen()
{
	if (path_.empty())
		return Status::ok();
	std::FILE* f = std::fopen(path_.c_str(), "a");
	if (!f)
		return io_error("--log-file " + path_ + ": " + std::strerror(errno) +
				" (give a writable file, or leave --log-file out to log to standard error)");
	std::setvbuf(f, nullptr, _IOLBF, 0);
	std::lock_guard<std::mutex> lock(mu_);
	if (f_)
		std::fclose(f_);
	f_ = f;
	return Status::ok();
}

void Log::write(const char* level, const std::string& line)
{
	char stamp[32];
	const std::time_t now = std::time(nullptr);
	struct tm tm;
	gmtime_r(&now, &tm);
	std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
	std::lock_guard<std::mutex> lock(mu_);
	std::FILE* out = f_ ? f_ : stderr;
	std::fprintf(out, "%s dlsched-ingestd: %s%s\n", stamp, level, line.c_str());
	std::fflush(out);
}

}  // namespace dlsched::ingest
