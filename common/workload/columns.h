// Reading a CSV whose header names its columns: shared by the Philly, Pollux and native readers.
// Internal to common/workload/.
#ifndef DLSCHED_WORKLOAD_COLUMNS_H
#define DLSCHED_WORKLOAD_COLUMNS_H

#include <map>
#include <string>
#include <vector>

#include "util/csv.h"
#include "workload/trace.h"

namespace dlsched {

class ColumnReader {
public:
	// `known`: every column the format defines; `required`: those that must be present. With
	// `strict`, a column not in `known` is an error.
	ColumnReader(CsvReader& csv, std::vector<std::string> known, std::vector<std::string> required,
		     bool strict)
	    : csv_(csv), known_(std::move(known)), required_(std::move(required)), strict_(strict)
	{
	}

	Status read_header();
	// Next record; false at the end. A record with the wrong number of fields is an error.
	bool next(Status& error);

	bool has(const std::string& col) const { return index_.count(col) != 0; }
	// The field's text ("" if the column is absent).
	const std::string& text(const std::string& col) const;
	// Typed fields: an error names file:line:column and says what was expected; a value outside
	// `range` is an error that says the range.
	Status number(const std::string& col, double& out, bool allow_empty, const TraceRange& range) const;
	Status integer(const std::string& col, long long& out, bool allow_empty,
		       const TraceRange& range) const;
	std::string where() const { return csv_.source() + ":" + std::to_string(csv_.line()); }
	// "file:line:column: " of the column's field in the current record (column 1 if it is absent).
	std::string where_of(const std::string& col) const { return at(col); }

private:
	std::string at(const std::string& col) const;
	CsvReader& csv_;
	std::vector<std::string> known_;
	std::vector<std::string> required_;
	bool strict_;
	std::map<std::string, std::size_t> index_;
	std::vector<CsvField> fields_;
	std::size_t header_size_ = 0;
};

}  // namespace dlsched

#endif
