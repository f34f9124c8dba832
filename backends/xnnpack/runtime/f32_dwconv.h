#pragma once

// fp32 depthwise 3x3 convolution (groups == channels, depth multiplier 1,
// dilation 1, horizontal stride 1 or 2, any vertical stride and padding) of
// an NHWC tensor, with the node's output clamp (ReLU6) applied: what an
// fp32 MobileNet's depthwise conv2d becomes, on the host.
//
// Why: Debian's 2022 XNNPACK computes each output vector from 9 weight and
// 9 input vector loads (a load per multiply-add), which runs MobileNetV2's
// depthwise layers at 20-44 GFLOP/s on a CPU whose FMA peak is 117. Here a
// channel block's 9 weights stay in registers while a strip of up to 8
// output columns (4 on 16-register ISAs) is computed per pass: each input
// vector is loaded once and feeds every tap of the strip that reads it
// (stride 1: 3 loads a column for 9 multiply-adds), so the loop is bound by
// the FMA rate, not the loads. backends/xnnpack/README.md has the
// measurement.
//
// The row loop (simd/f32_dwconv_rows.h) is written on the optimized
// kernels' Vec and compiled once per instruction set they are; run() takes
// the one the optimized kernels run with (simd/isa.h). Channels are in
// blocks of the vector width, the last one masked.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <pthreadpool.h>

#include <executorch/backends/xnnpack/runtime/simd/f32_dwconv_rows.h>
#include <executorch/kernels/optimized/simd/isa.h>

namespace executorch {
namespace backends {
namespace xnnpack {

using kernels::optimized::Isa;

struct F32DwConvShape {
  size_t stride_h = 1, stride_w = 1;
  size_t pad_top = 0, pad_left = 0;
  size_t channels = 0;
  // The output clamp.
  float output_min = -__builtin_inff();
  float output_max = __builtin_inff();
};

class F32DwConv {
 public:
  // Packs `filter` ([3, 3, channels], XNNPACK's [1, 3, 3, channels]) and
  // `bias` ([channels] or null) for run(). False for shapes the kernel does
  // not take (no channels, stride_w other than 1 or 2, stride_h 0) or out of
  // memory; the caller keeps the convolution on XNNPACK.
  bool init(const F32DwConvShape& shape,
            const float* filter,
            const float* bias);

  // out [batch, out_h, out_w, channels] = clamp(conv(in [batch, in_h,
  // in_w, channels])); out_h and out_w are the caller's (checked at load:
  // the padding past the bottom and right edges follows from them). Output
  // rows (and groups of channel blocks when there are few rows) are split
  // across `pool` (null: this thread). `isa` must be available().
  void run(const float* in,
           size_t batch,
           size_t in_h,
           size_t in_w,
           float* out,
           size_t out_h,
           size_t out_w,
           pthreadpool_t pool,
           Isa isa) const;

  // Estimated thread CPU time (ns) of run() with the AVX-512 loop on one
  // thread (multiply-adds and input floats, at costs fitted to MobileNetV2's
  // depthwise layers). The caller splits run() only when this pays for a
  // pool dispatch (host_util.h).
  double cost_ns(
      size_t batch, size_t in_h, size_t in_w, size_t out_h, size_t out_w) const;

  // One output row [out_w, channels] of run(), from the input rows that
  // kernel rows 0..2 read ([in_w, channels] each; null where the row is
  // padding), on this thread: for callers that make the input rows
  // themselves (f32_inverted_residual.h). `isa` must be available().
  void run_row(const float* const rows[3],
               size_t in_w,
               float* out,
               size_t out_w,
               Isa isa) const;

  const F32DwConvShape& shape() const {
    return shape_;
  }

  // Whether `isa`'s row loop was built and this CPU runs it.
  static bool available(Isa isa);
  // The instruction sets available(), narrowest first (tests and
  // benchmarks run each).
  static std::vector<Isa> available_isas();

  // The instruction set the optimized kernels run with (the portable
  // build's when they are not built).
  static Isa selected_isa();

 private:
  struct Task;
  static void run_tile(void* task, size_t tile);
  // One output row over channels [c0, c1) with `row`.
  void run_channels(const float* const rows[3],
                    size_t in_w,
                    float* out,
                    size_t out_w,
                    size_t c0,
                    size_t c1,
                    f32_dw::RowFunction row) const;

  F32DwConvShape shape_;
  size_t blocks_ = 0;
  // Per block of f32_dw::kBlock channels: f32_dw::kBlockFloats.
  std::vector<float> packed_;
};

} // namespace xnnpack
} // namespace backends
} // namespace executorch
