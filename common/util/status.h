// Status and Result<T>: how errors cross module boundaries in dlsched (no exceptions across modules).
#ifndef DLSCHED_UTIL_STATUS_H
#define DLSCHED_UTIL_STATUS_H

#include <string>
#include <utility>
#include <variant>

namespace dlsched {

enum class StatusCode {
	kOk = 0,
	kInvalidArgument,  // bad value from a user: config, command line, trace
	kNotFound,         // a file, a policy name, a model
	kParseError,       // malformed input file (message names file:line:column)
	kIoError,
	kInternal,
};

class [[nodiscard]] Status {
public:
	Status() = default;
	Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

	static Status ok() { return Status(); }
	bool is_ok() const { return code_ == StatusCode::kOk; }
	explicit operator bool() const { return is_ok(); }
	StatusCode code() const { return code_; }
	const std::string& message() const { return message_; }

private:
	StatusCode code_ = StatusCode::kOk;
	std::string message_;
};

inline Status invalid_argument(std::string m)
{
	return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status not_found(std::string m)
{
	return Status(StatusCode::kNotFound, std::move(m));
}
inline Status parse_error(std::string m)
{
	return Status(StatusCode::kParseError, std::move(m));
}
inline Status io_error(std::string m)
{
	return Status(StatusCode::kIoError, std::move(m));
}
inline Status internal_error(std::string m)
{
	return Status(StatusCode::kInternal, std::move(m));
}

// A value or the Status that explains why there is none.
template <class T>
class [[nodiscard]] Result {
public:
	Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
	Result(Status status) : v_(std::move(status)) {}  // NOLINT: must not be ok()

	bool is_ok() const { return std::holds_alternative<T>(v_); }
	explicit operator bool() const { return is_ok(); }
	const Status& status() const
	{
		static const Status kOk;
		return is_ok() ? kOk : std::get<Status>(v_);
	}
	T& value() & { return std::get<T>(v_); }
	const T& value() const& { return std::get<T>(v_); }
	T&& value() && { return std::get<T>(std::move(v_)); }
	T* operator->() { return &value(); }
	const T* operator->() const { return &value(); }
	T& operator*() & { return value(); }
	const T& operator*() const& { return value(); }

private:
	std::variant<T, Status> v_;
};

}  // namespace dlsched

#endif
