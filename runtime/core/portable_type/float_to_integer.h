#pragma once

// A floating value to an integer type other than bool, defined for every
// value. C++ leaves a value outside the target's range (or NaN) undefined;
// this converts as x86 does, and so eager PyTorch there: truncation toward
// zero into int64 for a 64-bit target and int32 otherwise, a value outside
// that range or NaN giving its minimum, then wrapping into a narrower target
// (3e9 to int8 is 0, -6645090 to int16 is -25954). Used by Scalar::to and
// the portable kernels' element conversions.

#include <cstdint>
#include <limits>
#include <type_traits>

namespace executorch {
namespace runtime {
namespace etensor {

template <typename To, typename From>
inline To float_to_integer(From value) {
  using Wide = std::conditional_t<sizeof(To) == 8, int64_t, int32_t>;
  // -2^31 and -2^63, exact in every floating type.
  constexpr From kMin = static_cast<From>(std::numeric_limits<Wide>::min());
  const Wide wide = value >= kMin && value < -kMin
                        ? static_cast<Wide>(value)
                        : std::numeric_limits<Wide>::min();
  return static_cast<To>(wide);
}

} // namespace etensor
} // namespace runtime
} // namespace executorch
