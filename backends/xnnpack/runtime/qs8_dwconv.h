#pragma once

// Static int8 depthwise convolution (groups == channels, depth multiplier 1)
// of an NHWC int8 tensor with per-channel int8 weights, int32 biases and a
// per-tensor int8 output: what PT2E's static quantization makes of a
// MobileNet's depthwise conv2d, on the host.
//
// Why: Debian's 2022 XNNPACK widens every input and weight byte to 32 bits
// and multiplies them one tap at a time (vpmovsxbd, vpmulld), and it ran
// most of int8 MobileNetV2's time once qs8_conv.h took the pointwise
// convolutions. Here vpdpbusd adds four taps per 32-bit lane: for each
// output pixel, each kernel row's (at most 4) taps of 16 channels are
// interleaved into one 64-byte "quad" (channel c's 4 bytes are its taps,
// unused taps multiply a zero weight), so a 3x3 kernel is 3 vpdpbusd per 16
// outputs. A kernel row's quads depend only on the input row and the output
// column, so each output row's quads are built once and kept while the
// following output rows (stride 1: the next two) reuse them. A tile of 64
// channels (four whole blocks), or of 32 (two, with two output columns per
// register), builds its quads with in-lane byte and word unpacks of the
// four taps' 64 bytes, which leave the channels interleaved across four
// registers; its weights, biases and scales are packed in that order, and
// requantizing the four sums together packs the outputs back in channel
// order (AMD Zen 4, MobileNetV2's depthwise layers: 0.85 -> 0.68 ms of
// thread CPU time in qs8_conv_benchmark). So on CPUs
// with VNNI the backend runs these convolutions here (host_kernels.h);
// elsewhere XNNPACK keeps them, and the portable loop below is the
// reference the vector kernel matches bit for bit.
//
// Arithmetic (unsigned activations, the bias that absorbs their shift,
// padding, requantization): qs8_common.h, as qs8_conv.h.

#include <cstddef>
#include <cstdint>
#include <vector>

#include <pthreadpool.h>

#include <executorch/backends/xnnpack/runtime/qs8_common.h>

namespace executorch {
namespace backends {
namespace xnnpack {

class Qs8DwConv {
 public:
  // Packs `filter` ([kernel_h, kernel_w, channels]) and `bias` ([channels]
  // int32 on scale input_scale * filter_scale, or null) for run();
  // shape.in_channels and out_channels are both the channel count. False
  // for shapes the kernel does not take (kernel_w above kMaxKernelWidth,
  // the dilated kernel taller than kMaxKernelSpan rows) or a bias that could
  // overflow its sums; the caller keeps the convolution on XNNPACK.
  bool init(const Qs8ConvShape& shape,
            const Qs8ConvQuant& quant,
            const int8_t* filter,
            const int32_t* bias);

  // out [batch, out_h, out_w, channels] = conv(in [batch, in_h, in_w,
  // channels]); out_h and out_w are the caller's (checked at load). Tiles
  // of output rows, columns and channels are split across `pool` (null:
  // this thread). `vnni` picks the vector kernel (only if
  // qs8::vnni_available()).
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
  // thread: multiply-adds and input bytes rearranged into quads, at costs
  // fitted to qs8_conv_benchmark's MobileNetV2 layers (within 12% of
  // each). The
  // caller splits run() only when this pays for a pool dispatch (host_util.h).
  double cost_ns(
      size_t batch, size_t in_h, size_t in_w, size_t out_h, size_t out_w) const;

  // Taps of one kernel row: the four bytes of a vpdpbusd lane.
  static constexpr size_t kMaxKernelWidth = 4;
  // Input rows one output row's window spans ((kernel_h - 1) * dilation_h
  // + 1): the quads of that many rows live on the worker's stack.
  static constexpr size_t kMaxKernelSpan = 8;

 private:
  struct Task;
  static void run_tile(void* task, size_t tile);

  Qs8ConvShape shape_;
  // Channels in blocks of 16 (the last one padded).
  size_t blocks_ = 0;
  // Per block, per kernel row: 16 channels x 4 taps of weights (zero past
  // kernel_w and past the channels).
  std::vector<int8_t> packed_;
  // Per channel (padded to 16): the adjusted bias and the requantization
  // scale.
  std::vector<int32_t> bias_;
  std::vector<float> scale_;
  // The same, each tile of 4 whole blocks in the order the vector kernel
  // keeps its channels (qs8_dwconv.cpp: interleaved_channel); empty on CPUs
  // without VNNI.
  std::vector<int8_t> interleaved_packed_;
  std::vector<int32_t> interleaved_bias_;
  std::vector<float> interleaved_scale_;
  uint8_t pad_value_ = 0;
  qs8::Requantization requantization_;
};

} // namespace xnnpack
} // namespace backends
} // namespace executorch
