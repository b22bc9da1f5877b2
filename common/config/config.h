// dlsched.conf: Slurm-style `Key=Value` configuration, with every key, type and default in one table.
//
// Syntax (as slurm.conf): one `Key=Value` per line (several separated by whitespace are allowed),
// `#` starts a comment, keys are case-insensitive, values may be double-quoted. An unknown key or a
// bad value is an error naming the file and line ("dlsched.conf:12: unknown key 'Foo'").
#ifndef DLSCHED_CONFIG_CONFIG_H
#define DLSCHED_CONFIG_CONFIG_H

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace dlsched {

enum class ConfigType { kString, kInt, kDouble, kBool, kDoubleList };

struct ConfigKey {
	const char* name;  // CamelCase as documented
	ConfigType type;
	const char* default_value;  // as it would be written in the file
	double min;                 // numeric range (inclusive); ignored for strings and bools
	double max;
	const char* help;  // one line, shown by --print-config and in dlsched.conf(5)
	// Words the value may be ('|' between them, case-insensitive): for a string, the only values
	// allowed (null: any); for a number, allowed instead of a number ("RestartCost=model").
	const char* words = nullptr;
	// Values refused with a reason of their own, before the words are checked ('|' between them,
	// case-insensitive), and that reason: "dl2|dual-agent" for ModelFallback=, whose words are the
	// heuristic orderings (a learned ordering cannot stand in for a learned one).
	const char* refused = nullptr;
	const char* refused_why = nullptr;
	// A number that may be written as a percentage ("2%" is 0.02): GuardMargin=.
	bool percent = false;
};

// The one table of every key dlsched knows (config/keys.cpp).
const std::vector<ConfigKey>& config_keys();
const ConfigKey* find_config_key(std::string_view name);

class Config {
public:
	Config();  // every key at its default

	static Result<Config> load_file(const std::string& path);
	static Result<Config> parse(std::string_view text, const std::string& source_name);
	// Only `keys` (canonical names), leniently: what a file that does not load as a whole still says
	// of them (the safety rules' settings when Policy= has a typo). Every other key, and every line,
	// key or value that would be an error, is passed over and named in *skipped; a key given twice
	// keeps its first value. Never fails: a key it cannot read stays at its default.
	static Config parse_only(std::string_view text, const std::string& source_name,
				 const std::vector<std::string_view>& keys,
				 std::vector<std::string>* skipped);

	// Sets one key after validating it; `where` names the origin in error messages
	// ("dlsched.conf:12", "--config-set").
	Status set(std::string_view key, std::string_view value, const std::string& where);

	// Typed getters. The key must exist in the table with that type (a programming error otherwise).
	std::string get_string(std::string_view key) const;
	// The value of any key as written (or its default); empty for an unknown key.
	std::string get_text(std::string_view key) const;
	long get_int(std::string_view key) const;
	double get_double(std::string_view key) const;
	bool get_bool(std::string_view key) const;
	std::vector<double> get_double_list(std::string_view key) const;
	// The value in lower case when it is one of the key's words, else "" (a number, or no words).
	std::string get_word(std::string_view key) const;
	// True when the key was set explicitly (file or set()), not left at its default.
	bool is_set(std::string_view key) const;
	// Where the key was set ("dlsched.conf:12", "--policy"); empty when it is at its default.
	std::string origin(std::string_view key) const;

	// The effective configuration in dlsched.conf syntax, with each key's help as a comment and the
	// origin of values that are not defaults.
	std::string dump() const;

private:
	static Result<Config> parse_impl(std::string_view text, const std::string& source_name,
					 const std::vector<std::string_view>* only,
					 std::vector<std::string>* skipped);

	struct Entry {
		std::string value;
		std::string origin;  // empty: default
	};
	std::map<std::string, Entry> values_;  // canonical key name -> value
};

}  // namespace dlsched

#endif
