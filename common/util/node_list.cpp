#include "util/node_list.h"

#include <cstdlib>

namespace dlsched {

namespace {
bool fail(std::vector<std::string>& out)
{
	out.clear();
	return false;
}
}  // namespace

bool expand_node_list(const std::string& list, std::vector<std::string>& out)
{
	out.clear();
	std::size_t i = 0;
	while (i < list.size()) {
		const std::size_t j = list.find_first_of(",[", i);
		const std::string prefix = list.substr(i, j == std::string::npos ? std::string::npos : j - i);
		if (j == std::string::npos || list[j] == ',') {
			if (!prefix.empty())
				out.push_back(prefix);
			i = j == std::string::npos ? list.size() : j + 1;
			continue;
		}
		const std::size_t close = list.find(']', j);
		if (close == std::string::npos)
			return fail(out);
		const std::string ranges = list.substr(j + 1, close - j - 1);
		std::size_t k = 0;
		while (k <= ranges.size()) {
			std::size_t comma = ranges.find(',', k);
			if (comma == std::string::npos)
				comma = ranges.size();
			const std::string r = ranges.substr(k, comma - k);
			k = comma + 1;
			const std::size_t dash = r.find('-');
			char* end = nullptr;
			const long a = std::strtol(r.c_str(), &end, 10);
			if (r.empty() || end == r.c_str() || r[0] == '-')
				return fail(out);
			long b = a;
			if (dash != std::string::npos) {
				char* end2 = nullptr;
				b = std::strtol(r.c_str() + dash + 1, &end2, 10);
				if (end2 == r.c_str() + dash + 1)
					return fail(out);
			}
			if (b < a || b - a > 100000)
				return fail(out);
			const std::size_t width =
				dash == std::string::npos ? r.size() : dash;  // zero padding
			for (long n = a; n <= b; ++n) {
				std::string digits = std::to_string(n);
				if (digits.size() < width)
					digits.insert(0, width - digits.size(), '0');
				out.push_back(prefix + digits);
			}
		}
		i = close + 1;
		if (i < list.size() && list[i] == ',')
			++i;
	}
	return true;
}

}  // namespace dlsched
