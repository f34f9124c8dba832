#pragma once

// Matrix products on tensors through the packed GEMM, for the optimized
// kernels (mm, bmm, addmm) and for host code that multiplies tensors
// outside a kernel call (the XNNPACK delegate's batch matmul).

#include <executorch/kernels/optimized/blas/gemm.h>
#include <executorch/runtime/kernel/kernel_includes.h>

namespace executorch {
namespace kernels {
namespace optimized {

// out = epilogue(a @ b) for float32 matrices (rank 2) or batches of them
// (rank 3), any strides on a and b; resizes out to [batch, m, n]. The
// epilogue's bias, if any, is applied to every batch alike. Returns false,
// touching nothing but out's shape, when the arguments are not that (other
// dtypes or ranks, mismatched shapes, an out that is not row-major); the
// caller then takes its general path, which reports what was wrong. Returns
// true when out holds the product or `ctx` has failed with the reason
// (out's shape cannot change, scratch memory ran out).
// c[i] = epilogue(a[i] @ b[i]) for i < batches: a[i] is the m x k matrix
// `a` moved by i * a_batch_stride floats, b[i] likewise (k x n), c[i] the
// row-major m x n matrix at c + i * m * n. Threaded: small products one per
// task (each cut into row blocks when the threads do not divide the
// batches), a single large one split inside the GEMM. Scratch comes from
// cpu/scratch.h. Returns false when scratch memory ran out (c is then
// incomplete).
bool batch_matmul_float(int64_t batches,
                        int64_t m,
                        int64_t n,
                        int64_t k,
                        MatrixView a,
                        int64_t a_batch_stride,
                        MatrixView b,
                        int64_t b_batch_stride,
                        float* c,
                        const GemmEpilogue& epilogue);

bool float_matmul(::executorch::runtime::KernelRuntimeContext& ctx,
                  const char* op,
                  const ::executorch::aten::Tensor& a,
                  const ::executorch::aten::Tensor& b,
                  ::executorch::aten::Tensor& out,
                  const GemmEpilogue& epilogue);

} // namespace optimized
} // namespace kernels
} // namespace executorch
