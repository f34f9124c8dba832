#pragma once

// Winograd F(4x4, 3x3) convolution in float32: 3x3 kernels, stride 1,
// dilation 1, one group. The one implementation behind both the optimized
// kernels' convolution (op_convolution.cpp) and the XNNPACK delegate's
// host kernel for fp32 convolutions (backends/xnnpack/runtime/
// host_kernels.cpp).
//
// How: the output is cut into 4x4 tiles, each read from a 6x6 input
// window. Every window is transformed (V = B^T d B, per channel: 36
// values), every filter once (U = G g G^T), and the 36 entries of a tile
// are 36 independent matrix products M[e] = V[e] U[e], [tiles x in_c] by
// [in_c x out_c], on the GEMM's microkernel (simd/simd_kernels.h) with U
// packed into its B panels at init. The output transform (A^T M A) adds
// the bias and clamps. That is 36 multiply-adds per 16 outputs and input
// channel instead of 144 (2.25 instead of 9), at the price of the
// transforms and of rounding: see kernels/optimized/README.md for the
// measured error and speed, and why F(4x4) rather than F(2x2) or F(6x6).
//
// Work is cut into tasks: a block of tiles (sized so that its V and M stay
// in a core's L2) times a range of output channels (split only when the
// blocks alone would leave threads idle). The caller runs the tasks on its
// own threads (parallel_for, or the delegate's pthreadpool), each with
// scratch_bytes() of scratch; activations are NHWC-strided (channels
// contiguous).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>

#include <executorch/kernels/optimized/simd/simd_kernels.h>

namespace executorch {
namespace kernels {
namespace optimized {

// One call's activations and geometry. Pixel (n, y, x) of the input starts
// at in[n * in_sn + y * in_sh + x * in_sw] (in_c contiguous floats), of the
// output at out[n * out_sn + y * out_sh + x * out_sw] (out_c floats).
// Output pixel (y, x) reads input rows y - pad_top .. y - pad_top + 2 and
// columns x - pad_left .. x - pad_left + 2, zero outside the input.
struct WinogradIo {
  const float* in = nullptr;
  int64_t in_sn = 0, in_sh = 0, in_sw = 0;
  float* out = nullptr;
  int64_t out_sn = 0, out_sh = 0, out_sw = 0;
  int64_t batch = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t pad_top = 0, pad_left = 0;
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
};

class Winograd3x3 {
 public:
  // Whether Winograd beats the GEMM-based convolution on this shape: enough
  // channels for the transforms to pay and enough 4x4 tiles for the
  // products to fill the microkernel's rows (the measurements in
  // kernels/optimized/README.md).
  static bool pays(int64_t in_c, int64_t out_c, int64_t out_pixels);

  // Sizes the packed filter for the SIMD kernels simd() returns now:
  // packed_floats() floats. False when a channel count is not positive
  // (or the microkernel's panels are wider than the packing handles).
  bool init(int64_t in_c, int64_t out_c);
  size_t packed_floats() const;

  // Transforms and packs the filter, whose element (k, c, ky, kx) is
  // filter[k * s_k + c * s_c + ky * s_y + kx * s_x], and the bias
  // ([out_c], null for none) into `packed` (packed_floats() floats owned by
  // the caller: a buffer kept from load, or per-call scratch), which run()
  // then reads.
  void pack(const float* filter,
            int64_t s_k,
            int64_t s_c,
            int64_t s_y,
            int64_t s_x,
            const float* bias,
            float* packed);

  // The tasks run() takes for `io` with up to `threads` threads, and the
  // scratch (bytes, 64-byte aligned) each needs.
  int64_t tasks(const WinogradIo& io, int64_t threads) const;
  size_t scratch_bytes(const WinogradIo& io, int64_t threads) const;

  // Computes task `task` of tasks(io, threads) (same threads).
  void run(const WinogradIo& io,
           int64_t threads,
           int64_t task,
           void* scratch) const;

  int64_t in_channels() const {
    return in_c_;
  }
  int64_t out_channels() const {
    return out_c_;
  }

 private:
  struct Plan {
    int64_t tiles_h, tiles_w, tiles; // over the whole batch
    int64_t block;                   // tiles per task, a multiple of MR
    int64_t blocks;
    int64_t panel_splits;     // output channel ranges per block
    int64_t panels_per_split; // NR-wide panels of output channels
  };
  Plan plan(const WinogradIo& io, int64_t threads) const;

  const SimdKernels* kernels_ = nullptr;
  int64_t in_c_ = 0, out_c_ = 0;
  int64_t panels_ = 0; // out_c in NR-wide panels
  // U[e] for e < 36 as the microkernel's B panels: panel p of U[e] holds,
  // for each input channel c, output channels p * NR .. p * NR + NR - 1
  // (zero past out_c); then the bias, panels_ * NR floats.
  const float* packed_ = nullptr;
};

// Convolutions run through Winograd3x3 since the process started (every
// caller counts one per call): tests check that a path takes it.
std::atomic<int64_t>& winograd_convolutions_run();

} // namespace optimized
} // namespace kernels
} // namespace executorch
