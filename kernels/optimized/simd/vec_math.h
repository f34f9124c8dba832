#pragma once

// Transcendental functions on Vec (vec.h), each a few multiply-adds on a
// polynomial fitted for this file. Relative error stays within a few float
// ulps over the whole range (checked against portable's libm calls by
// optimized_kernels_test.cpp's UnaryOps and SoftmaxAlongEveryDim), NaN
// in gives NaN out, and the limits are exact: exp(-inf) = 0 (masked
// attention scores), exp(inf) = inf, tanh(+-inf) = +-1, sigmoid(-inf) = 0.

#include <executorch/kernels/optimized/simd/vec.h>

namespace executorch {
namespace kernels {
namespace optimized {
namespace simd {
inline namespace ET_OPT_ISA_NAMESPACE {

// e^kExpLo is the smallest normal float: below it exp gives 0.
constexpr float kExpLo = -87.3365478515625f;

// e^x = 2^n * e^r with n = round(x / ln 2) and |r| <= ln(2) / 2, where
// e^r = 1 + r + r^2 * P(r) (P of degree 4, relative error 1e-8 on that
// interval). ln 2 is split in two so r is exact to float precision. Returns
// e^r and sets n; the callers clamp x to where 2^n is representable (a NaN
// passes through and gives NaN).
inline Vec exp_reduced(Vec x, VecI* n) {
  const Vec nf = round_nearest(x * broadcast(1.44269504088896341f));
  Vec r = x - nf * broadcast(0.693359375f);
  r = r - nf * broadcast(-2.12194440e-4f);
  Vec p = broadcast(0.0013933650916442275f);
  p = p * r + broadcast(0.008363181725144386f);
  p = p * r + broadcast(0.04166646674275398f);
  p = p * r + broadcast(0.16666576266288757f);
  p = p * r + broadcast(0.5f);
  *n = __builtin_convertvector(nf, VecI);
  return p * (r * r) + r + broadcast(1.0f);
}

// 2^n as a float, for -126 <= n <= 127.
inline Vec exp2_normal(VecI n) {
  return as_float((n + 127) << 23);
}

inline Vec exp(Vec x) {
  const Vec lo = broadcast(kExpLo);
  const Vec hi = broadcast(88.72283172607421875f); // largest finite
  VecI n;
  const Vec p = exp_reduced(min(max(x, lo), hi), &n);
  // 2^n in two factors, each a normal float even when 2^n is not.
  const VecI n1 = n >> 1;
  Vec result = p * exp2_normal(n1) * exp2_normal(n - n1);
  result = select(x < lo, Vec{}, result);
  return select(x > hi, broadcast(__builtin_inff()), result);
}

// e^x for x <= 0, -inf and NaN: softmax's exp(x - max), which is never
// positive. Below the smallest normal's log it gives 0, so 2^n is one
// normal float: no upper limit and no two-factor scaling, about a third
// fewer instructions than exp. Positive x is outside its domain.
inline Vec exp_nonpositive(Vec x) {
  const Vec lo = broadcast(kExpLo);
  const VecI underflow = x < lo;
  VecI n;
  const Vec p = exp_reduced(select(underflow, lo, x), &n);
  return select(underflow, Vec{}, p * exp2_normal(n));
}

// tanh(x) = x + x^3 * P(x^2) for |x| < 0.625 (P of degree 4, relative error
// 5e-8), else sign(x) * (1 - 2 / (e^(2|x|) + 1)).
inline Vec tanh(Vec x) {
  const Vec ax = abs(x);
  const Vec x2 = x * x;
  Vec p = broadcast(-0.00622130511328578f);
  p = p * x2 + broadcast(0.021085575222969055f);
  p = p * x2 + broadcast(-0.05387021228671074f);
  p = p * x2 + broadcast(0.13332901895046234f);
  p = p * x2 + broadcast(-0.3333333134651184f);
  const Vec small = x + x * x2 * p;
  const Vec large_abs =
      broadcast(1.0f) - broadcast(2.0f) / (exp(ax + ax) + broadcast(1.0f));
  const Vec sign = as_float(as_int(x) & broadcast_i(INT32_MIN));
  const Vec large = as_float(as_int(large_abs) | as_int(sign));
  return select(ax < broadcast(0.625f), small, large);
}

inline Vec sigmoid(Vec x) {
  return broadcast(1.0f) / (broadcast(1.0f) + exp(-x));
}

// erf(x) = x * P(x^2) / Q(x^2) for |x| <= 3.92 (P and Q of degree 5,
// fitted for this file to erf's relative error: 2e-8 in exact arithmetic,
// 3.1e-7 evaluated in float), and +-1 beyond, where erf is within 3e-8 of
// +-1. One division and no exp: gelu_erf, MiniLM's FFN activation, took
// 7% of its dynamic int8 program's time through 1 - t * Q(t) * e^(-x^2)
// (Abramowitz and Stegun 7.1.26), about twice the instructions.
inline Vec erf(Vec x) {
  const Vec one = broadcast(1.0f);
  const Vec limit = broadcast(3.92f);
  Vec ax = abs(x);
  ax = select(ax > limit, limit, ax); // NaN stays NaN
  const Vec t = ax * ax;
  Vec p = broadcast(2.05001334e-06f);
  p = p * t + broadcast(0.000284858659f);
  p = p * t + broadcast(0.00376508082f);
  p = p * t + broadcast(0.0527470335f);
  p = p * t + broadcast(0.190395609f);
  p = p * t + broadcast(1.12837911f);
  Vec q = broadcast(3.80896927e-05f);
  q = q * t + broadcast(0.00116238301f);
  q = q * t + broadcast(0.014968155f);
  q = q * t + broadcast(0.114104398f);
  q = q * t + broadcast(0.502066433f);
  q = q * t + one;
  Vec e = ax * p / q;
  e = select(e > one, one, e); // rounding near the limit
  const Vec sign = as_float(as_int(x) & broadcast_i(INT32_MIN));
  return as_float(as_int(e) | as_int(sign));
}

// PyTorch's gelu(approximate="none"): x/2 * (1 + erf(x / sqrt(2))).
inline Vec gelu_erf(Vec x) {
  const Vec half_x = broadcast(0.5f) * x;
  return half_x + half_x * erf(x * broadcast(0.70710678118654752f));
}

// PyTorch's gelu(approximate="tanh").
inline Vec gelu_tanh(Vec x) {
  const Vec inner =
      broadcast(0.79788456080286536f) * (x + broadcast(0.044715f) * x * x * x);
  const Vec half_x = broadcast(0.5f) * x;
  return half_x + half_x * tanh(inner);
}

} // namespace ET_OPT_ISA_NAMESPACE
} // namespace simd
} // namespace optimized
} // namespace kernels
} // namespace executorch
