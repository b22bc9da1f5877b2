#include "config/config.h"

#include "util/csv.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <strings.h>

namespace dlsched {

namespace {

std::string lower(std::string_view s)
{
	std::string out(s);
	for (char& c : out)
		c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
	return out;
}

// Edit distance, for "did you mean" hints.
std::size_t distance(const std::string& a, const std::string& b)
{
	std::vector<std::size_t> row(b.size() + 1);
	for (std::size_t j = 0; j <= b.size(); ++j)
		row[j] = j;
	for (std::size_t i = 1; i <= a.size(); ++i) {
		std::size_t prev = row[0];
		row[0] = i;
		for (std::size_t j = 1; j <= b.size(); ++j) {
			std::size_t cur = row[j];
			row[j] =
				std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
			prev = cur;
		}
	}
	return row[b.size()];
}

std::string suggestion(std::string_view key)
{
	const ConfigKey* best = nullptr;
	std::size_t best_d = 4;  // more than 3 edits away is no longer a typo
	for (const ConfigKey& k : config_keys()) {
		std::size_t d = distance(lower(key), lower(k.name));
		if (d < best_d) {
			best_d = d;
			best = &k;
		}
	}
	return best ? std::string(" (did you mean '") + best->name + "'?)"
		    : std::string(" (see dlsched.conf(5))");
}

bool parse_double(std::string_view text, double& out)
{
	return parse_number(std::string(text), out);
}

bool parse_bool(std::string_view text, bool& out)
{
	std::string s = lower(text);
	if (s == "yes" || s == "true" || s == "1" || s == "on") {
		out = true;
		return true;
	}
	if (s == "no" || s == "false" || s == "0" || s == "off") {
		out = false;
		return true;
	}
	return false;
}

std::string format_range(const ConfigKey& k)
{
	std::ostringstream os;
	os << "[" << k.min << ", " << k.max << "]";
	return os.str();
}

// Whether `value` is one of `words` ("a|b|c"), case-insensitively.
bool is_word(const char* words, std::string_view value)
{
	if (!words)
		return false;
	const std::string v = lower(value);
	std::string_view w(words);
	std::size_t start = 0;
	while (start <= w.size()) {
		std::size_t bar = w.find('|', start);
		if (lower(w.substr(start, bar == std::string_view::npos ? std::string_view::npos
									: bar - start)) == v)
			return true;
		if (bar == std::string_view::npos)
			break;
		start = bar + 1;
	}
	return false;
}

std::string words_list(const char* words)
{
	std::string s(words);
	std::replace(s.begin(), s.end(), '|', ',');
	return s;
}

// Checks one value against its key's type and range; returns the reason it is bad, or "".
std::string validate(const ConfigKey& k, std::string_view value)
{
	if (k.refused && is_word(k.refused, value))
		return "'" + std::string(value) + "' " + k.refused_why +
		       (k.words ? std::string(": one of ") + words_list(k.words) : std::string());
	if (k.words && is_word(k.words, value))
		return "";
	switch (k.type) {
		case ConfigType::kString:
			if (k.words)
				return "'" + std::string(value) + "' is not one of " + words_list(k.words);
			return "";
		case ConfigType::kBool: {
			bool b;
			return parse_bool(value, b) ? "" : "'" + std::string(value) + "' is not yes or no";
		}
		case ConfigType::kInt:
		case ConfigType::kDouble: {
			double d;
			if (!parse_double(value, d))
				return "'" + std::string(value) + "' is not a number" +
				       (k.words ? std::string(" or one of ") + words_list(k.words)
						: std::string());
			if (k.type == ConfigType::kInt && d != std::floor(d))
				return "'" + std::string(value) + "' is not an integer";
			if (d < k.min || d > k.max)
				return "'" + std::string(value) + "' is out of range " + format_range(k);
			return "";
		}
		case ConfigType::kDoubleList: {
			std::string s(value);
			std::size_t start = 0;
			double last = -INFINITY;
			if (s.empty())
				return "";
			while (start <= s.size()) {
				std::size_t comma = s.find(',', start);
				std::string item =
					s.substr(start, comma == std::string::npos ? std::string::npos
										   : comma - start);
				double d;
				if (!parse_double(item, d))
					return "'" + item + "' in '" + s + "' is not a number";
				if (d < k.min || d > k.max)
					return "'" + item + "' is out of range " + format_range(k);
				if (d <= last)
					return "'" + s + "' must be strictly increasing";
				last = d;
				if (comma == std::string::npos)
					break;
				start = comma + 1;
			}
			return "";
		}
	}
	return "unknown type";
}

const ConfigKey& must_find(std::string_view key, ConfigType type)
{
	const ConfigKey* k = find_config_key(key);
	assert(k && "config key not in the table (config/keys.cpp)");
	assert(k->type == type && "config key read with the wrong type");
	(void)type;
	return *k;
}

}  // namespace

Config::Config()
{
	for (const ConfigKey& k : config_keys())
		values_[k.name] = Entry{k.default_value, ""};
}

Status Config::set(std::string_view key, std::string_view value, const std::string& where)
{
	const ConfigKey* k = find_config_key(key);
	if (!k)
		return invalid_argument(where + ": unknown key '" + std::string(key) + "'" + suggestion(key));
	std::string text(value);
	if (k->percent && !text.empty() && text.back() == '%') {
		double d;
		if (!parse_double(std::string_view(text).substr(0, text.size() - 1), d))
			return invalid_argument(where + ": " + k->name + ": '" + text +
						"' is not a number or a percentage");
		char buf[40];
		std::snprintf(buf, sizeof buf, "%.15g", d / 100);
		text = buf;
	}
	std::string why = validate(*k, text);
	if (!why.empty())
		return invalid_argument(where + ": " + k->name + ": " + why);
	values_[k->name] = Entry{text, where};
	return Status::ok();
}

Result<Config> Config::parse(std::string_view text, const std::string& source_name)
{
	return parse_impl(text, source_name, nullptr, nullptr);
}

Config Config::parse_only(std::string_view text, const std::string& source_name,
			  const std::vector<std::string_view>& keys, std::vector<std::string>* skipped)
{
	std::vector<std::string> local;
	Result<Config> c = parse_impl(text, source_name, &keys, skipped ? skipped : &local);
	return c.is_ok() ? std::move(c).value() : Config();
}

Result<Config> Config::parse_impl(std::string_view text, const std::string& source_name,
				  const std::vector<std::string_view>* only,
				  std::vector<std::string>* skipped)
{
	// With `only`, every error is skipped (noted in *skipped): the rest of a line that does not
	// read as Key=Value, a key not in `only`, a bad value, a key given twice (the first stands).
	auto in_only = [only](const ConfigKey* k) {
		if (!k)
			return false;
		for (std::string_view o : *only)
			if (o == k->name)
				return true;
		return false;
	};
	Config c;
	std::size_t line_no = 0;
	std::size_t pos = 0;
	while (pos <= text.size()) {
		std::size_t nl = text.find('\n', pos);
		std::string_view line =
			text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
		pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
		++line_no;
		const std::string where = source_name + ":" + std::to_string(line_no);
		std::size_t i = 0;
		while (i < line.size()) {
			while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i])))
				++i;
			if (i >= line.size() || line[i] == '#')
				break;
			std::size_t key_start = i;
			while (i < line.size() && line[i] != '=' &&
			       !std::isspace(static_cast<unsigned char>(line[i])))
				++i;
			std::string_view key = line.substr(key_start, i - key_start);
			if (i >= line.size() || line[i] != '=') {
				if (only) {
					skipped->push_back(where + ": expected Key=Value, found '" +
							   std::string(key) + "'");
					break;
				}
				return parse_error(where + ": expected Key=Value, found '" +
						   std::string(key) + "'");
			}
			++i;  // '='
			std::string value;
			if (i < line.size() && line[i] == '"') {
				std::size_t close = line.find('"', i + 1);
				if (close == std::string_view::npos) {
					if (only) {
						skipped->push_back(where + ": " + std::string(key) +
								   ": unterminated quoted value");
						break;
					}
					return parse_error(where + ": " + std::string(key) +
							   ": unterminated quoted value");
				}
				value = std::string(line.substr(i + 1, close - i - 1));
				i = close + 1;
			} else {
				std::size_t v = i;
				while (i < line.size() &&
				       !std::isspace(static_cast<unsigned char>(line[i])) && line[i] != '#')
					++i;
				value = std::string(line.substr(v, i - v));
			}
			// A key given twice with two values: which one the site meant is a guess, so neither
			// the plugins nor dlsched-sim --print-config pick one.
			const ConfigKey* k = find_config_key(key);
			if (only) {
				if (!in_only(k))
					continue;
				if (c.is_set(k->name)) {
					if (c.get_text(k->name) != value)
						skipped->push_back(where + ": " + k->name + "=" + value +
								   " ignored: " + k->name + "=" +
								   c.get_text(k->name) + " at " +
								   c.origin(k->name));
					continue;
				}
				Status st = c.set(key, value, where);
				if (!st.is_ok())
					skipped->push_back(st.message());
				continue;
			}
			if (k && c.is_set(k->name) && c.get_text(k->name) != value)
				return invalid_argument(where + ": " + k->name + "=" + value +
							" conflicts with " + k->name + "=" +
							c.get_text(k->name) + " at " + c.origin(k->name) +
							": give the key once");
			Status st = c.set(key, value, where);
			if (!st.is_ok())
				return st;
		}
	}
	return c;
}

Result<Config> Config::load_file(const std::string& path)
{
	std::ifstream in(path, std::ios::binary);
	if (!in)
		return not_found(path + ": cannot open configuration file (" + std::strerror(errno) +
				 "); give an existing dlsched.conf, or none to use the defaults");
	std::ostringstream ss;
	ss << in.rdbuf();
	return parse(ss.str(), path);
}

std::string Config::get_string(std::string_view key) const
{
	return values_.at(must_find(key, ConfigType::kString).name).value;
}

std::string Config::get_text(std::string_view key) const
{
	const ConfigKey* k = find_config_key(key);
	return k ? values_.at(k->name).value : std::string();
}

long Config::get_int(std::string_view key) const
{
	return std::strtol(values_.at(must_find(key, ConfigType::kInt).name).value.c_str(), nullptr, 10);
}

double Config::get_double(std::string_view key) const
{
	return std::strtod(values_.at(must_find(key, ConfigType::kDouble).name).value.c_str(), nullptr);
}

bool Config::get_bool(std::string_view key) const
{
	bool b = false;
	parse_bool(values_.at(must_find(key, ConfigType::kBool).name).value, b);
	return b;
}

std::vector<double> Config::get_double_list(std::string_view key) const
{
	const std::string& s = values_.at(must_find(key, ConfigType::kDoubleList).name).value;
	std::vector<double> out;
	std::size_t start = 0;
	while (!s.empty() && start <= s.size()) {
		std::size_t comma = s.find(',', start);
		out.push_back(std::strtod(s.substr(start, comma - start).c_str(), nullptr));
		if (comma == std::string::npos)
			break;
		start = comma + 1;
	}
	return out;
}

std::string Config::get_word(std::string_view key) const
{
	const ConfigKey* k = find_config_key(key);
	assert(k && "config key not in the table (config/keys.cpp)");
	const std::string& v = values_.at(k->name).value;
	return is_word(k->words, v) ? lower(v) : std::string();
}

bool Config::is_set(std::string_view key) const
{
	const ConfigKey* k = find_config_key(key);
	return k && !values_.at(k->name).origin.empty();
}

std::string Config::origin(std::string_view key) const
{
	const ConfigKey* k = find_config_key(key);
	return k ? values_.at(k->name).origin : std::string();
}

std::string Config::dump() const
{
	std::ostringstream os;
	os << "# dlsched effective configuration\n";
	for (const ConfigKey& k : config_keys()) {
		const Entry& e = values_.at(k.name);
		os << "# " << k.help;
		if (!e.origin.empty())
			os << " (set in " << e.origin << ")";
		os << "\n";
		bool quote = e.value.empty() || e.value.find_first_of(" \t#") != std::string::npos;
		os << k.name << "=" << (quote ? "\"" + e.value + "\"" : e.value) << "\n";
	}
	return os.str();
}

}  // namespace dlsched
