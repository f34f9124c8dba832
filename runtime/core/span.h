#pragma once

// Span<T>: a non-owning, mutable view of a contiguous array.

#include <cstddef>

namespace executorch {
namespace runtime {

template <typename T>
class Span final {
 public:
  using value_type = T;
  using iterator = T*;

  constexpr Span() : data_(nullptr), length_(0) {}
  constexpr Span(T* data, size_t length) : data_(data), length_(length) {}
  Span(T* begin, T* end)
      : data_(begin), length_(static_cast<size_t>(end - begin)) {}
  template <size_t N>
  /* implicit */ constexpr Span(T (&array)[N]) : data_(array), length_(N) {}

  constexpr T* begin() const {
    return data_;
  }
  constexpr T* end() const {
    return data_ + length_;
  }
  constexpr T* data() const {
    return data_;
  }
  constexpr size_t size() const {
    return length_;
  }
  constexpr bool empty() const {
    return length_ == 0;
  }
  constexpr T& operator[](size_t index) const {
    return data_[index];
  }

 private:
  T* data_;
  size_t length_;
};

} // namespace runtime
} // namespace executorch
