#pragma once

// SimdKernels: the inner loops of the optimized kernels, built once per
// instruction set (simd_kernels_impl.cpp on vec.h) and chosen at run time
// by simd() (isa.h). Everything here works on contiguous float32 runs;
// shapes, strides, dtypes, broadcasting and threads are the caller's.
// Every function is thread-safe (no state).

#include <cstdint>

namespace executorch {
namespace kernels {
namespace optimized {

enum class BinaryOp : uint8_t {
  kAdd, // a + alpha * b
  kSub, // a - alpha * b
  kMul,
  kDiv,
  kMaximum, // NaN-propagating, as torch.maximum
  kMinimum,
};

enum class UnaryOp : uint8_t {
  kExp,
  kTanh,
  kSigmoid,
  kGeluErf,  // gelu(approximate="none")
  kGeluTanh, // gelu(approximate="tanh")
  kSilu,
  kRelu,
  kClamp,  // min(max(x, p0), p1); NaN stays NaN
  kAffine, // p0 * x + p1 (batch norm's per-channel scale and shift)
  kHardswish,
  kNeg,
  kAbs,
  kSqrt,
  kRsqrt,
  kReciprocal,
};

// The widest vector, in floats: how far weighted_rows may read past a row.
constexpr int64_t kWeightedRowsOverread = 16;

struct SimdKernels {
  const char* isa_name;

  // GEMM microkernel: the MR x NR block C = A_panel * B_panel over kc
  // steps, where A_panel holds MR floats per step and B_panel NR floats
  // per step (gemm.cpp packs them). With `accumulate` it adds to C instead
  // of overwriting it. C(i, j) is c[i * ldc + j].
  int gemm_mr;
  int gemm_nr;
  void (*gemm_microkernel)(int64_t kc,
                           const float* a_panel,
                           const float* b_panel,
                           float* c,
                           int64_t ldc,
                           bool accumulate);
  // The same with A read in place: A_panel's row i is a[i * lda ...], kc
  // contiguous floats (rows of a row-major A need no packing), for `rows`
  // rows of A and C, 1 <= rows <= MR: a short last panel (a one-row
  // product, an LLM's decode step) computes only its live rows instead of
  // MR rows with zeros.
  void (*gemm_microkernel_rows)(int64_t kc,
                                const float* a,
                                int64_t lda,
                                const float* b_panel,
                                float* c,
                                int64_t ldc,
                                bool accumulate,
                                int64_t rows);

  // out[i] = a[i * a_step] op b[i * b_step], steps 0 (broadcast) or 1.
  void (*binary)(BinaryOp op,
                 const float* a,
                 int64_t a_step,
                 const float* b,
                 int64_t b_step,
                 float* out,
                 int64_t n,
                 float alpha);
  // out[i] = op(in[i]); p0, p1 as the op says.
  void (*unary)(
      UnaryOp op, const float* in, float* out, int64_t n, float p0, float p1);

  float (*sum)(const float* x, int64_t n);
  // acc[i] += x[i]: reductions over an outer dim, vectorized along the
  // inner one.
  void (*accumulate)(float* acc, const float* x, int64_t n);

  // Softmax (or log_softmax) of one contiguous row.
  void (*softmax_row)(const float* in, float* out, int64_t n, bool log);
  // Softmax along a dim of `n` entries `stride` apart, for `lanes`
  // adjacent positions at once (lanes <= stride): row r of lane l is
  // in[r * stride + l]. `scratch` holds `lanes` floats.
  void (*softmax_lanes)(const float* in,
                        float* out,
                        int64_t n,
                        int64_t stride,
                        int64_t lanes,
                        bool log,
                        float* scratch);

  // Layer norm of one row: out = (x - mean) * rstd * weight + bias, weight
  // and bias may be null (1 and 0); returns mean and rstd.
  void (*layer_norm_row)(const float* in,
                         float* out,
                         int64_t n,
                         const float* weight,
                         const float* bias,
                         float eps,
                         float* mean,
                         float* rstd);

  // out[x] = bias + sum over t < taps of weights[t] * rows[t][x], x < n: one
  // output row of a depthwise convolution, a tap per kernel entry. A null
  // row adds nothing (the tap falls outside the image). Each row must be
  // readable for kWeightedRowsOverread floats past n (the last vector is
  // loaded whole); only out[0, n) is written.
  void (*weighted_rows)(const float* const* rows,
                        const float* weights,
                        int64_t taps,
                        float bias,
                        float* out,
                        int64_t n);

  // The F(4x4, 3x3) Winograd transforms of cpu/winograd.h, vectorized
  // along channels. winograd_input: v[e * v_stride + c] for e < 36 (the
  // 6x6 tile row-major), c < channels, is the input transform B^T d B of
  // the 6x6 window whose pixel (r, s) holds channel c at window[r * 6 +
  // s][c]. winograd_output: out[p][c] for the 16 output pixels p < 16 (4x4
  // row-major; a null out[p] is outside the output and not written),
  // c < channels, is clamp(A^T m A + bias[c], min, max) where entry e of
  // channel c's 6x6 tile is m[e * m_stride + c]; bias may be null.
  // winograd_filter: u[e * u_stride + j] for e < 36, j < count, is entry e
  // of G g G^T for the 3x3 filter g whose element (y, x) is
  // filters[j][y * s_y + x * s_x].
  void (*winograd_filter)(const float* const* filters,
                          int64_t count,
                          int64_t s_y,
                          int64_t s_x,
                          float* u,
                          int64_t u_stride);
  void (*winograd_input)(const float* const* window,
                         int64_t channels,
                         float* v,
                         int64_t v_stride);
  void (*winograd_output)(const float* m,
                          int64_t m_stride,
                          int64_t channels,
                          const float* bias,
                          float min,
                          float max,
                          float* const* out);
};

} // namespace optimized
} // namespace kernels
} // namespace executorch
