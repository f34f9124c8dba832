#pragma once

// The fp32 1x1 convolution's loop for the inverted residual block
// (f32_inverted_residual.h): out[pixels, out_channels] = clamp(in[pixels,
// in_channels] x filter^T + bias) [+ residual], every operand in place.
// f32_pointwise_rows.cpp is written on the optimized kernels' Vec and
// compiled once per instruction set (as f32_dwconv_rows.cpp is) as
// pointwise_<isa>(); f32_inverted_residual.cpp picks one.

#include <cstddef>

namespace executorch {
namespace backends {
namespace xnnpack {
namespace f32_pw {

struct PointwiseArgs {
  // Pixel p's input channels at in + p * in_stride.
  const float* in;
  size_t in_stride;
  size_t pixels;
  size_t in_channels, out_channels;
  // Blocks of two vectors' worth of output channels (host_loops.h's
  // pointwise_block for the instruction set), each the bias then one row
  // per input channel, a block's width of floats each (zero past
  // out_channels): what F32InvertedResidual packs.
  const float* packed;
  // Pixel p's output channels at out + p * out_stride.
  float* out;
  size_t out_stride;
  float output_min, output_max;
  // Added after the clamp when not null: pixel p's at residual + p *
  // residual_stride.
  const float* residual;
  size_t residual_stride;
};

using PointwiseFunction = void (*)(const PointwiseArgs& args);

} // namespace f32_pw
} // namespace xnnpack
} // namespace backends
} // namespace executorch
