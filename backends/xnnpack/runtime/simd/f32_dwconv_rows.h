#pragma once

// The fp32 depthwise 3x3 convolution's row loop (f32_dwconv.h): one output
// row over a range of channels. f32_dwconv_rows.cpp is written on the
// optimized kernels' Vec (kernels/optimized/simd/vec.h) and compiled once
// per instruction set (executorch_simd_objects in
// kernels/optimized/CMakeLists.txt) as row_<isa>(); f32_dwconv.cpp picks
// one. (It does not see simd/isa.h, whose simd() the Vec namespace would
// clash with.)

#include <cstddef>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace f32_dw {

// Channels per packed block: the widest vector's floats. A block holds the
// 9 taps' weights (row-major), then the bias, kBlock floats each (zero past
// the channels), so that each instruction set's vector of a block is one
// load.
inline constexpr size_t kBlock = 16;
inline constexpr size_t kTaps = 9;
inline constexpr size_t kBlockFloats = (kTaps + 1) * kBlock;

// One output row over channels [c0, c1) (c0 a multiple of kBlock).
struct RowArgs {
  // Input rows read by kernel rows 0..2, [in_w, channels] each; null where
  // the row is padding.
  const float* rows[3];
  size_t in_w, channels;
  // stride_w is 1 or 2.
  size_t stride_w, pad_left;
  // The output row, [out_w, channels].
  float* out;
  size_t out_w;
  size_t c0, c1;
  // The packed blocks, from channel 0.
  const float* packed;
  float output_min, output_max;
};

using RowFunction = void (*)(const RowArgs& args);

} // namespace f32_dw
} // namespace xnnpack
} // namespace backends
} // namespace executorch
