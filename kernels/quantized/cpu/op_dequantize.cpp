// quantized_decomposed::dequantize_per_{tensor, channel, token,
// channel_group}: integers back to floating point, (q - zero_point) * scale.

#include <executorch/kernels/quantized/cpu/affine.h>

namespace torch {
namespace executor {
namespace native {

using quantized::QParams;
using ::executorch::runtime::EValue;
using ::executorch::runtime::Span;

namespace {

template <typename C>
void dequantize_with(KernelRuntimeContext& ctx,
                     const char* op,
                     const Tensor& input,
                     const QParams& params,
                     Tensor& out) {
  ET_QUANTIZED_SWITCH_INT_TYPES(input.scalar_type(), ctx, op, Q, [&] {
    const Q* in = input.const_data_ptr<Q>();
    ET_SWITCH_FLOATHBF16_TYPES(out.scalar_type(), ctx, op, Y, [&] {
      Y* dst = out.mutable_data_ptr<Y>();
      quantized::for_each_param_run<C>(
          params, input.numel(), [&](int64_t begin, int64_t end, C s, C zp) {
            for (int64_t i = begin; i < end; ++i) {
              dst[i] = static_cast<Y>((static_cast<C>(in[i]) - zp) * s);
            }
          });
    });
  });
}

bool computes_in_double(const QParams& params, const Tensor& out) {
  auto is_double = [](const Tensor* t) {
    return t != nullptr && t->scalar_type() == ScalarType::Double;
  };
  return out.scalar_type() == ScalarType::Double ||
      is_double(params.scales) || is_double(params.zero_points);
}

Tensor& dequantize_impl(KernelRuntimeContext& ctx,
                        const char* op,
                        const Tensor& input,
                        const QParams& params,
                        int64_t quant_min,
                        int64_t quant_max,
                        ScalarType dtype,
                        ScalarType out_dtype,
                        Tensor& out) {
  if (!quantized::check_quant_range(ctx, op, quant_min, quant_max, dtype) ||
      !check_dtype(ctx, op, "input", input, dtype) ||
      !check_dtype(ctx, op, "out", out, out_dtype) ||
      !check_default_dim_order(ctx, op, {&input, &out}) ||
      !quantized::check_qparams(ctx, op, params, quant_min, quant_max) ||
      !resize_like(ctx, op, out, input)) {
    return out;
  }
  if (computes_in_double(params, out)) {
    dequantize_with<double>(ctx, op, input, params, out);
  } else {
    dequantize_with<float>(ctx, op, input, params, out);
  }
  return out;
}


const Tensor* optional_table(const std::optional<Tensor>& table) {
  return table.has_value() ? &*table : nullptr;
}

ScalarType float_or(std::optional<ScalarType> dtype) {
  return dtype.has_value() ? *dtype : ScalarType::Float;
}

} // namespace

Tensor& dequantize_per_tensor_out(KernelRuntimeContext& ctx,
                                  const Tensor& input,
                                  double scale,
                                  int64_t zero_point,
                                  int64_t quant_min,
                                  int64_t quant_max,
                                  ScalarType dtype,
                                  std::optional<ScalarType> out_dtype,
                                  Tensor& out) {
  return dequantize_impl(ctx,
                         "dequantize_per_tensor.out",
                         input,
                         QParams::per_tensor(scale, zero_point),
                         quant_min,
                         quant_max,
                         dtype,
                         float_or(out_dtype),
                         out);
}

Tensor& dequantize_per_tensor_tensor_args_out(
    KernelRuntimeContext& ctx,
    const Tensor& input,
    const Tensor& scale,
    const Tensor& zero_point,
    int64_t quant_min,
    int64_t quant_max,
    ScalarType dtype,
    std::optional<ScalarType> out_dtype,
    Tensor& out) {
  const char* op = "dequantize_per_tensor.Tensor_out";
  QParams params;
  if (!quantized::per_tensor_params(ctx, op, scale, zero_point, &params)) {
    return out;
  }
  return dequantize_impl(ctx,
                         op,
                         input,
                         params,
                         quant_min,
                         quant_max,
                         dtype,
                         float_or(out_dtype),
                         out);
}

Tensor& dequantize_per_channel_out(KernelRuntimeContext& ctx,
                                   const Tensor& input,
                                   const Tensor& scales,
                                   const std::optional<Tensor>& zero_points,
                                   int64_t axis,
                                   int64_t quant_min,
                                   int64_t quant_max,
                                   ScalarType dtype,
                                   std::optional<ScalarType> out_dtype,
                                   Tensor& out) {
  const char* op = "dequantize_per_channel.out";
  QParams params;
  if (quantized::per_channel_layout(
          ctx, op, input, axis, scales, optional_table(zero_points), &params)) {
    dequantize_impl(ctx,
                    op,
                    input,
                    params,
                    quant_min,
                    quant_max,
                    dtype,
                    float_or(out_dtype),
                    out);
  }
  return out;
}

Tensor& dequantize_per_token_out(KernelRuntimeContext& ctx,
                                 const Tensor& input,
                                 const Tensor& scales,
                                 const Tensor& zero_points,
                                 int64_t quant_min,
                                 int64_t quant_max,
                                 ScalarType dtype,
                                 ScalarType output_dtype,
                                 Tensor& out) {
  return dequantize_impl(
      ctx,
      "dequantize_per_token.out",
      input,
      quantized::per_token_layout(input, scales, &zero_points),
      quant_min,
      quant_max,
      dtype,
      output_dtype,
      out);
}

Tensor& dequantize_per_channel_group_out(
    KernelRuntimeContext& ctx,
    const Tensor& input,
    const Tensor& scales,
    const std::optional<Tensor>& zero_points,
    int64_t quant_min,
    int64_t quant_max,
    ScalarType dtype,
    int64_t group_size,
    ScalarType output_dtype,
    Tensor& out) {
  const char* op = "dequantize_per_channel_group.out";
  QParams params;
  if (quantized::per_group_layout(ctx,
                                  op,
                                  input,
                                  scales,
                                  optional_table(zero_points),
                                  group_size,
                                  &params)) {
    dequantize_impl(ctx,
                    op,
                    input,
                    params,
                    quant_min,
                    quant_max,
                    dtype,
                    output_dtype,
                    out);
  }
  return out;
}

// Load-time checks of the parameters a program fixes (affine.h).
bool dequantize_per_tensor_out_check(Span<EValue* const> args,
                                     const bool* fixed) {
  return quantized::check_fixed_per_tensor(
      "dequantize_per_tensor.out", /*tensors=*/false, args, fixed);
}

bool dequantize_per_tensor_tensor_args_out_check(Span<EValue* const> args,
                                                 const bool* fixed) {
  return quantized::check_fixed_per_tensor(
      "dequantize_per_tensor.Tensor_out", /*tensors=*/true, args, fixed);
}

bool dequantize_per_channel_out_check(Span<EValue* const> args,
                                      const bool* fixed) {
  return quantized::check_fixed_per_channel(
      "dequantize_per_channel.out", args, fixed);
}

} // namespace native
} // namespace executor
} // namespace torch
