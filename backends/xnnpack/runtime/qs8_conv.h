#pragma once

// Static int8 convolution (one group) of an NHWC int8 tensor with per-channel
// int8 weights, int32 biases and a per-tensor int8 output: what PT2E's static
// quantization makes of conv2d, on the host.
//
// Why: Debian's 2022 XNNPACK multiplies int8 in 16-bit lanes (its best x86
// kernel widens with vpmovsxbw and accumulates with vpmaddwd); that kernel
// was 99% of ResNet-18's int8 time. With AVX512-VNNI, vpdpbusd multiplies
// and accumulates four byte pairs per 32-bit lane in one instruction. So on
// CPUs with VNNI the backend runs these convolutions here
// (host_kernels.h); elsewhere XNNPACK's kernels stay faster than the
// portable loop below, which exists for other CPUs' tests and as the
// reference the vector kernel matches bit for bit.
//
// Arithmetic (activations shifted to unsigned as they are broadcast, the
// bias that absorbs the shift, padding, requantization): qs8_common.h. The
// kernel reads 1x1 windows in the input itself (a tile of 8 output pixels,
// or 7 when the pixels are a multiple of 7 but not of 8, at a time, when
// they are evenly spaced in it); other windows are copied (im2col) a tile
// at a time.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <pthreadpool.h>

#include <executorch/backends/xnnpack/runtime/qs8_common.h>

namespace executorch {
namespace backends {
namespace xnnpack {

class Qs8Conv {
 public:
  // Packs `filter` ([out_channels, kernel_h, kernel_w, in_channels]) and
  // `bias` ([out_channels] int32 on scale input_scale * filter_scale, or
  // null) for run(). False when the reduction is too long for the kernel's
  // row tiles (kMaxReduction); the caller keeps the convolution on XNNPACK.
  bool init(const Qs8ConvShape& shape,
            const Qs8ConvQuant& quant,
            const int8_t* filter,
            const int32_t* bias);

  // out [batch, out_h, out_w, out_channels] = conv(in [batch, in_h, in_w,
  // in_channels]); out_h and out_w are the caller's (checked at load).
  // Tiles of output pixels (and their channels, when there are fewer than
  // 4 tiles per thread) are split across `pool` (null: this thread). `vnni`
  // picks the vector kernel (only if qs8::vnni_available()).
  void run(const int8_t* in,
           size_t batch,
           size_t in_h,
           size_t in_w,
           int8_t* out,
           size_t out_h,
           size_t out_w,
           pthreadpool_t pool,
           bool vnni) const;

  // Estimated thread CPU time (ns) of run() with the VNNI kernel on one
  // thread: multiply-adds, outputs requantized and window rows copied, at
  // costs fitted to qs8_conv_benchmark's MobileNetV2 and ResNet-18 layers
  // (within 11% of each, but 25-31% under for 1x1s into 16-24 channels;
  // qs8_conv_benchmark --layers prints both). The caller splits run() only
  // when this pays for a pool dispatch (host_util.h).
  double cost_ns(size_t batch, size_t out_h, size_t out_w) const;

  // Longest reduction (kernel_h * kernel_w * in_channels, rounded up to 4)
  // one row tile holds: the tile lives on the worker's stack.
  static constexpr size_t kMaxReduction = 8192;

 private:
  struct Task;
  struct Pixel;
  static void run_rows(void* task, size_t item);
  // The first of the tile's im2col rows (task.tile_rows) when they all are in
  // the input, `*stride` bytes apart (1x1 windows inside it), else null.
  const int8_t* tile_in_input(const Task& task,
                              size_t first,
                              size_t* stride) const;
  // Writes the im2col rows of output pixels [first, first + rows)
  // (reduction4_ bytes each) to `dst`, moving bytes with `Bytes` (copy and
  // fill: library calls, or AVX-512 masked moves).
  template <typename Bytes>
  void im2col(const Task& task, size_t first, size_t rows, int8_t* dst) const;
  // im2col with masked moves (the VNNI kernel's).
  static void im2col_vnni(const Qs8Conv& conv,
                          const Task& task,
                          size_t first,
                          size_t rows,
                          int8_t* dst);

  Qs8ConvShape shape_;
  // kernel_h * kernel_w * in_channels, and that rounded up to 4.
  size_t reduction_ = 0;
  size_t reduction4_ = 0;
  // A 1x1 kernel over channels in multiples of 4: rows can be read in the
  // input.
  bool pointwise_ = false;
  // Filter in blocks of 16 output channels: block j holds, for each group
  // of 4 reduction steps, 16 channels x 4 bytes (zero past the ends).
  std::vector<int8_t> packed_;
  // Per output channel (padded to 16): the adjusted bias and the
  // requantization scale.
  std::vector<int32_t> bias_;
  std::vector<float> scale_;
  // What padding reads: the input zero point.
  int8_t pad_value_ = 0;
  qs8::Requantization requantization_;
};

} // namespace xnnpack
} // namespace backends
} // namespace executorch
