#include <cctype>
#include "util/csv.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace dlsched {

std::string CsvReader::where(std::size_t column) const
{
	return source_ + ":" + std::to_string(line_) + ":" + std::to_string(column) + ": ";
}

bool CsvReader::next(std::vector<CsvField>& fields, Status& error)
{
	std::string raw;
	fields.clear();
	while (std::getline(in_, raw)) {
		++line_;
		if (!raw.empty() && raw.back() == '\r')
			raw.pop_back();
		std::size_t first = raw.find_first_not_of(" \t");
		if (first == std::string::npos || raw[first] == '#')
			continue;
		std::size_t i = 0;
		while (true) {
			CsvField f;
			f.column = i + 1;
			if (i < raw.size() && raw[i] == '"') {
				++i;
				bool closed = false;
				while (i < raw.size()) {
					if (raw[i] == '"') {
						if (i + 1 < raw.size() && raw[i + 1] == '"') {
							f.text += '"';
							i += 2;
							continue;
						}
						closed = true;
						++i;
						break;
					}
					f.text += raw[i++];
				}
				if (!closed) {
					error = parse_error(where(f.column) + "unterminated quoted field");
					fields.clear();
					return true;
				}
				while (i < raw.size() && raw[i] != ',')
					++i;
			} else {
				std::size_t comma = raw.find(',', i);
				f.text = raw.substr(
					i, comma == std::string::npos ? std::string::npos : comma - i);
				i = comma == std::string::npos ? raw.size() : comma;
				// Trim spaces around unquoted fields.
				std::size_t a = f.text.find_first_not_of(" \t");
				std::size_t b = f.text.find_last_not_of(" \t");
				f.text = a == std::string::npos ? "" : f.text.substr(a, b - a + 1);
			}
			fields.push_back(std::move(f));
			if (i >= raw.size())
				break;
			++i;                    // ','
			if (i == raw.size()) {  // trailing comma: one more empty field
				fields.push_back({"", i + 1});
				break;
			}
		}
		return true;
	}
	return false;
}

bool parse_number(const std::string& text, double& out)
{
	if (text.empty())
		return false;
	// Decimal only: strtod would also read hexadecimal ("0x10") and leading blanks.
	if (text.find_first_of("xXpP") != std::string::npos ||
	    std::isspace(static_cast<unsigned char>(text[0])))
		return false;
	char* end = nullptr;
	errno = 0;
	out = std::strtod(text.c_str(), &end);
	return errno == 0 && end == text.c_str() + text.size() && std::isfinite(out);
}

bool parse_integer(const std::string& text, long long& out)
{
	if (text.empty())
		return false;
	if (std::isspace(static_cast<unsigned char>(text[0])))
		return false;
	char* end = nullptr;
	errno = 0;
	out = std::strtoll(text.c_str(), &end, 10);
	return errno == 0 && end == text.c_str() + text.size();
}

}  // namespace dlsched
