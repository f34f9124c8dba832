#pragma once

// Integer arithmetic that wraps around (two's complement) on overflow, as
// PyTorch's integer results do. C++ leaves signed overflow undefined, so it
// is computed in an unsigned type at least as wide as unsigned int (a
// narrower one would promote back to int and could overflow there). Other
// types compute as written, in their own arithmetic. Used by the portable
// add/sub/mul kernels, the integer sums and products of the reductions and
// the left shift.

#include <type_traits>

namespace torch {
namespace executor {
namespace native {
namespace internal {

template <typename T>
constexpr bool kWraps =
    std::is_integral<T>::value && !std::is_same<T, bool>::value;

template <typename T>
using Wrapped = std::common_type_t<std::make_unsigned_t<T>, unsigned int>;

template <typename T>
T wrapping_add(T x, T y) {
  if constexpr (kWraps<T>) {
    return static_cast<T>(Wrapped<T>(x) + Wrapped<T>(y));
  } else {
    return static_cast<T>(x + y);
  }
}

template <typename T>
T wrapping_mul(T x, T y) {
  if constexpr (kWraps<T>) {
    return static_cast<T>(Wrapped<T>(x) * Wrapped<T>(y));
  } else {
    return static_cast<T>(x * y);
  }
}

// x << y for 0 <= y < the width of T (shifting a negative value left is
// undefined in C++17; PyTorch keeps the low bits).
template <typename T>
T wrapping_shift_left(T x, T y) {
  if constexpr (kWraps<T>) {
    return static_cast<T>(Wrapped<T>(x) << y);
  } else {
    return static_cast<T>(x << y);
  }
}

} // namespace internal
} // namespace native
} // namespace executor
} // namespace torch
