// et_quantized::weight_only_linear and
// et_quantized::dynamic_int8_linear_panels: linear layers that read 4- or 8-bit
// group-quantized weights directly (the compiler fuses torchao's and PT2E's
// "dequantize the weight, then linear" patterns into them; see
// exir/passes/fuse_quantized_weights.py). dynamic_int8_linear_panels first
// quantizes its input to int8 per row (token) or per tensor, with the
// parameters torch's reference would choose, then multiplies in integers
// (quantized_linear.h). weight_only_linear's weight is in the row layout,
// dynamic_int8_linear_panels's in the panel layout (quantized_linear.h): [N,
// panel_row_bytes(bits, K)] bytes.

#include <cinttypes>

#include <executorch/kernels/quantized/cpu/affine.h>
#include <executorch/kernels/quantized/cpu/quantized_linear.h>

namespace torch {
namespace executor {
namespace native {

using ::executorch::runtime::EValue;
using ::executorch::runtime::Span;
using quantized::PackedWeights;

namespace {

bool check_bits(KernelRuntimeContext& ctx, const char* op, int64_t bits) {
  if (bits != 4 && bits != 8) {
    fail_arg(ctx, op, "weight_bits must be 4 or 8, got %" PRId64, bits);
    return false;
  }
  return true;
}

// Checks the layout of the quantization of a weight with `cols` input
// features of `bits` bits: the tables' dtypes and group_size against the
// cols.
bool check_weight_layout(KernelRuntimeContext& ctx,
                         const char* op,
                         int64_t cols,
                         const Tensor& scales,
                         const Tensor* zero_points,
                         int64_t bits,
                         int64_t group_size) {
  if (!check_dtype(ctx, op, "weight_scales", scales, ScalarType::Float)) {
    return false;
  }
  if (group_size <= 0 || cols % group_size != 0 ||
      (bits == 4 && group_size % 2 != 0)) {
    fail_arg(ctx,
             op,
             "group_size %" PRId64 " must divide the %" PRId64
             " input features (and be even for 4 bits)",
             group_size,
             cols);
    return false;
  }
  return zero_points == nullptr ||
         check_dtype(
             ctx, op, "weight_zero_points", *zero_points, ScalarType::Char);
}

// The detailed check of the weight's scales and zero points (it names the
// bad entry or the wrong size): false, with the error set, if they are
// invalid.
bool check_weight_qparams(KernelRuntimeContext& ctx,
                          const char* op,
                          const Tensor& scales,
                          const Tensor* zero_points,
                          int64_t bits,
                          int64_t count) {
  const int64_t qmax = bits == 4 ? 7 : 127;
  return quantized::check_qparams(
      ctx,
      op,
      quantized::QParams::table(scales, zero_points, 1, count),
      -qmax - 1,
      qmax);
}

// Reports invalid quantization parameters that the linear found.
void fail_weight_qparams(KernelRuntimeContext& ctx,
                         const char* op,
                         const Tensor& scales,
                         const std::optional<Tensor>& zero_points,
                         const PackedWeights& w) {
  const int64_t count = w.rows * (w.cols / w.group_size);
  if (check_weight_qparams(ctx,
                           op,
                           scales,
                           zero_points.has_value() ? &*zero_points : nullptr,
                           w.bits,
                           count)) {
    fail_arg(ctx, op, "invalid weight scales or zero points");
  }
}

// Panels hold uint8 (8-bit values stored + 128); a weight of another dtype
// is refused rather than multiplied as panels. (Programs of the row layout
// name another operator, dynamic_int8_linear, which refuses them.)
bool check_panel_dtype(KernelRuntimeContext& ctx,
                       const char* op,
                       const Tensor& weight) {
  return check_dtype(ctx, op, "weight (panels)", weight, ScalarType::Byte);
}

// Bytes per output feature of a weight with `cols` input features of
// `bits` bits, in the row layout or the panel layout.
int64_t weight_row_bytes(bool panels, int64_t bits, int64_t cols) {
  return panels ? quantized::panel_row_bytes(bits, cols)
                : (bits == 4 ? cols / 2 : cols);
}

// The load-time check (affine.h) of a linear's weight quantization, from
// (input, weight, weight_scales, weight_zero_points, weight_bits,
// group_size, ...) when the program fixes all but the input: the layout,
// then every scale and zero point once (at run time the linear checks them
// as it reads them).
bool check_fixed_weight(const char* op,
                        bool panels,
                        Span<EValue* const> args,
                        const bool* fixed) {
  for (size_t i = 1; i <= 5; ++i) {
    if (!fixed[i]) {
      return true;
    }
  }
  KernelRuntimeContext ctx;
  const Tensor& weight = args[1]->toTensor();
  const Tensor& scales = args[2]->toTensor();
  const Tensor* zps = args[3]->isNone() ? nullptr : &args[3]->toTensor();
  const int64_t bits = args[4]->toInt();
  const int64_t group_size = args[5]->toInt();
  if (!check_bits(ctx, op, bits) ||
      !check_rank(ctx, op, "weight", weight, {2}) ||
      (panels && !check_panel_dtype(ctx, op, weight))) {
    return false;
  }
  // The row layout gives K; the panel one pads it, and K is what the
  // scales' groups cover.
  const int64_t rows = weight.size(0);
  const int64_t cols = !panels ? weight.size(1) * (bits == 4 ? 2 : 1)
                       : rows > 0 && group_size > 0
                           ? scales.numel() / rows * group_size
                           : 0;
  if (panels && rows > 0 &&
      weight.size(1) != weight_row_bytes(true, bits, cols)) {
    fail_arg(ctx,
             op,
             "weight must be [N, %" PRId64 "] for %" PRId64
             " input features of %" PRId64 " bits in panels, got [%zd, %zd]",
             weight_row_bytes(true, bits, cols),
             cols,
             bits,
             static_cast<ssize_t>(weight.size(0)),
             static_cast<ssize_t>(weight.size(1)));
    return false;
  }
  return check_weight_layout(ctx, op, cols, scales, zps, bits, group_size) &&
         check_weight_qparams(
             ctx, op, scales, zps, bits, weight.size(0) * (cols / group_size));
}

// Checks the weight arguments (in the panel layout if `panels`, else in
// the row layout) and the input/out shapes ([..., K] -> [..., N]); fills
// `w`.
bool prepare_weights(KernelRuntimeContext& ctx,
                     const char* op,
                     bool panels,
                     const Tensor& input,
                     const Tensor& weight,
                     const Tensor& scales,
                     const std::optional<Tensor>& zero_points,
                     int64_t bits,
                     int64_t group_size,
                     const std::optional<Tensor>& bias,
                     Tensor& out,
                     PackedWeights* w) {
  if (!check_dtype(ctx, op, "input", input, ScalarType::Float) ||
      !check_dtype(ctx, op, "out", out, ScalarType::Float) ||
      !check_rank(ctx, op, "weight", weight, {2}) ||
      !check_default_dim_order(ctx, op, {&input, &weight, &scales, &out})) {
    return false;
  }
  if (!check_bits(ctx, op, bits) ||
      (panels && !check_panel_dtype(ctx, op, weight))) {
    return false;
  }
  if (input.dim() < 1 || static_cast<size_t>(input.dim()) > kMaxDims) {
    fail_arg(ctx, op, "input must have 1 to %zu dims", kMaxDims);
    return false;
  }
  const int64_t cols = input.size(input.dim() - 1);
  const int64_t rows = weight.size(0);
  const int64_t packed_cols = weight_row_bytes(panels, bits, cols);
  if (weight.size(1) != packed_cols ||
      (!panels && bits == 4 && cols % 2 != 0)) {
    fail_arg(ctx,
             op,
             "weight must be [N, %" PRId64 "] for %" PRId64
             " input features of %" PRId64 " bits%s, got [%zd, %zd]",
             packed_cols,
             cols,
             bits,
             panels ? " in panels" : "",
             static_cast<ssize_t>(weight.size(0)),
             static_cast<ssize_t>(weight.size(1)));
    return false;
  }
  const Tensor* zps = zero_points.has_value() ? &*zero_points : nullptr;
  if (!check_weight_layout(ctx, op, cols, scales, zps, bits, group_size)) {
    return false;
  }
  const int64_t count = rows * (cols / group_size);
  // The values of the tables are checked by the linear itself as it reads
  // them (a decode step's tables are ~1/32 of its weights, and a pass of
  // their own cost as much as a tenth of the step); here their sizes, with
  // the message that names what is wrong.
  if ((scales.numel() != count || (zps != nullptr && zps->numel() != count)) &&
      !check_weight_qparams(ctx, op, scales, zps, bits, count)) {
    return false;
  }
  if (bias.has_value() &&
      (!check_dtype(ctx, op, "bias", *bias, ScalarType::Float) ||
       bias->numel() != rows)) {
    if (bias->numel() != rows) {
      fail_arg(ctx, op, "bias must have %" PRId64 " elements", rows);
    }
    return false;
  }
  SizesType sizes[kMaxDims];
  for (ssize_t d = 0; d + 1 < input.dim(); ++d) {
    sizes[d] = input.size(d);
  }
  sizes[input.dim() - 1] = static_cast<SizesType>(rows);
  if (!resize_out(
          ctx, op, "out", out, ArrayRef<SizesType>(sizes, input.dim()))) {
    return false;
  }
  *w = PackedWeights{weight.const_data_ptr<uint8_t>(),
                     static_cast<int>(bits),
                     rows,
                     cols,
                     group_size,
                     scales.const_data_ptr<float>(),
                     zps != nullptr ? zps->const_data_ptr<int8_t>() : nullptr};
  return true;
}

void* temp(KernelRuntimeContext& ctx, const char* op, size_t bytes) {
  auto memory = ctx.allocate_temp(bytes > 0 ? bytes : 1, 64);
  if (!memory.ok()) {
    fail_arg(ctx, op, "needs %zu bytes of temp memory", bytes);
    return nullptr;
  }
  return *memory;
}

const float* bias_data(const std::optional<Tensor>& bias) {
  return bias.has_value() ? bias->const_data_ptr<float>() : nullptr;
}

} // namespace

Tensor& weight_only_linear_out(KernelRuntimeContext& ctx,
                               const Tensor& input,
                               const Tensor& weight,
                               const Tensor& weight_scales,
                               const std::optional<Tensor>& weight_zero_points,
                               int64_t weight_bits,
                               int64_t group_size,
                               const std::optional<Tensor>& bias,
                               Tensor& out) {
  const char* op = "weight_only_linear.out";
  PackedWeights w;
  if (!prepare_weights(ctx,
                       op,
                       false,
                       input,
                       weight,
                       weight_scales,
                       weight_zero_points,
                       weight_bits,
                       group_size,
                       bias,
                       out,
                       &w)) {
    return out;
  }
  void* scratch = temp(ctx, op, quantized::weight_only_scratch_bytes(w));
  if (scratch == nullptr) {
    return out;
  }
  if (!quantized::linear_weight_only(input.const_data_ptr<float>(),
                                     w.cols > 0 ? input.numel() / w.cols : 0,
                                     w,
                                     bias_data(bias),
                                     out.mutable_data_ptr<float>(),
                                     scratch)) {
    fail_weight_qparams(ctx, op, weight_scales, weight_zero_points, w);
  }
  return out;
}

Tensor& dynamic_int8_linear_panels_out(
    KernelRuntimeContext& ctx,
    const Tensor& input,
    const Tensor& weight,
    const Tensor& weight_scales,
    const std::optional<Tensor>& weight_zero_points,
    int64_t weight_bits,
    int64_t group_size,
    const std::optional<Tensor>& bias,
    bool per_token,
    double eps,
    int64_t quant_min,
    int64_t quant_max,
    Tensor& out) {
  const char* op = "dynamic_int8_linear_panels.out";
  PackedWeights w;
  if (!quantized::check_quant_range(
          ctx, op, quant_min, quant_max, ScalarType::Char) ||
      !prepare_weights(ctx,
                       op,
                       true,
                       input,
                       weight,
                       weight_scales,
                       weight_zero_points,
                       weight_bits,
                       group_size,
                       bias,
                       out,
                       &w)) {
    return out;
  }
  const int64_t rows_x = w.cols > 0 ? input.numel() / w.cols : 0;
  // One block of temp memory: the quantized input, its parameters per
  // row, then the linear's own scratch (64-byte aligned pieces).
  const auto aligned = [](size_t bytes) { return (bytes + 63) / 64 * 64; };
  const size_t xq_bytes = aligned(static_cast<size_t>(input.numel()));
  const size_t param_bytes = aligned(static_cast<size_t>(rows_x) * 4);
  char* memory =
      static_cast<char*>(temp(ctx,
                              op,
                              xq_bytes + 2 * param_bytes +
                                  quantized::dynamic_scratch_bytes(w, rows_x)));
  if (memory == nullptr) {
    return out;
  }
  int8_t* xq = reinterpret_cast<int8_t*>(memory);
  float* x_scales = reinterpret_cast<float*>(memory + xq_bytes);
  int32_t* x_zero_points =
      reinterpret_cast<int32_t*>(memory + xq_bytes + param_bytes);
  void* scratch = memory + xq_bytes + 2 * param_bytes;

  // Quantize the input: one set of parameters per row, or for all rows.
  const float* x = input.const_data_ptr<float>();
  const int64_t param_rows = per_token ? rows_x : (rows_x > 0 ? 1 : 0);
  const int64_t span = per_token ? w.cols : input.numel();
  for (int64_t r = 0; r < param_rows; ++r) {
    float lo = 0.f, hi = 0.f;
    if (!quantized::find_min_max(x + r * span, span, &lo, &hi)) {
      fail_arg(ctx, op, "input row %" PRId64 " contains NaN", r);
      return out;
    }
    const quantized::AsymmetricParams p = quantized::choose_asymmetric(
        lo, hi, quant_min, quant_max, static_cast<float>(eps));
    // Per tensor, torch inverts the scale as a double (a Python float);
    // torchao's per-token path inverts the float tensor.
    const float inv =
        per_token ? 1.0f / p.scale
                  : static_cast<float>(1.0 / static_cast<double>(p.scale));
    quantized::quantize_int8(x + r * span,
                             span,
                             inv,
                             static_cast<int32_t>(p.zero_point),
                             static_cast<int32_t>(quant_min),
                             static_cast<int32_t>(quant_max),
                             xq + r * span);
    for (int64_t m = per_token ? r : 0; m < (per_token ? r + 1 : rows_x); ++m) {
      x_scales[m] = p.scale;
      x_zero_points[m] = static_cast<int32_t>(p.zero_point);
    }
  }
  if (!quantized::linear_dynamic(
          quantized::QuantizedRows{xq, x_scales, x_zero_points, rows_x},
          w,
          bias_data(bias),
          out.mutable_data_ptr<float>(),
          scratch)) {
    fail_weight_qparams(ctx, op, weight_scales, weight_zero_points, w);
  }
  return out;
}

// et_quantized::dynamic_int8_linear.out is the name this linear had while
// its weights were stored in rows (before the panel layout). The panel
// kernel would misread those weights (4-bit rows have the panels' shape and
// dtype), so such programs are refused: at load, and at run time when a
// caller skips the load checks.
namespace {
constexpr const char* kRowLayoutLinear =
    "et_quantized::dynamic_int8_linear.out: this program stores the "
    "linear's weights in rows, the layout of releases before "
    "dynamic_int8_linear_panels; re-export it with this release";
} // namespace

Tensor& dynamic_int8_linear_out(KernelRuntimeContext& ctx,
                                const Tensor& /*input*/,
                                const Tensor& /*weight*/,
                                const Tensor& /*weight_scales*/,
                                const std::optional<Tensor>& /*zero_points*/,
                                int64_t /*weight_bits*/,
                                int64_t /*group_size*/,
                                const std::optional<Tensor>& /*bias*/,
                                bool /*per_token*/,
                                double /*eps*/,
                                int64_t /*quant_min*/,
                                int64_t /*quant_max*/,
                                Tensor& out) {
  ET_LOG(Error, "%s", kRowLayoutLinear);
  ctx.fail(::executorch::runtime::Error::InvalidProgram);
  return out;
}

bool dynamic_int8_linear_out_check(Span<EValue* const> /*args*/,
                                   const bool* /*fixed*/) {
  ET_LOG(Error, "%s", kRowLayoutLinear);
  return false;
}

// Load-time checks of the weight parameters a program fixes (affine.h).
bool weight_only_linear_out_check(Span<EValue* const> args, const bool* fixed) {
  return check_fixed_weight("weight_only_linear.out", false, args, fixed);
}

bool dynamic_int8_linear_panels_out_check(Span<EValue* const> args,
                                          const bool* fixed) {
  return check_fixed_weight(
      "dynamic_int8_linear_panels.out", true, args, fixed);
}

} // namespace native
} // namespace executor
} // namespace torch
