#pragma once

// The optimized kernels' float32 loops on raw contiguous buffers, threaded
// on the process-wide pool (work under a grain, grain.h, stays on the
// calling thread). The kernels call them after their checks; host code outside
// a kernel call (the XNNPACK delegate's transformer steps) calls them directly.
// Matrix products: gemm_ops.h and blas/gemm.h.

#include <cstdint>

#include <executorch/kernels/optimized/simd/simd_kernels.h>

namespace executorch {
namespace kernels {
namespace optimized {

// Softmax (or log_softmax) of a [outer, n, inner] buffer along its middle
// dim.
void softmax_float(const float* in,
                   float* out,
                   int64_t outer,
                   int64_t n,
                   int64_t inner,
                   bool log);

// Layer norm of `rows` rows of n: out = (x - mean) * rstd * weight + bias.
// weight and bias may be null (1 and 0); mean and rstd (one per row) may be
// null when not wanted.
void layer_norm_float(const float* in,
                      float* out,
                      int64_t rows,
                      int64_t n,
                      const float* weight,
                      const float* bias,
                      float eps,
                      float* mean,
                      float* rstd);

// The least elements a thread's share of `op` gets (grain.h): kMathGrain
// for polynomial math and square roots, kCheapGrain for the rest.
int64_t unary_grain(UnaryOp op);

// out[i] = op(in[i]) for i < n (gelu, tanh, ...; p0 and p1 as
// simd_kernels.h says). in may equal out.
void unary_float(UnaryOp op,
                 const float* in,
                 float* out,
                 int64_t n,
                 float p0 = 0.0f,
                 float p1 = 0.0f);

} // namespace optimized
} // namespace kernels
} // namespace executorch
