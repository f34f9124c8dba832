#pragma once

// 16-bit floating point types: IEEE half (Half) and bfloat16 (BFloat16).
// Arithmetic happens in float; these types only store and convert.

#include <cstdint>
#include <cstring>

namespace executorch {
namespace runtime {
namespace etensor {

namespace internal {

inline uint32_t float_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

inline float bits_float(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// float -> IEEE binary16, round to nearest even.
inline uint16_t float_to_half_bits(float value) {
  const uint32_t bits = float_bits(value);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits >= 0x7f800000u) { // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u |
                                 (abs_bits > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs_bits >= 0x477ff000u) { // rounds past the largest half: inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (abs_bits < 0x38800000u) { // subnormal half or zero
    // Adding 0.5f aligns the mantissa so that the float adder rounds for us.
    const float shifted = bits_float(abs_bits) + 0.5f;
    return static_cast<uint16_t>(sign | (float_bits(shifted) - 0x3f000000u));
  }
  const uint32_t mantissa_odd = (abs_bits >> 13) & 1u;
  uint32_t rounded = abs_bits + 0xc8000fffu + mantissa_odd;
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

inline float half_bits_to_float(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  const uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: value = mantissa * 2^-24.
    const float magnitude =
        static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) {
    return bits_float(sign | 0x7f800000u | (mantissa << 13));
  }
  return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// float -> bfloat16, round to nearest even; NaN stays NaN.
inline uint16_t float_to_bfloat16_bits(float value) {
  const uint32_t bits = float_bits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  }
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

} // namespace internal

struct Half {
  uint16_t x;

  Half() = default;
  /* implicit */ Half(float value) : x(internal::float_to_half_bits(value)) {}
  operator float() const {
    return internal::half_bits_to_float(x);
  }
};

struct BFloat16 {
  uint16_t x;

  BFloat16() = default;
  /* implicit */ BFloat16(float value)
      : x(internal::float_to_bfloat16_bits(value)) {}
  operator float() const {
    return internal::bits_float(static_cast<uint32_t>(x) << 16);
  }
};

} // namespace etensor
} // namespace runtime
} // namespace executorch
