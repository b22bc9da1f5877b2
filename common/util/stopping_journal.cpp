#include "util/stopping_journal.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace dlsched {

Result<std::map<std::uint32_t, StoppingJob>> read_stopping_journal(const std::string& path)
{
	std::map<std::uint32_t, StoppingJob> out;
	std::ifstream in(path);
	if (!in) {
		if (errno == ENOENT)
			return out;
		return io_error("cannot read sched/dlsched's stopping journal " + path + ": " +
				std::strerror(errno));
	}
	std::string line;
	while (std::getline(in, line)) {
		std::istringstream words(line);
		std::string kind;
		long long id = 0;
		if (!(words >> kind >> id) || id <= 0 || id > 0xffffffffLL)
			continue;
		const auto job = static_cast<std::uint32_t>(id);
		if (kind == "del") {
			out.erase(job);
		} else if (kind == "v2" || kind == "v1") {
			StoppingJob s;
			if (words >> s.requested >> s.deadline)
				out[job] = s;
		}
	}
	if (in.bad())
		return io_error("cannot read sched/dlsched's stopping journal " + path + ": " +
				std::strerror(errno));
	return out;
}

}  // namespace dlsched
