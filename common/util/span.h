// A minimal non-owning view of contiguous elements (C++17 has no std::span).
#ifndef DLSCHED_UTIL_SPAN_H
#define DLSCHED_UTIL_SPAN_H

#include <cstddef>
#include <vector>

namespace dlsched {

template <class T>
class Span {
public:
	Span() = default;
	Span(T* data, std::size_t size) : data_(data), size_(size) {}
	template <class U>
	Span(const std::vector<U>& v) : data_(v.data()), size_(v.size())
	{
	}  // NOLINT
	template <class U>
	Span(std::vector<U>& v) : data_(v.data()), size_(v.size())
	{
	}  // NOLINT

	T* begin() const { return data_; }
	T* end() const { return data_ + size_; }
	std::size_t size() const { return size_; }
	bool empty() const { return size_ == 0; }
	T& operator[](std::size_t i) const { return data_[i]; }

private:
	T* data_ = nullptr;
	std::size_t size_ = 0;
};

}  // namespace dlsched

#endif
