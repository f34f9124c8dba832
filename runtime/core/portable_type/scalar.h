#pragma once

// Scalar: a boolean, integer or floating point number passed to a kernel.

#include <cstdint>
#include <type_traits>

#include <executorch/runtime/core/portable_type/float_to_integer.h>
#include <executorch/runtime/platform/assert.h>

namespace executorch {
namespace runtime {
namespace etensor {

class Scalar {
 public:
  enum class Tag { Bool, Int, Double };

  Scalar() : Scalar(int64_t(0)) {}
  /* implicit */ Scalar(bool value) : tag_(Tag::Bool) {
    value_.as_bool = value;
  }
  template <typename T,
            typename std::enable_if<std::is_integral<T>::value &&
                                        !std::is_same<T, bool>::value,
                                    bool>::type = true>
  /* implicit */ Scalar(T value) : tag_(Tag::Int) {
    value_.as_int = static_cast<int64_t>(value);
  }
  /* implicit */ Scalar(double value) : tag_(Tag::Double) {
    value_.as_double = value;
  }
  /* implicit */ Scalar(float value) : Scalar(static_cast<double>(value)) {}

  bool isBoolean() const {
    return tag_ == Tag::Bool;
  }
  bool isIntegral(bool include_bool) const {
    return tag_ == Tag::Int || (include_bool && tag_ == Tag::Bool);
  }
  bool isFloatingPoint() const {
    return tag_ == Tag::Double;
  }
  Tag tag() const {
    return tag_;
  }

  // The value converted to T, whatever the stored kind.
  template <typename T>
  T to() const {
    switch (tag_) {
      case Tag::Bool:
        return static_cast<T>(value_.as_bool);
      case Tag::Int:
        return static_cast<T>(value_.as_int);
      case Tag::Double:
        if constexpr (std::is_integral<T>::value &&
                      !std::is_same<T, bool>::value) {
          return float_to_integer<T>(value_.as_double);
        } else {
          return static_cast<T>(value_.as_double);
        }
    }
    return T();
  }

 private:
  Tag tag_;
  union {
    bool as_bool;
    int64_t as_int;
    double as_double;
  } value_;
};

} // namespace etensor
} // namespace runtime
} // namespace executorch
