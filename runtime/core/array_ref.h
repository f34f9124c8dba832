#pragma once

// ArrayRef<T>: a non-owning, read-only view of a contiguous array.

#include <cstddef>
#include <initializer_list>
#include <vector>

#include <executorch/runtime/platform/assert.h>

namespace executorch {
namespace runtime {

template <typename T>
class ArrayRef final {
 public:
  using value_type = T;
  using iterator = const T*;
  using const_iterator = const T*;
  using size_type = size_t;

  constexpr ArrayRef() : data_(nullptr), length_(0) {}
  constexpr ArrayRef(const T* data, size_t length)
      : data_(data), length_(length) {}
  ArrayRef(const T* begin, const T* end)
      : data_(begin), length_(static_cast<size_t>(end - begin)) {}
  /* implicit */ constexpr ArrayRef(const T& one) : data_(&one), length_(1) {}
  template <size_t N>
  /* implicit */ constexpr ArrayRef(const T (&array)[N])
      : data_(array), length_(N) {}
  /* implicit */ ArrayRef(const std::vector<T>& vec)
      : data_(vec.data()), length_(vec.size()) {}
  /* implicit */ constexpr ArrayRef(const std::initializer_list<T>& list)
      : data_(list.begin() == list.end() ? nullptr : list.begin()),
        length_(list.size()) {}

  constexpr const T* begin() const {
    return data_;
  }
  constexpr const T* end() const {
    return data_ + length_;
  }
  constexpr const T* data() const {
    return data_;
  }
  constexpr size_t size() const {
    return length_;
  }
  constexpr bool empty() const {
    return length_ == 0;
  }
  const T& front() const {
    return data_[0];
  }
  const T& back() const {
    return data_[length_ - 1];
  }
  constexpr const T& operator[](size_t index) const {
    return data_[index];
  }
  const T& at(size_t index) const {
    ET_CHECK_MSG(index < length_, "index %zu out of range %zu", index, length_);
    return data_[index];
  }
  ArrayRef slice(size_t start, size_t count) const {
    ET_CHECK_MSG(start + count <= length_, "slice out of range");
    return ArrayRef(data_ + start, count);
  }
  ArrayRef slice(size_t start) const {
    return slice(start, length_ - start);
  }
  bool equals(ArrayRef other) const {
    if (length_ != other.length_) {
      return false;
    }
    for (size_t i = 0; i < length_; ++i) {
      if (!(data_[i] == other.data_[i])) {
        return false;
      }
    }
    return true;
  }
  std::vector<T> vec() const {
    return std::vector<T>(data_, data_ + length_);
  }

 private:
  const T* data_;
  size_t length_;
};

template <typename T>
bool operator==(ArrayRef<T> a, ArrayRef<T> b) {
  return a.equals(b);
}
template <typename T>
bool operator!=(ArrayRef<T> a, ArrayRef<T> b) {
  return !a.equals(b);
}

template <typename T>
ArrayRef<T> makeArrayRef(const T* data, size_t length) {
  return ArrayRef<T>(data, length);
}

} // namespace runtime
} // namespace executorch
