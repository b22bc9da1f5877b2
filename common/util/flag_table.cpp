#include "util/flag_table.h"

#include <cstdio>

#include "util/csv.h"

namespace dlsched {

namespace {

std::string range_text(double min, double max)
{
	char buf[96];
	if (min == kNoMin)
		std::snprintf(buf, sizeof buf, "at most %g", max);
	else if (max == kNoMax)
		std::snprintf(buf, sizeof buf, "at least %g", min);
	else
		std::snprintf(buf, sizeof buf, "%g to %g", min, max);
	return buf;
}

// As range_text, digit for digit ("0 to 2147483647", not "0 to 2.14748e+09").
std::string whole_range_text(long long min, long long max)
{
	constexpr long long kLow = std::numeric_limits<long long>::min();
	constexpr long long kHigh = std::numeric_limits<long long>::max();
	if (min == kLow)
		return "at most " + std::to_string(max);
	if (max == kHigh)
		return "at least " + std::to_string(min);
	return std::to_string(min) + " to " + std::to_string(max);
}

}  // namespace

FlagSpec string_flag(std::string name, std::string metavar, std::string help, std::string* dest)
{
	return {std::move(name),
		std::move(metavar),
		std::move(help),
		[dest](const std::string& v) {
			*dest = v;
			return Status::ok();
		},
		false,
		""};
}

FlagSpec value_flag(std::string name, std::string metavar, std::string help,
		    std::function<Status(const std::string&)> set)
{
	return {std::move(name), std::move(metavar), std::move(help), std::move(set), false, ""};
}

Status number_value(const std::string& v, double min, double max, double& out)
{
	double d = 0;
	if (!parse_number(v, d))
		return invalid_argument("'" + v + "' is not a number");
	if (!(d >= min && d <= max))
		return invalid_argument(v + ": give " + range_text(min, max));
	out = d;
	return Status::ok();
}

FlagSpec number_flag(std::string name, std::string metavar, std::string help, double* dest, double min,
		     double max)
{
	return {std::move(name),
		std::move(metavar),
		std::move(help),
		[dest, min, max](const std::string& v) { return number_value(v, min, max, *dest); },
		false,
		""};
}

Status whole_value(const std::string& v, long long min, long long max, long long& out)
{
	long long n = 0;
	if (!parse_integer(v, n))
		return invalid_argument("'" + v + "' is not a whole number");
	if (n < min || n > max)
		return invalid_argument(v + ": give " + whole_range_text(min, max));
	out = n;
	return Status::ok();
}

FlagSpec integer_flag(std::string name, std::string metavar, std::string help, long long* dest, long long min,
		      long long max)
{
	return whole_flag(std::move(name), std::move(metavar), std::move(help), dest, min, max);
}

FlagSpec int_flag(std::string name, std::string metavar, std::string help, int* dest, int min, int max)
{
	return whole_flag(std::move(name), std::move(metavar), std::move(help), dest, min, max);
}

FlagSpec switch_flag(std::string name, std::string help, bool* dest, std::string alias)
{
	return {std::move(name),
		"",
		std::move(help),
		[dest](const std::string&) {
			*dest = true;
			return Status::ok();
		},
		false,
		std::move(alias)};
}

const FlagSpec* FlagTable::find(const std::string& name) const
{
	for (const FlagSpec& s : specs_)
		if (s.name == name || (!s.alias.empty() && s.alias == name))
			return &s;
	return nullptr;
}

Status FlagTable::parse(int argc, char** argv, int first, std::vector<std::string>* positional)
{
	for (int i = first; i < argc; ++i) {
		std::string a = argv[i];
		if (a == "-h" || a == "--help") {
			help_ = true;
			return Status::ok();
		}
		if (a == "--" && positional) {
			for (++i; i < argc; ++i)
				positional->push_back(argv[i]);
			break;
		}
		if (a.size() < 2 || a[0] != '-') {
			if (!positional)
				return invalid_argument("unexpected argument '" + a + "'");
			positional->push_back(a);
			continue;
		}
		std::string value;
		bool inline_value = false;
		if (const auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
			value = a.substr(eq + 1);
			a.resize(eq);
			inline_value = true;
		}
		const FlagSpec* s = find(a);
		if (!s)
			return invalid_argument("unknown option '" + a + "'");
		if (Status st = use_.note(s->name); !st.is_ok() && !s->repeatable)
			return st;
		if (s->metavar.empty()) {
			if (inline_value)
				return invalid_argument(s->name + " takes no value");
		} else if (!inline_value) {
			if (i + 1 >= argc)
				return invalid_argument(s->name + " needs a value (" + s->metavar + ")");
			value = argv[++i];
		}
		// The error names the flag once: a parser shared with a config key or another tool may name
		// it already ("--estimates 'x': expected oracle or predicted").
		if (Status st = s->set(value); !st.is_ok())
			return invalid_argument(st.message().rfind(s->name, 0) == 0
							? st.message()
							: s->name + " " + st.message());
	}
	return Status::ok();
}

std::string FlagTable::options_help(std::size_t column) const
{
	std::string out;
	for (const FlagSpec& s : specs_) {
		std::string head = "  " + (s.alias.empty() ? "" : s.alias + ", ") + s.name +
				   (s.metavar.empty() ? "" : " " + s.metavar);
		if (head.size() + 1 > column)
			head += "\n" + std::string(column, ' ');
		else
			head += std::string(column - head.size(), ' ');
		std::string help = s.help;
		for (std::size_t p = 0; (p = help.find('\n', p)) != std::string::npos; p += column + 1)
			help.insert(p + 1, std::string(column, ' '));
		out += head + help + "\n";
	}
	return out;
}

}  // namespace dlsched
