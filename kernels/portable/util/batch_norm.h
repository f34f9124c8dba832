#pragma once

// Inference batch norm folds a channel's statistics into one affine map,
// y = x * scale + shift, with scale = weight / sqrt(var + eps) and
// shift = bias - mean * scale. The portable and optimized kernels both take
// it from here, so they agree to the bit.

#include <cmath>
#include <cstdint>

namespace torch {
namespace executor {
namespace native {

// Per-channel parameters of element type T, computed in C (float for the
// 16-bit floats, T otherwise).
template <typename T, typename C = T>
struct BatchNormAffine {
  const T* weight; // may be null (1)
  const T* bias; // may be null (0)
  const T* mean;
  const T* var;
  C eps;

  C scale(int64_t c) const {
    return (weight != nullptr ? static_cast<C>(weight[c]) : C(1)) /
           std::sqrt(static_cast<C>(var[c]) + eps);
  }
  C shift(int64_t c, C scale) const {
    return (bias != nullptr ? static_cast<C>(bias[c]) : C(0)) -
           static_cast<C>(mean[c]) * scale;
  }
};

} // namespace native
} // namespace executor
} // namespace torch
