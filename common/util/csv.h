// A small CSV reader that keeps line and column numbers for error messages ("file:line:column").
// Handles double-quoted fields ("" inside quotes is a quote), CRLF, blank lines (skipped) and
// '#' comment lines at the start of a line.
#ifndef DLSCHED_UTIL_CSV_H
#define DLSCHED_UTIL_CSV_H

#include <istream>
#include <string>
#include <vector>

#include "util/status.h"

namespace dlsched {

struct CsvField {
	std::string text;
	std::size_t column = 1;  // 1-based character column where the field starts
};

class CsvReader {
public:
	CsvReader(std::istream& in, std::string source) : in_(in), source_(std::move(source)) {}

	// Reads the next non-blank record into `fields`. Returns false at end of input. A malformed line
	// (unterminated quote) sets `error` and returns true with fields empty.
	bool next(std::vector<CsvField>& fields, Status& error);

	std::size_t line() const { return line_; }
	const std::string& source() const { return source_; }
	// "source:line:column: " prefix for messages.
	std::string where(std::size_t column) const;

private:
	std::istream& in_;
	std::string source_;
	std::size_t line_ = 0;
};

// Strict numeric conversions of a whole field (no trailing garbage, finite values).
bool parse_number(const std::string& text, double& out);
bool parse_integer(const std::string& text, long long& out);

}  // namespace dlsched

#endif
