#pragma once

// fp32 one-group convolution of an NHWC tensor as one GEMM per image on the
// optimized kernels' sgemm (kernels/optimized/blas/gemm.h): out[pixels,
// out_c] = im2col(in)[pixels, depth] x filter^T, with the bias and the
// node's output clamp in the GEMM's epilogue. The filter ([out_c, kh, kw,
// in_c], XNNPACK's layout: a row of the im2col matrix is (kh, kw, c) in that
// order) is packed into the GEMM's panels at init, and a 1x1 stride-1
// unpadded convolution reads its input as the im2col matrix. A fully
// connected node is such a convolution of its input's rows (host_kernels.cpp
// runs it as batch 1, rows x 1 pixels).
//
// Why: Debian's 2022 XNNPACK walks a convolution's output a tile of 7
// pixels at a time, and each tile reads the whole packed filter. A filter
// that does not fit in a core's L2 (ResNet-18's 512-channel 3x3s: 9.4 MB)
// is then streamed from L3 once per tile, and on CPUs whose per-core L3
// bandwidth is low (an Emerald Rapids Xeon: ResNet-18's last stage ran at
// 48 GFLOP/s, 17 of its 38 ms) the convolution waits on it. sgemm packs a
// K slice of the filter once per call and runs every pixel against it, so
// the filter is read once. backends/xnnpack/README.md has the measurement.
// The packed filter takes the place of XNNPACK's (the node is no longer
// XNNPACK's), so memory does not grow.
//
// Only built with the optimized kernels (EXECUTORCH_XNNPACK_OPTIMIZED_HOST).
//
// Threading: run() splits the output channels across `pool`, each share
// one single-threaded sgemm that reads its share of the filter; the im2col
// matrix (out_h * out_w * kernel_h * kernel_w * in_channels floats, none for
// a 1x1 stride-1 convolution) is built on the calling thread first. Scratch
// comes from the calling thread's optimized-kernel scratch (reused: no heap
// allocation on the steady state). Tested by f32_gemm_conv_test.cpp against a
// direct loop.

#include <cstddef>
#include <memory>

#include <pthreadpool.h>

namespace executorch {
namespace backends {
namespace xnnpack {

struct F32GemmConvShape {
  size_t kernel_h = 1, kernel_w = 1;
  size_t stride_h = 1, stride_w = 1;
  size_t dilation_h = 1, dilation_w = 1;
  size_t pad_top = 0, pad_left = 0;
  size_t in_channels = 0, out_channels = 0;
  // The filter is [kernel_h * kernel_w * in_channels, out_channels] (a
  // fully connected node's with XNN_FLAG_TRANSPOSE_WEIGHTS) instead of
  // [out_channels, kernel_h, kernel_w, in_channels].
  bool filter_transposed = false;
  // The output clamp.
  float output_min = -__builtin_inff();
  float output_max = __builtin_inff();
};

class F32GemmConv {
 public:
  // Packs `filter` ([out_channels, kernel_h, kernel_w, in_channels], or
  // transposed as the shape says) and
  // keeps `bias` ([out_channels] or null), which must outlive the kernel
  // (the blob's constants do). False for a shape it does not take (a zero
  // size) or out of memory.
  bool init(const F32GemmConvShape& shape,
            const float* filter,
            const float* bias);

  // out [batch, out_h, out_w, out_channels] = clamp(conv(in [batch, in_h,
  // in_w, in_channels]) + bias); out_h and out_w are the caller's (checked
  // at load: the padding past the bottom and right edges follows from
  // them). False, computing nothing, when scratch cannot be had.
  bool run(const float* in,
           size_t batch,
           size_t in_h,
           size_t in_w,
           float* out,
           size_t out_h,
           size_t out_w,
           pthreadpool_t pool) const;

  // Filters at least this large (bytes) run here rather than on XNNPACK:
  // past a core's L2 on the CPUs measured (1-2 MiB), below the 2.4 MB of
  // ResNet-18's 256-channel 3x3s, whose stride-1 ones take Winograd.
  static constexpr size_t kMinFilterBytes = size_t{2} << 20;

 private:
  struct Task;
  static void run_part(void* task, size_t part);
  bool pointwise() const;

  F32GemmConvShape shape_;
  size_t depth_ = 0; // kernel_h * kernel_w * in_channels
  // The filter as sgemm's B [depth, out_channels] panels (sgemm_pack_b),
  // at packed_, 64-byte aligned in packed_storage_.
  std::unique_ptr<float[]> packed_storage_;
  const float* packed_ = nullptr;
  const float* bias_ = nullptr;
};

} // namespace xnnpack
} // namespace backends
} // namespace executorch
