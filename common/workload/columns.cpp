#include "workload/columns.h"

#include <algorithm>
#include <cstdlib>

namespace dlsched {

Status ColumnReader::read_header()
{
	std::vector<CsvField> header;
	Status err;
	if (!csv_.next(header, err))
		return parse_error(csv_.source() +
				   ": empty file (expected a header line naming the columns)");
	if (!err.is_ok())
		return err;
	for (std::size_t i = 0; i < header.size(); ++i) {
		const std::string& name = header[i].text;
		if (std::find(known_.begin(), known_.end(), name) == known_.end()) {
			if (strict_) {
				std::string list;
				for (const auto& k : known_)
					list += (list.empty() ? "" : ", ") + k;
				return parse_error(csv_.where(header[i].column) + "unknown column '" + name +
						   "' (known: " + list + ")");
			}
			continue;
		}
		if (index_.count(name))
			return parse_error(csv_.where(header[i].column) + "column '" + name +
					   "' appears twice");
		index_[name] = i;
	}
	for (const auto& r : required_)
		if (!index_.count(r))
			return parse_error(csv_.where(1) + "missing required column '" + r + "'");
	header_size_ = header.size();
	return Status::ok();
}

bool ColumnReader::next(Status& error)
{
	error = Status::ok();
	if (!csv_.next(fields_, error))
		return false;
	if (error.is_ok() && fields_.size() != header_size_)
		error = parse_error(csv_.where(fields_.empty() ? 1 : fields_.back().column) + "expected " +
				    std::to_string(header_size_) + " fields as in the header, found " +
				    std::to_string(fields_.size()));
	return true;
}

const std::string& ColumnReader::text(const std::string& col) const
{
	static const std::string kEmpty;
	auto it = index_.find(col);
	return it == index_.end() ? kEmpty : fields_[it->second].text;
}

std::string ColumnReader::at(const std::string& col) const
{
	auto it = index_.find(col);
	return csv_.where(it == index_.end() ? 1 : fields_[it->second].column);
}

Status ColumnReader::number(const std::string& col, double& out, bool allow_empty,
			    const TraceRange& range) const
{
	const std::string& t = text(col);
	if (t.empty() && allow_empty)
		return Status::ok();
	if (!parse_number(t, out)) {
		// strtod reads "inf", "nan" and "1e400" (as infinity): numbers, but none a trace may hold.
		char* end = nullptr;
		(void)std::strtod(t.c_str(), &end);
		if (!t.empty() && end == t.c_str() + t.size() && t.find_first_of("xXpP") == std::string::npos)
			return parse_error(at(col) + col + " '" + t + "' is out of range: " + range.fix);
		return parse_error(at(col) + col + " '" + t + "' is not a number");
	}
	if (!range.holds(out))
		return parse_error(at(col) + col + " '" + t + "' is out of range: " + range.fix);
	return Status::ok();
}

Status ColumnReader::integer(const std::string& col, long long& out, bool allow_empty,
			     const TraceRange& range) const
{
	const std::string& t = text(col);
	if (t.empty() && allow_empty)
		return Status::ok();
	if (!parse_integer(t, out)) {
		// Digits that do not fit 64 bits are a count out of range, not a word.
		const std::size_t d = t.find_first_not_of("+-") == 1 ? 1 : 0;
		if (t.size() > d && t.find_first_not_of("0123456789", d) == std::string::npos)
			return parse_error(at(col) + col + " '" + t + "' is out of range: " + range.fix);
		return parse_error(at(col) + col + " '" + t + "' is not an integer");
	}
	if (!range.holds(static_cast<double>(out)))
		return parse_error(at(col) + col + " '" + t + "' is out of range: " + range.fix);
	return Status::ok();
}

}  // namespace dlsched
