// Command-line flags from one declarative table: each flag's name, value, range, where its value goes
// and its help line, for every C++ tool. The table parses argv (--flag VALUE and --flag=VALUE), refuses
// an unknown flag, a missing or malformed value, a value out of range and a flag given twice (FlagUse's
// rule: unless repeatable), each with a message naming the flag; it also writes the options part of
// --help from the same entries, so that what a tool accepts and what it says it accepts cannot drift.
#ifndef DLSCHED_UTIL_FLAG_TABLE_H
#define DLSCHED_UTIL_FLAG_TABLE_H

#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "util/flags.h"
#include "util/status.h"

namespace dlsched {

struct FlagSpec {
	std::string name;     // "--epochs"
	std::string metavar;  // "N"; empty: a switch (no value)
	std::string help;     // the --help line (may hold '\n' for more lines)
	// Takes the value (a switch: ""); an error's message follows the flag's name.
	std::function<Status(const std::string&)> set;
	bool repeatable = false;
	std::string alias;  // "-v" for "--verbose"
};

constexpr double kNoMin = -std::numeric_limits<double>::infinity();
constexpr double kNoMax = std::numeric_limits<double>::infinity();

FlagSpec string_flag(std::string name, std::string metavar, std::string help, std::string* dest);
// A value that `set` takes apart itself (a word or a number, a list): its error follows the name.
FlagSpec value_flag(std::string name, std::string metavar, std::string help,
		    std::function<Status(const std::string&)> set);
// A number in [min, max] into `out`, or why not ("'x' is not a number", "2: give 0 to 1"): for a
// flag whose value is a number or a word (--restart-cost S|model).
[[nodiscard]] Status number_value(const std::string& v, double min, double max, double& out);
// A number in [min, max] ("--noise 2: give 0 to 1").
FlagSpec number_flag(std::string name, std::string metavar, std::string help, double* dest,
		     double min = kNoMin, double max = kNoMax);
// A whole number in [min, max].
FlagSpec integer_flag(std::string name, std::string metavar, std::string help, long long* dest,
		      long long min = std::numeric_limits<long long>::min(),
		      long long max = std::numeric_limits<long long>::max());
FlagSpec int_flag(std::string name, std::string metavar, std::string help, int* dest,
		  int min = std::numeric_limits<int>::min(), int max = std::numeric_limits<int>::max());
// A whole number in [min, max] into `out`, or why not ("'1.5' is not a whole number", "0: give 1 to
// 4096").
[[nodiscard]] Status whole_value(const std::string& v, long long min, long long max, long long& out);
// A whole number in [min, max] into any arithmetic type that holds the range (std::size_t, unsigned,
// a double counted in whole units).
template <class T>
FlagSpec whole_flag(std::string name, std::string metavar, std::string help, T* dest, long long min,
		    long long max)
{
	return {std::move(name),
		std::move(metavar),
		std::move(help),
		[dest, min, max](const std::string& v) {
			long long n = 0;
			Status st = whole_value(v, min, max, n);
			if (st.is_ok())
				*dest = static_cast<T>(n);
			return st;
		},
		false,
		""};
}
FlagSpec switch_flag(std::string name, std::string help, bool* dest, std::string alias = "");

class FlagTable {
public:
	explicit FlagTable(std::vector<FlagSpec> specs) : specs_(std::move(specs)) {}

	// Parses argv[first..]. Arguments that are not flags go to `positional` when given (else they are
	// an error), as does everything after "--". -h and --help set help_asked() and stop the parse.
	[[nodiscard]] Status parse(int argc, char** argv, int first = 1,
				   std::vector<std::string>* positional = nullptr);

	bool help_asked() const { return help_; }
	bool given(const std::string& name) const { return use_.given(name); }
	[[nodiscard]] Status exclusive(std::initializer_list<const char*> flags) const
	{
		return use_.exclusive(flags);
	}

	// One line per flag: "  --epochs N              help" (help continued on further lines).
	std::string options_help(std::size_t column = 26) const;

private:
	const FlagSpec* find(const std::string& name) const;

	std::vector<FlagSpec> specs_;
	FlagUse use_;
	bool help_ = false;
};

}  // namespace dlsched

#endif
