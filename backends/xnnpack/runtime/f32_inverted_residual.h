#pragma once

// An fp32 inverted residual block of an NHWC tensor in one pass: a 1x1
// expansion convolution, a 3x3 depthwise convolution (f32_dwconv.h) and a
// 1x1 projection convolution, each with its bias and output clamp, plus the
// block's input when the block is residual. MobileNetV2's block: the
// backend's fusion.h recognises the four nodes and runs them as one host
// step.
//
// Why: run node by node, a block at 112x112 or 56x56 writes its expanded
// tensor (up to 4.8 MB) past the core's L2, reads it back for the depthwise
// convolution and does the same with the depthwise output for the
// projection, and there MobileNetV2's early layers wait on memory
// (backends/xnnpack/README.md has the measurement). Here the output is made
// a chunk of rows at a time: the chunk's input rows are expanded into a
// ring of rows (those the next chunk reads again stay), convolved depthwise
// into a chunk buffer and projected into the output, all in L2; only the
// block's input and output cross memory.
//
// The 1x1 convolutions run on simd/f32_pointwise_rows.cpp (their
// accumulators start as the bias and are clamped in registers, a partial
// channel block is stored masked), on the optimized kernels' Vec: only
// built with them (EXECUTORCH_XNNPACK_OPTIMIZED_HOST).
//
// Threading: run() splits each image's output rows into one band per
// thread; a band expands the input rows its first chunk reads, so up to 2
// rows at each band's edge are expanded twice. A band's ring and chunk
// buffer come from its thread's optimized-kernel scratch (no heap
// allocation on the steady state). Tested by f32_inverted_residual_test.cpp
// against a direct loop in double precision.

#include <cstddef>
#include <memory>
#include <vector>

#include <pthreadpool.h>

#include <executorch/backends/xnnpack/runtime/f32_dwconv.h>
#include <executorch/backends/xnnpack/runtime/simd/f32_pointwise_rows.h>

namespace executorch {
namespace backends {
namespace xnnpack {

// A 1x1, stride-1, unpadded fp32 convolution.
struct F32PointwiseConv {
  // [out_channels, in_channels] and [out_channels] (or null); read at init
  // only.
  const float* filter = nullptr;
  const float* bias = nullptr;
  size_t in_channels = 0, out_channels = 0;
  // The output clamp.
  float output_min = -__builtin_inff();
  float output_max = __builtin_inff();
};

class F32InvertedResidual {
 public:
  // Packs the 1x1 convolutions for `isa` and keeps `depthwise` (over
  // expand's output channels; project reads them). `residual` adds the
  // block's input to the projection (stride 1, as many output channels as
  // input channels). False when the convolutions do not chain so or `isa`
  // is not F32DwConv::available().
  bool init(const F32PointwiseConv& expand,
            std::shared_ptr<const F32DwConv> depthwise,
            const F32PointwiseConv& project,
            bool residual,
            Isa isa);

  // out [batch, out_h, out_w, out_channels] from in [batch, in_h, in_w,
  // in_channels]; out_h and out_w are the depthwise convolution's, the
  // caller's (checked at load). False, computing nothing, when scratch
  // cannot be had.
  bool run(const float* in,
           size_t batch,
           size_t in_h,
           size_t in_w,
           float* out,
           size_t out_h,
           size_t out_w,
           pthreadpool_t pool) const;

  // Whether one pass pays over running the convolutions one by one: when
  // the expanded tensor (in_h x in_w x expanded channels floats) does not
  // fit in a core's L2. Below that the layers find it in L2 anyway
  // (measured in backends/xnnpack/README.md).
  static bool pays(size_t in_h, size_t in_w, size_t expanded_channels);

 private:
  // A 1x1 convolution packed for f32_pointwise_rows.
  struct Pointwise {
    std::vector<float> packed;
    size_t in_channels = 0, out_channels = 0;
    float output_min = 0.0f, output_max = 0.0f;

    void pack(const F32PointwiseConv& conv, size_t block);
    // out rows = this(in rows) [+ residual rows], `pixels` of them.
    void run(const float* in,
             size_t pixels,
             float* out,
             const float* residual,
             f32_pw::PointwiseFunction function) const;
  };
  struct Task;
  static void run_band(void* task, size_t band);
  void band(const Task& task, size_t image, size_t oy0, size_t oy1) const;

  Pointwise expand_, project_;
  std::shared_ptr<const F32DwConv> depthwise_;
  bool residual_ = false;
  Isa isa_ = Isa::kPortable;
  f32_pw::PointwiseFunction pointwise_ = nullptr;
};

} // namespace xnnpack
} // namespace backends
} // namespace executorch
