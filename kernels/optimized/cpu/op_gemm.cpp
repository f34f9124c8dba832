// mm, bmm and addmm on float32 through the packed GEMM (blas/gemm.h), any
// strides on the inputs (a transposed weight is read in place). Other
// dtypes go to the portable kernels, which also report every bad argument.

#include <algorithm>
#include <atomic>
#include <numeric>

#include <executorch/kernels/optimized/blas/gemm.h>
#include <executorch/kernels/optimized/cpu/float_runs.h>
#include <executorch/kernels/optimized/cpu/gemm_ops.h>
#include <executorch/kernels/optimized/cpu/scratch.h>
#include <executorch/kernels/optimized/simd/isa.h>
#include <executorch/kernels/portable/util/checks.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

#include <NativeFunctions.h> // the portable kernels, generated

namespace executorch {
namespace kernels {
namespace optimized {

using ::executorch::aten::Tensor;
using ::executorch::runtime::KernelRuntimeContext;

namespace {

// Multiply-adds per batch task when bmm spreads batches over threads.
constexpr int64_t kBatchGrainMacs = int64_t{1} << 21;

// The first (or only) matrix of a rank-2 or rank-3 tensor.
MatrixView matrix_of(const Tensor& t) {
  const int64_t rank = t.dim();
  return MatrixView{
      t.const_data_ptr<float>(), t.strides()[rank - 2], t.strides()[rank - 1]};
}

bool has_row_major_out(const Tensor& out) {
  const int64_t rank = out.dim();
  const int64_t n = out.size(rank - 1);
  const int64_t m = out.size(rank - 2);
  return out.strides()[rank - 1] == 1 && out.strides()[rank - 2] == n &&
         (rank == 2 || out.strides()[0] == m * n || m * n == 0);
}

} // namespace

bool batch_matmul_float(int64_t batches,
                        int64_t m,
                        int64_t n,
                        int64_t k,
                        MatrixView a,
                        int64_t a_batch_stride,
                        MatrixView b,
                        int64_t b_batch_stride,
                        float* c,
                        const GemmEpilogue& epilogue) {
  const size_t scratch_bytes = sgemm_scratch_bytes(m, n, k);
  // Batches run one per task (several when small; a nested parallel_for
  // runs inline), a single product threads inside the GEMM. When the
  // threads do not divide the batches (ViT-tiny's 3 heads at 2 threads),
  // each batch's rows are cut into `parts` MR-aligned blocks, so that the
  // tasks divide evenly.
  const int64_t threads = ::executorch::extension::get_thread_count();
  const int64_t mr = simd().gemm_mr;
  const int64_t row_panels = (m + mr - 1) / mr;
  int64_t parts = 1;
  if (batches > 1 && row_panels > 1) {
    parts = std::min(threads / std::gcd(batches, threads), row_panels);
  }
  const auto first_row = [&](int64_t part) {
    return std::min(m, first_panel_of_part(part, parts, row_panels) * mr);
  };
  const int64_t macs_per_task = std::max<int64_t>(m * n * k / parts, 1);
  std::atomic<bool> ok{true};
  ::executorch::extension::parallel_for(
      0,
      batches * parts,
      std::max<int64_t>(1, kBatchGrainMacs / macs_per_task),
      [&](int64_t begin, int64_t end) {
        void* scratch = thread_scratch(scratch_bytes);
        for (int64_t t = begin; t < end; ++t) {
          const int64_t i = t / parts;
          const int64_t part = t % parts;
          const int64_t row0 = first_row(part);
          const int64_t row1 = first_row(part + 1);
          MatrixView ai = a;
          MatrixView bi = b;
          ai.data += i * a_batch_stride + row0 * a.row_stride;
          bi.data += i * b_batch_stride;
          GemmEpilogue rows_epilogue = epilogue;
          if (epilogue.bias != nullptr) {
            rows_epilogue.bias += row0 * epilogue.bias_row_stride;
          }
          if (!sgemm(row1 - row0,
                     n,
                     k,
                     ai,
                     GemmB::matrix_of(bi),
                     c + i * m * n + row0 * n,
                     n,
                     rows_epilogue,
                     scratch,
                     scratch_bytes)) {
            ok = false;
          }
        }
      });
  return ok;
}

bool float_matmul(KernelRuntimeContext& ctx,
                  const char* op,
                  const Tensor& a,
                  const Tensor& b,
                  Tensor& out,
                  const GemmEpilogue& epilogue) {
  namespace native = ::torch::executor::native;
  const int64_t rank = a.dim();
  if (!all_float({&a, &b, &out}) || (rank != 2 && rank != 3) ||
      b.dim() != rank || a.size(rank - 1) != b.size(rank - 2) ||
      (rank == 3 && a.size(0) != b.size(0))) {
    return false;
  }
  const int64_t m = a.size(rank - 2);
  const int64_t k = a.size(rank - 1);
  const int64_t n = b.size(rank - 1);
  const int64_t batches = rank == 3 ? a.size(0) : 1;
  ::executorch::aten::SizesType shape[3];
  if (rank == 3) {
    shape[0] = static_cast<::executorch::aten::SizesType>(batches);
  }
  shape[rank - 2] = static_cast<::executorch::aten::SizesType>(m);
  shape[rank - 1] = static_cast<::executorch::aten::SizesType>(n);
  if (!native::resize_out(ctx, op, "out", out, {shape, size_t(rank)})) {
    return true;
  }
  if (!has_row_major_out(out)) {
    return false;
  }
  if (!batch_matmul_float(batches,
                          m,
                          n,
                          k,
                          matrix_of(a),
                          rank == 3 ? a.strides()[0] : 0,
                          matrix_of(b),
                          rank == 3 ? b.strides()[0] : 0,
                          out.mutable_data_ptr<float>(),
                          epilogue)) {
    native::fail_arg(ctx, op, "out of memory for the GEMM's scratch");
  }
  return true;
}

} // namespace optimized
} // namespace kernels
} // namespace executorch

namespace torch {
namespace executor {
namespace native {

using ::executorch::kernels::optimized::float_matmul;
using ::executorch::kernels::optimized::GemmEpilogue;

Tensor& opt_mm_out(KernelRuntimeContext& ctx,
                   const Tensor& self,
                   const Tensor& mat2,
                   Tensor& out) {
  if (self.dim() != 2 ||
      !float_matmul(ctx, "mm.out", self, mat2, out, GemmEpilogue{})) {
    mm_out(ctx, self, mat2, out);
  }
  return out;
}

Tensor& opt_bmm_out(KernelRuntimeContext& ctx,
                    const Tensor& self,
                    const Tensor& mat2,
                    Tensor& out) {
  if (self.dim() != 3 ||
      !float_matmul(ctx, "bmm.out", self, mat2, out, GemmEpilogue{})) {
    bmm_out(ctx, self, mat2, out);
  }
  return out;
}

Tensor& opt_addmm_out(KernelRuntimeContext& ctx,
                      const Tensor& self,
                      const Tensor& mat1,
                      const Tensor& mat2,
                      const Scalar& beta,
                      const Scalar& alpha,
                      Tensor& out) {
  // The bias term: self broadcast to [m, n] through zero strides. A zero
  // beta ignores self, NaN included, as PyTorch does.
  const int64_t m = mat1.dim() == 2 ? mat1.size(0) : -1;
  const int64_t n = mat2.dim() == 2 ? mat2.size(1) : -1;
  const bool bias_fits =
      self.scalar_type() == ScalarType::Float && self.dim() <= 2 &&
      (self.dim() < 2 || self.size(0) == m || self.size(0) == 1) &&
      (self.dim() < 1 || self.size(self.dim() - 1) == n ||
       self.size(self.dim() - 1) == 1);
  GemmEpilogue epilogue;
  epilogue.alpha = alpha.to<float>();
  epilogue.bias_scale = beta.to<float>();
  if (bias_fits && epilogue.bias_scale != 0.0f) {
    const int64_t d = self.dim();
    epilogue.bias = self.const_data_ptr<float>();
    epilogue.bias_col_stride =
        d >= 1 && self.size(d - 1) != 1 ? self.strides()[d - 1] : 0;
    epilogue.bias_row_stride =
        d == 2 && self.size(0) != 1 ? self.strides()[0] : 0;
  }
  if (mat1.dim() != 2 || !bias_fits ||
      !float_matmul(ctx, "addmm.out", mat1, mat2, out, epilogue)) {
    addmm_out(ctx, self, mat1, mat2, beta, alpha, out);
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
