// The fp32 1x1 convolution's loop (f32_pointwise_rows.h), built once per
// instruction set.
//
// A tile is up to kRows pixels by one block of two vectors of output
// channels: its accumulators start as the bias and stay in registers over
// every input channel (per channel two weight loads, then per pixel one
// broadcast and two multiply-adds), then are clamped, added to the residual
// and stored, masked in a partial last block. A pixel group's input rows
// stay in L1 across the blocks.

#include <executorch/backends/xnnpack/runtime/simd/f32_pointwise_rows.h>

#include <algorithm>
#include <cstdint>

#include <executorch/backends/xnnpack/runtime/simd/partial.h>
#include <executorch/kernels/optimized/simd/vec.h>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace f32_pw {
inline namespace ET_OPT_ISA_NAMESPACE {
namespace {

namespace simd = kernels::optimized::simd;
using simd::kLanes;
using simd::Vec;

// Pixels per tile: 2 * kRows accumulators, two weights and the broadcast
// input fit AVX-512's 32 registers with 12, the 16 of AVX2 and SSE2 / NEON
// with 6.
constexpr int kRows = kLanes >= 16 ? 12 : 6;
constexpr size_t kBlock = 2 * kLanes;

#define ET_PW_INLINE inline __attribute__((always_inline))

// Stores the first `lanes` (1 to kLanes) lanes of v.
ET_PW_INLINE void store_lanes(float* p, Vec v, size_t lanes) {
  if (lanes == size_t(kLanes)) {
    simd::store(p, v);
  } else {
    store_first(p, v, lanes);
  }
}

ET_PW_INLINE Vec load_lanes(const float* p, size_t lanes) {
  return lanes == size_t(kLanes) ? simd::load(p) : load_first(p, lanes);
}

// Pixels [p, p + R) by the block of output channels [c, c + lanes) whose
// packed panel is `panel`.
template <int R>
ET_PW_INLINE void tile(const PointwiseArgs& a,
                       size_t p,
                       const float* panel,
                       size_t c,
                       size_t lanes) {
  Vec acc[R][2];
  const Vec bias0 = simd::load(panel);
  const Vec bias1 = simd::load(panel + kLanes);
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    acc[r][0] = bias0;
    acc[r][1] = bias1;
  }
  const float* in = a.in + p * a.in_stride;
  const float* w = panel + kBlock;
  for (size_t k = 0; k < a.in_channels; ++k, w += kBlock) {
    const Vec w0 = simd::load(w);
    const Vec w1 = simd::load(w + kLanes);
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      const Vec x = simd::broadcast(in[r * a.in_stride + k]);
      acc[r][0] += x * w0;
      acc[r][1] += x * w1;
    }
  }
  const Vec lo = simd::broadcast(a.output_min);
  const Vec hi = simd::broadcast(a.output_max);
  const size_t lanes0 = std::min(lanes, size_t(kLanes));
  const size_t lanes1 = lanes - lanes0;
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r) {
    // As XNNPACK clamps (and f32_dwconv_rows.cpp): a NaN stays NaN.
    Vec v0 = acc[r][0] < lo ? lo : acc[r][0];
    v0 = v0 > hi ? hi : v0;
    Vec v1 = acc[r][1] < lo ? lo : acc[r][1];
    v1 = v1 > hi ? hi : v1;
    if (a.residual != nullptr) {
      const float* res = a.residual + (p + r) * a.residual_stride + c;
      v0 += load_lanes(res, lanes0);
      if (lanes1 != 0) {
        v1 += load_lanes(res + kLanes, lanes1);
      }
    }
    float* out = a.out + (p + r) * a.out_stride + c;
    store_lanes(out, v0, lanes0);
    if (lanes1 != 0) {
      store_lanes(out + kLanes, v1, lanes1);
    }
  }
}

// tile<rows>, for rows in [1, R].
template <int R>
ET_PW_INLINE void tile_of(const PointwiseArgs& a,
                          size_t rows,
                          size_t p,
                          const float* panel,
                          size_t c,
                          size_t lanes) {
  if (rows == size_t(R)) {
    tile<R>(a, p, panel, c, lanes);
  } else if constexpr (R > 1) {
    tile_of<R - 1>(a, rows, p, panel, c, lanes);
  }
}

void pointwise(const PointwiseArgs& a) {
  const size_t panel_floats = (a.in_channels + 1) * kBlock;
  for (size_t p = 0; p < a.pixels; p += kRows) {
    const size_t rows = std::min(a.pixels - p, size_t(kRows));
    const float* panel = a.packed;
    for (size_t c = 0; c < a.out_channels; c += kBlock, panel += panel_floats) {
      const size_t lanes = std::min(kBlock, a.out_channels - c);
      tile_of<kRows>(a, rows, p, panel, c, lanes);
    }
  }
}

} // namespace
} // namespace ET_OPT_ISA_NAMESPACE

#define ET_PW_CONCAT_(a, b) a##b
#define ET_PW_CONCAT(a, b) ET_PW_CONCAT_(a, b)

// pointwise_portable, pointwise_avx2, pointwise_avx512.
void ET_PW_CONCAT(pointwise_, ET_OPT_ISA_NAMESPACE)(const PointwiseArgs& a) {
  pointwise(a);
}

} // namespace f32_pw
} // namespace xnnpack
} // namespace backends
} // namespace executorch
