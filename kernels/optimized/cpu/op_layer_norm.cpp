// native_layer_norm on contiguous float32: one vectorized pass per row
// (simd layer_norm_row), rows spread over the thread pool. Anything else
// goes to the portable kernel, which also reports bad arguments.

#include <algorithm>

#include <executorch/kernels/optimized/cpu/float_ops.h>
#include <executorch/kernels/optimized/cpu/grain.h>
#include <executorch/kernels/optimized/simd/isa.h>
#include <executorch/kernels/portable/util/checks.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/kernel/thread_parallel_interface.h>

#include <NativeFunctions.h> // the portable kernels, generated

namespace executorch {
namespace kernels {
namespace optimized {

void layer_norm_float(const float* in,
                      float* out,
                      int64_t rows,
                      int64_t n,
                      const float* weight,
                      const float* bias,
                      float eps,
                      float* mean,
                      float* rstd) {
  if (rows <= 0) {
    return;
  }
  const SimdKernels& kernels = simd();
  ::executorch::extension::parallel_for(
      0,
      rows,
      std::max<int64_t>(1, kRowNormGrain / std::max<int64_t>(n, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          float row_mean;
          float row_rstd;
          kernels.layer_norm_row(in + r * n,
                                 out + r * n,
                                 n,
                                 weight,
                                 bias,
                                 eps,
                                 &row_mean,
                                 &row_rstd);
          if (mean != nullptr) {
            mean[r] = row_mean;
          }
          if (rstd != nullptr) {
            rstd[r] = row_rstd;
          }
        }
      });
}

} // namespace optimized
} // namespace kernels
} // namespace executorch

namespace torch {
namespace executor {
namespace native {

namespace {

bool is_dense_float(const Tensor& t) {
  return t.scalar_type() == ScalarType::Float &&
         ::executorch::runtime::tensor_is_contiguous(t);
}

// A weight or bias the fast path takes: absent, or `lane` dense floats.
bool fits_lane(const std::optional<Tensor>& t, int64_t lane) {
  return !t.has_value() || (is_dense_float(*t) && t->numel() == lane);
}

const float* data_or_null(const std::optional<Tensor>& t) {
  return t.has_value() ? t->const_data_ptr<float>() : nullptr;
}

} // namespace

std::tuple<Tensor&, Tensor&, Tensor&> opt_native_layer_norm_out(
    KernelRuntimeContext& ctx,
    const Tensor& input,
    IntArrayRef normalized_shape,
    const std::optional<Tensor>& weight,
    const std::optional<Tensor>& bias,
    double eps,
    Tensor& out,
    Tensor& mean_out,
    Tensor& rstd_out) {
  const char* op = "native_layer_norm.out";
  std::tuple<Tensor&, Tensor&, Tensor&> result(out, mean_out, rstd_out);
  const int64_t rank = input.dim();
  const int64_t axis = rank - static_cast<int64_t>(normalized_shape.size());
  bool fast = is_dense_float(input) && is_dense_float(out) &&
              mean_out.scalar_type() == ScalarType::Float &&
              rstd_out.scalar_type() == ScalarType::Float &&
              !normalized_shape.empty() && axis >= 0 &&
              rank <= static_cast<int64_t>(kMaxDims);
  int64_t lane = 1;
  for (int64_t d = std::max<int64_t>(axis, 0); fast && d < rank; ++d) {
    fast = input.size(d) == normalized_shape[d - axis];
    lane *= input.size(d);
  }
  if (!fast || !fits_lane(weight, lane) || !fits_lane(bias, lane)) {
    return native_layer_norm_out(ctx,
                                 input,
                                 normalized_shape,
                                 weight,
                                 bias,
                                 eps,
                                 out,
                                 mean_out,
                                 rstd_out);
  }
  ::executorch::aten::SizesType stat_shape[kMaxDims];
  for (int64_t d = 0; d < rank; ++d) {
    stat_shape[d] = d < axis ? input.size(d) : 1;
  }
  const ArrayRef<::executorch::aten::SizesType> stats(
      stat_shape, static_cast<size_t>(rank));
  if (!resize_like(ctx, op, out, input) ||
      !resize_out(ctx, op, "out1", mean_out, stats) ||
      !resize_out(ctx, op, "out2", rstd_out, stats)) {
    return result;
  }
  if (!::executorch::runtime::tensor_is_contiguous(mean_out) ||
      !::executorch::runtime::tensor_is_contiguous(rstd_out)) {
    return native_layer_norm_out(ctx,
                                 input,
                                 normalized_shape,
                                 weight,
                                 bias,
                                 eps,
                                 out,
                                 mean_out,
                                 rstd_out);
  }
  const int64_t rows = lane == 0 ? 0 : input.numel() / lane;
  ::executorch::kernels::optimized::layer_norm_float(
      input.const_data_ptr<float>(),
      out.mutable_data_ptr<float>(),
      rows,
      lane,
      data_or_null(weight),
      data_or_null(bias),
      static_cast<float>(eps),
      mean_out.mutable_data_ptr<float>(),
      rstd_out.mutable_data_ptr<float>());
  return result;
}

} // namespace native
} // namespace executor
} // namespace torch
