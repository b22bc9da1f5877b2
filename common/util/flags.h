// Command-line flags given twice, or together with a flag they exclude: one rule for every C++
// tool (dlsched-sim, dlsched-train, dlsched-db, dlsched-replay, dlsched-emu-train, dlsched-ingestd).
// A flag takes effect once; giving it again is a mistake to name, not a value to overwrite
// silently, unless the tool documents it as repeatable (dlsched-sim --set).
#ifndef DLSCHED_UTIL_FLAGS_H
#define DLSCHED_UTIL_FLAGS_H

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "util/status.h"

namespace dlsched {

class FlagUse {
public:
	// `repeatable`: the flags the tool's --help and man page say may be given more than once.
	explicit FlagUse(std::vector<std::string> repeatable = {}) : repeatable_(std::move(repeatable)) {}

	// Records `flag` (as typed: "--seed"); an error naming it when it was given before and is not
	// repeatable.
	[[nodiscard]] Status note(const std::string& flag)
	{
		const bool again = given(flag);
		seen_.push_back(flag);
		if (again && std::find(repeatable_.begin(), repeatable_.end(), flag) == repeatable_.end())
			return invalid_argument(flag + " is given twice: give it once");
		return Status::ok();
	}

	bool given(const std::string& flag) const
	{
		return std::find(seen_.begin(), seen_.end(), flag) != seen_.end();
	}

	// An error naming the first two of `flags` that were both given: they exclude each other.
	[[nodiscard]] Status exclusive(std::initializer_list<const char*> flags) const
	{
		const char* first = nullptr;
		for (const char* f : flags) {
			if (!given(f))
				continue;
			if (first)
				return invalid_argument(std::string(first) + " and " + f +
							" exclude each other: give one");
			first = f;
		}
		return Status::ok();
	}

private:
	std::vector<std::string> repeatable_;
	std::vector<std::string> seen_;
};

}  // namespace dlsched

#endif
