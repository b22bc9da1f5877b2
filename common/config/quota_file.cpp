#include "config/quota_file.h"

#include <cmath>
#include <fstream>
#include <map>

#include "util/csv.h"

namespace dlsched {

namespace {

std::string trim(std::string s)
{
	s.erase(0, s.find_first_not_of(" \t\r"));
	s.erase(s.find_last_not_of(" \t\r") + 1);
	return s;
}

}  // namespace

Result<std::vector<AccountQuota>> read_quota_file(const std::string& path)
{
	std::ifstream in(path);
	if (!in)
		return not_found(path + ": cannot open the quota file (give `account,gpus` lines)");
	std::vector<AccountQuota> out;
	std::map<std::string, int> line_of;
	std::string line;
	for (int n = 1; std::getline(in, line); ++n) {
		const std::string where = path + ":" + std::to_string(n);
		const std::size_t hash = line.find('#');
		const std::string text = trim(hash == std::string::npos ? line : line.substr(0, hash));
		if (text.empty())
			continue;
		const std::size_t comma = text.find(',');
		if (comma == std::string::npos || text.find(',', comma + 1) != std::string::npos)
			return invalid_argument(where + ": '" + text + "' is not `account,gpus` (one comma)");
		const std::string name = trim(text.substr(0, comma)), count = trim(text.substr(comma + 1));
		if (name == "account" && count == "gpus" && out.empty())
			continue;  // the header
		double g = 0;
		if (name.empty())
			return invalid_argument(where +
						": no account name before the comma (write `account,gpus`)");
		if (!parse_number(count, g) || !(g >= 0) || !std::isfinite(g))
			return invalid_argument(where + ": '" + count +
						"' is not a number of GPUs >= 0 for account '" + name + "'");
		if (line_of.count(name))
			return invalid_argument(where + ": account '" + name +
						"' is listed twice (first at line " +
						std::to_string(line_of[name]) + "): give each account once");
		line_of[name] = n;
		out.push_back({name, g});
	}
	return out;
}

}  // namespace dlsched
