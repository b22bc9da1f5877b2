// json::Value: a small reference-counted RAII handle over a jansson json_t. Objects keep insertion
// order when dumped (JSON_PRESERVE_ORDER), so output is deterministic and readable.
#ifndef DLSCHED_JSON_JSON_H
#define DLSCHED_JSON_JSON_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

typedef struct json_t json_t;

namespace dlsched::json {

class Value {
public:
	Value() = default;  // null handle (not JSON null): is_valid() == false
	~Value();
	Value(const Value& o);
	Value(Value&& o) noexcept : j_(o.j_) { o.j_ = nullptr; }
	Value& operator=(Value o) noexcept;

	static Value object();
	static Value array();
	static Value string(const std::string& s);
	static Value number(double d);  // NaN and infinities become null
	static Value integer(std::int64_t i);
	static Value boolean(bool b);
	static Value null();

	// Parses one JSON document; errors say "source:line:column: message".
	static Result<Value> parse(const std::string& text, const std::string& source);

	bool is_valid() const { return j_ != nullptr; }
	bool is_object() const;
	bool is_array() const;
	bool is_string() const;
	bool is_number() const;
	bool is_null() const;

	// Objects.
	Value& set(const std::string& key, Value v);
	Value get(const std::string& key) const;  // invalid Value when absent
	// Arrays.
	Value& push_back(Value v);
	std::size_t size() const;  // array or object size
	Value at(std::size_t i) const;

	std::optional<std::string> as_string() const;
	std::optional<double> as_number() const;  // integers and reals
	std::optional<bool> as_bool() const;

	// Keys of an object, in document order.
	std::vector<std::string> keys() const;

	// Reals with 10 significant digits, or with `exact` 17: every double reads back bit for bit.
	std::string dump(int indent = 2, bool exact = false) const;

private:
	explicit Value(json_t* owned) : j_(owned) {}
	json_t* j_ = nullptr;
};

}  // namespace dlsched::json

#endif
