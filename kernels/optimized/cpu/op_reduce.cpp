// sum.IntList_out and mean.out on float32 over trailing dims (a global
// average pool's [-2, -1], a row's last dim, or every dim): each output is
// one contiguous row of the input, summed by the vectorized sum of the
// chosen instruction set, rows over threads. Other dims, dtypes, layouts,
// empty reductions (mean's 0 / 0) and every bad argument go to the portable
// kernels.

#include <executorch/kernels/optimized/cpu/grain.h>
#include <executorch/kernels/optimized/simd/isa.h>
#include <executorch/kernels/portable/util/checks.h>
#include <executorch/kernels/portable/util/elementwise.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

#include <NativeFunctions.h> // the portable kernels, generated

namespace torch {
namespace executor {
namespace native {

namespace {

// Sums (or averages) the rows of `self` when the reduced dims are its
// trailing ones; false when the fast path does not apply.
bool reduce_rows(KernelRuntimeContext& ctx,
                 const char* op,
                 const Tensor& self,
                 std::optional<IntArrayRef> dim,
                 bool keepdim,
                 std::optional<ScalarType> dtype,
                 bool mean,
                 Tensor& out) {
  const int64_t rank = self.dim();
  if (self.scalar_type() != ScalarType::Float ||
      out.scalar_type() != ScalarType::Float ||
      (dtype.has_value() && *dtype != ScalarType::Float) || rank == 0 ||
      rank > static_cast<int64_t>(kMaxDims) ||
      !::executorch::runtime::tensor_is_contiguous(self)) {
    return false;
  }
  // No dims (or an empty list) reduces every dim.
  bool reduced[kMaxDims] = {};
  const bool all = !dim.has_value() || dim->size() == 0;
  for (size_t i = 0; !all && i < dim->size(); ++i) {
    const int64_t d = (*dim)[i] < 0 ? (*dim)[i] + rank : (*dim)[i];
    if (d < 0 || d >= rank || reduced[d]) {
      return false;
    }
    reduced[d] = true;
  }
  int64_t first = all ? 0 : rank;
  while (!all && first > 0 && reduced[first - 1]) {
    --first;
  }
  for (int64_t d = 0; d < first; ++d) {
    if (reduced[d]) {
      return false; // not a trailing block
    }
  }
  int64_t rows = 1;
  int64_t row = 1;
  ::executorch::aten::SizesType sizes[kMaxDims];
  size_t out_rank = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < first) {
      rows *= self.size(d);
      sizes[out_rank++] = self.size(d);
    } else {
      row *= self.size(d);
      if (keepdim) {
        sizes[out_rank++] = 1;
      }
    }
  }
  if (row == 0) {
    return false;
  }
  if (!resize_out(ctx, op, "out", out, {sizes, out_rank})) {
    return true; // the context says why
  }
  if (!::executorch::runtime::tensor_is_contiguous(out)) {
    return false;
  }
  const float* in = self.const_data_ptr<float>();
  float* dst = out.mutable_data_ptr<float>();
  const auto& kernels = ::executorch::kernels::optimized::simd();
  const float scale = mean ? 1.0f / static_cast<float>(row) : 1.0f;
  ::executorch::extension::parallel_for(
      0,
      rows,
      std::max<int64_t>(1, ::executorch::kernels::optimized::kCheapGrain / row),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          dst[r] = kernels.sum(in + r * row, row) * scale;
        }
      });
  return true;
}

} // namespace

Tensor& opt_sum_dim_out(KernelRuntimeContext& ctx,
                        const Tensor& self,
                        std::optional<IntArrayRef> dim,
                        bool keepdim,
                        std::optional<ScalarType> dtype,
                        Tensor& out) {
  if (!reduce_rows(
          ctx, "sum.IntList_out", self, dim, keepdim, dtype, false, out)) {
    sum_dim_out(ctx, self, dim, keepdim, dtype, out);
  }
  return out;
}

Tensor& opt_mean_dim_out(KernelRuntimeContext& ctx,
                         const Tensor& self,
                         std::optional<IntArrayRef> dim,
                         bool keepdim,
                         std::optional<ScalarType> dtype,
                         Tensor& out) {
  if (!reduce_rows(ctx, "mean.out", self, dim, keepdim, dtype, true, out)) {
    mean_dim_out(ctx, self, dim, keepdim, dtype, out);
  }
  return out;
}

} // namespace native
} // namespace executor
} // namespace torch
