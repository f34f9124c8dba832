// quantized_decomposed::quantize_per_{tensor, channel, token, channel_group}:
// fp32 (or fp16/bf16) to integers, with parameters per tensor, per slice
// along an axis, per row of the last dim, or per group of the last dim.

#include <cinttypes>

#include <executorch/kernels/quantized/cpu/affine.h>

namespace torch {
namespace executor {
namespace native {

using quantized::QParams;
using ::executorch::runtime::EValue;
using ::executorch::runtime::Span;

namespace {

// Whether the zero point is added before rounding, which changes which
// way a tie rounds: torch's per-tensor and per-channel references round
// x / scale and then add; the per-token and per-group ones add and then
// round.
enum class ZeroPointOrder { kAfterRound, kBeforeRound };

template <typename C, typename X, typename Q>
void quantize_run(const X* in,
                  Q* out,
                  int64_t n,
                  C inv_scale,
                  C zero_point,
                  C lo,
                  C hi,
                  ZeroPointOrder order) {
  if (order == ZeroPointOrder::kAfterRound) {
    for (int64_t i = 0; i < n; ++i) {
      const C rounded =
          std::nearbyint(static_cast<C>(static_cast<float>(in[i])) * inv_scale);
      out[i] = static_cast<Q>(
          quantized::round_clamp<C>(rounded + zero_point, lo, hi));
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      out[i] = static_cast<Q>(quantized::round_clamp<C>(
          static_cast<C>(static_cast<float>(in[i])) * inv_scale + zero_point,
          lo,
          hi));
    }
  }
}

// C: float, or double when the parameter tables are double (torch then
// promotes the whole computation to double).
template <typename C>
void quantize_with(KernelRuntimeContext& ctx,
                   const char* op,
                   const Tensor& input,
                   const QParams& params,
                   int64_t quant_min,
                   int64_t quant_max,
                   ZeroPointOrder order,
                   Tensor& out) {
  const C lo = static_cast<C>(quant_min), hi = static_cast<C>(quant_max);
  ET_SWITCH_FLOATHBF16_TYPES(input.scalar_type(), ctx, op, X, [&] {
    const X* in = input.const_data_ptr<X>();
    ET_QUANTIZED_SWITCH_INT_TYPES(out.scalar_type(), ctx, op, Q, [&] {
      Q* dst = out.mutable_data_ptr<Q>();
      quantized::for_each_param_run<C>(
          params, input.numel(), [&](int64_t begin, int64_t end, C s, C zp) {
            // A per-tensor scale arrives as a double and is inverted in
            // double, like torch's `1.0 / scale`; table scales are
            // inverted in their own type.
            const C inv = params.scales == nullptr
                ? static_cast<C>(1.0 / params.scale)
                : C(1) / s;
            quantize_run<C>(
                in + begin, dst + begin, end - begin, inv, zp, lo, hi, order);
          });
    });
  });
}

bool is_double_table(const Tensor* t) {
  return t != nullptr && t->scalar_type() == ScalarType::Double;
}

Tensor& quantize_impl(KernelRuntimeContext& ctx,
                      const char* op,
                      const Tensor& input,
                      const QParams& params,
                      int64_t quant_min,
                      int64_t quant_max,
                      ScalarType dtype,
                      ZeroPointOrder order,
                      Tensor& out) {
  if (!quantized::check_quant_range(ctx, op, quant_min, quant_max, dtype) ||
      !check_dtype(ctx, op, "out", out, dtype) ||
      !check_default_dim_order(ctx, op, {&input, &out}) ||
      !quantized::check_qparams(ctx, op, params, quant_min, quant_max) ||
      !resize_like(ctx, op, out, input)) {
    return out;
  }
  if (is_double_table(params.scales)) {
    quantize_with<double>(
        ctx, op, input, params, quant_min, quant_max, order, out);
  } else {
    quantize_with<float>(
        ctx, op, input, params, quant_min, quant_max, order, out);
  }
  return out;
}


} // namespace

Tensor& quantize_per_tensor_out(KernelRuntimeContext& ctx,
                                const Tensor& input,
                                double scale,
                                int64_t zero_point,
                                int64_t quant_min,
                                int64_t quant_max,
                                ScalarType dtype,
                                Tensor& out) {
  return quantize_impl(ctx,
                       "quantize_per_tensor.out",
                       input,
                       QParams::per_tensor(scale, zero_point),
                       quant_min,
                       quant_max,
                       dtype,
                       ZeroPointOrder::kAfterRound,
                       out);
}

Tensor& quantize_per_tensor_tensor_args_out(KernelRuntimeContext& ctx,
                                            const Tensor& input,
                                            const Tensor& scale,
                                            const Tensor& zero_point,
                                            int64_t quant_min,
                                            int64_t quant_max,
                                            ScalarType dtype,
                                            Tensor& out) {
  const char* op = "quantize_per_tensor.Tensor_out";
  QParams params;
  if (!quantized::per_tensor_params(ctx, op, scale, zero_point, &params)) {
    return out;
  }
  return quantize_impl(ctx,
                       op,
                       input,
                       params,
                       quant_min,
                       quant_max,
                       dtype,
                       ZeroPointOrder::kAfterRound,
                       out);
}

Tensor& quantize_per_channel_out(KernelRuntimeContext& ctx,
                                 const Tensor& input,
                                 const Tensor& scales,
                                 const Tensor& zero_points,
                                 int64_t axis,
                                 int64_t quant_min,
                                 int64_t quant_max,
                                 ScalarType dtype,
                                 Tensor& out) {
  const char* op = "quantize_per_channel.out";
  QParams params;
  if (quantized::per_channel_layout(
          ctx, op, input, axis, scales, &zero_points, &params)) {
    quantize_impl(ctx,
                  op,
                  input,
                  params,
                  quant_min,
                  quant_max,
                  dtype,
                  ZeroPointOrder::kAfterRound,
                  out);
  }
  return out;
}

Tensor& quantize_per_token_out(KernelRuntimeContext& ctx,
                               const Tensor& input,
                               const Tensor& scales,
                               const Tensor& zero_points,
                               int64_t quant_min,
                               int64_t quant_max,
                               ScalarType dtype,
                               Tensor& out) {
  return quantize_impl(
      ctx,
      "quantize_per_token.out",
      input,
      quantized::per_token_layout(input, scales, &zero_points),
      quant_min,
      quant_max,
      dtype,
      ZeroPointOrder::kBeforeRound,
      out);
}

Tensor& quantize_per_channel_group_out(KernelRuntimeContext& ctx,
                                       const Tensor& input,
                                       const Tensor& scales,
                                       const Tensor& zero_points,
                                       int64_t quant_min,
                                       int64_t quant_max,
                                       ScalarType dtype,
                                       int64_t group_size,
                                       Tensor& out) {
  const char* op = "quantize_per_channel_group.out";
  QParams params;
  if (quantized::per_group_layout(
          ctx, op, input, scales, &zero_points, group_size, &params)) {
    quantize_impl(ctx,
                  op,
                  input,
                  params,
                  quant_min,
                  quant_max,
                  dtype,
                  ZeroPointOrder::kBeforeRound,
                  out);
  }
  return out;
}

// Load-time checks of the parameters a program fixes (affine.h).
bool quantize_per_tensor_out_check(Span<EValue* const> args,
                                   const bool* fixed) {
  return quantized::check_fixed_per_tensor(
      "quantize_per_tensor.out", /*tensors=*/false, args, fixed);
}

bool quantize_per_tensor_tensor_args_out_check(Span<EValue* const> args,
                                               const bool* fixed) {
  return quantized::check_fixed_per_tensor(
      "quantize_per_tensor.Tensor_out", /*tensors=*/true, args, fixed);
}

bool quantize_per_channel_out_check(Span<EValue* const> args,
                                    const bool* fixed) {
  return quantized::check_fixed_per_channel(
      "quantize_per_channel.out", args, fixed);
}

} // namespace native
} // namespace executor
} // namespace torch
