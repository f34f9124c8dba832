// quantized_decomposed::choose_qparams (per tensor) and
// choose_qparams_per_token_asymmetric: the scale and zero point that map an
// input's range (widened to include 0) onto the quantized range, computed
// per call for dynamically quantized activations. Float arithmetic in the
// order of torch's references, so the results match them exactly.

#include <cinttypes>
#include <tuple>

#include <executorch/kernels/quantized/cpu/affine.h>

namespace torch {
namespace executor {
namespace native {

namespace {

bool check_outputs(KernelRuntimeContext& ctx,
                   const char* op,
                   Tensor& scale_out,
                   Tensor& zero_point_out,
                   ArrayRef<SizesType> sizes) {
  return check_dtype(ctx, op, "scale_out", scale_out, ScalarType::Double) &&
      check_dtype(ctx, op, "zero_point_out", zero_point_out, ScalarType::Long) &&
      resize_out(ctx, op, "scale_out", scale_out, sizes) &&
      resize_out(ctx, op, "zero_point_out", zero_point_out, sizes);
}

void fail_nan(KernelRuntimeContext& ctx, const char* op, int64_t row) {
  fail_arg(ctx, op, "input row %" PRId64 " contains NaN", row);
}

} // namespace

std::tuple<Tensor&, Tensor&> choose_qparams_tensor_out(
    KernelRuntimeContext& ctx,
    const Tensor& input,
    int64_t quant_min,
    int64_t quant_max,
    double eps,
    ScalarType dtype,
    Tensor& scale_out,
    Tensor& zero_point_out) {
  const char* op = "choose_qparams.Tensor_out";
  std::tuple<Tensor&, Tensor&> result(scale_out, zero_point_out);
  const SizesType one[] = {1};
  if (!quantized::check_quant_range(ctx, op, quant_min, quant_max, dtype) ||
      !check_default_dim_order(ctx, op, {&input}) ||
      !check_outputs(
          ctx, op, scale_out, zero_point_out, ArrayRef<SizesType>(one, 1))) {
    return result;
  }
  double* scale = scale_out.mutable_data_ptr<double>();
  int64_t* zero_point = zero_point_out.mutable_data_ptr<int64_t>();
  if (input.numel() == 0) {
    // torch's observers answer an empty range with scale 1, zero point 0.
    *scale = 1.0;
    *zero_point = 0;
    return result;
  }
  float lo = 0, hi = 0;
  bool finite_input = true;
  ET_SWITCH_FLOATHBF16_TYPES(input.scalar_type(), ctx, op, X, [&] {
    finite_input = quantized::min_max(input.const_data_ptr<X>(), input.numel(), &lo, &hi);
  });
  if (!finite_input) {
    fail_nan(ctx, op, 0);
    return result;
  }
  const quantized::AsymmetricParams params = quantized::choose_asymmetric(
      lo, hi, quant_min, quant_max, static_cast<float>(eps));
  *scale = static_cast<double>(params.scale);
  *zero_point = params.zero_point;
  return result;
}

std::tuple<Tensor&, Tensor&> choose_qparams_per_token_asymmetric_out(
    KernelRuntimeContext& ctx,
    const Tensor& input,
    ScalarType dtype,
    Tensor& scale_out,
    Tensor& zero_point_out) {
  const char* op = "choose_qparams_per_token_asymmetric.out";
  std::tuple<Tensor&, Tensor&> result(scale_out, zero_point_out);
  if (input.dim() == 0 || static_cast<size_t>(input.dim()) > kMaxDims) {
    fail_arg(ctx, op, "input must have 1 to %zu dims", kMaxDims);
    return result;
  }
  // Results are [..., 1]: one per row of the last dim.
  SizesType sizes[kMaxDims];
  for (ssize_t d = 0; d + 1 < input.dim(); ++d) {
    sizes[d] = input.size(d);
  }
  sizes[input.dim() - 1] = 1;
  if (!check_default_dim_order(ctx, op, {&input}) ||
      !check_outputs(ctx,
                     op,
                     scale_out,
                     zero_point_out,
                     ArrayRef<SizesType>(sizes, input.dim()))) {
    return result;
  }
  (void)dtype; // torch's reference always quantizes to [-128, 127]
  const float qmin = -128.f, qmax = 127.f;
  const float eps = std::numeric_limits<float>::epsilon();
  const int64_t width = input.size(input.dim() - 1);
  const int64_t rows = width > 0 ? input.numel() / width : 0;
  double* scales = scale_out.mutable_data_ptr<double>();
  int64_t* zero_points = zero_point_out.mutable_data_ptr<int64_t>();
  ET_SWITCH_FLOATHBF16_TYPES(input.scalar_type(), ctx, op, X, [&] {
    const X* in = input.const_data_ptr<X>();
    for (int64_t r = 0; r < rows; ++r) {
      float lo = 0, hi = 0;
      if (!quantized::min_max(in + r * width, width, &lo, &hi)) {
        fail_nan(ctx, op, r);
        return;
      }
      const float min_neg = lo < 0.f ? lo : 0.f;
      const float max_pos = hi > 0.f ? hi : 0.f;
      float s = (max_pos - min_neg) / (qmax - qmin);
      s = s > eps ? s : eps;
      const float descaled_min = min_neg / s;
      const float descaled_max = max_pos / s;
      // The zero point from whichever end loses less to rounding.
      float zp = (qmin + descaled_min) + (qmax + descaled_max) > 0.f
          ? qmin - descaled_min
          : qmax - descaled_max;
      zp = zp < qmin ? qmin : (zp > qmax ? qmax : zp);
      scales[r] = static_cast<double>(s);
      zero_points[r] = static_cast<int64_t>(std::nearbyint(zp));
    }
  });
  return result;
}

} // namespace native
} // namespace executor
} // namespace torch
