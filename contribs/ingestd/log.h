// The service's log: one line per event, with a UTC timestamp, to a file (--log-file, reopened on
// SIGHUP for logrotate) or to standard error. Safe to call from the HTTP thread and the main thread.
#ifndef DLSCHED_INGESTD_LOG_H
#define DLSCHED_INGESTD_LOG_H

#include <cstdio>
#include <mutex>
#include <string>

#include "util/status.h"

namespace dlsched::ingest {

class Log {
public:
	Log() = default;
	~Log();
	Log(const Log&) = delete;
	Log& operator=(const Log&) = delete;

	// Appends to `path`; "" logs to standard error.
	Status open(const std::string& path);
	// Opens the file again (after logrotate moved it); keeps the old one on failure.
	Status reopen();
	void set_verbose(bool v) { verbose_ = v; }
	bool verbose() const { return verbose_; }

	void info(const std::string& line) { write("", line); }
	void error(const std::string& line) { write("error: ", line); }
	// Only with -v.
	void debug(const std::string& line)
	{
		if (verbose_)
			write("", line);
	}

private:
	void write(const char* level, const std::string& line);

	std::mutex mu_;
	std::FILE* f_ = nullptr;  // nullptr: stderr
	std::string path_;
	bool verbose_ = false;
};

}  // namespace dlsched::ingest

#endif
