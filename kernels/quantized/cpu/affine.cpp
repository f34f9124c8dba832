#include <executorch/kernels/quantized/cpu/affine.h>

#include <cinttypes>
#include <initializer_list>

namespace torch {
namespace executor {
namespace native {
namespace quantized {

using ::executorch::runtime::EValue;
using ::executorch::runtime::Span;

bool dtype_range(ScalarType dtype, int64_t* lo, int64_t* hi) {
  switch (dtype) {
    case ScalarType::Byte:
      *lo = 0, *hi = 255;
      return true;
    case ScalarType::Char:
      *lo = -128, *hi = 127;
      return true;
    case ScalarType::Short:
      *lo = -32768, *hi = 32767;
      return true;
    case ScalarType::Int:
      *lo = std::numeric_limits<int32_t>::min();
      *hi = std::numeric_limits<int32_t>::max();
      return true;
    default:
      return false;
  }
}

bool check_quant_range(KernelRuntimeContext& ctx,
                       const char* op,
                       int64_t quant_min,
                       int64_t quant_max,
                       ScalarType dtype) {
  int64_t lo = 0, hi = 0;
  if (!dtype_range(dtype, &lo, &hi)) {
    fail_arg(ctx,
             op,
             "quantized dtype %s is not one of Byte, Char, Short, Int",
             ::executorch::runtime::toString(dtype));
    return false;
  }
  if (quant_min > quant_max || quant_min < lo || quant_max > hi) {
    fail_arg(ctx,
             op,
             "quant_min %" PRId64 " and quant_max %" PRId64
             " must be ordered and within %s's range [%" PRId64 ", %" PRId64
             "]",
             quant_min,
             quant_max,
             ::executorch::runtime::toString(dtype),
             lo,
             hi);
    return false;
  }
  return true;
}

bool per_tensor_params(KernelRuntimeContext& ctx,
                       const char* op,
                       const Tensor& scale,
                       const Tensor& zero_point,
                       QParams* params) {
  if (scale.numel() != 1 || zero_point.numel() != 1) {
    fail_arg(ctx,
             op,
             "scale and zero_point must have one element each, got %zd and "
             "%zd",
             static_cast<ssize_t>(scale.numel()),
             static_cast<ssize_t>(zero_point.numel()));
    return false;
  }
  *params = QParams::per_tensor(read_param<double>(scale, 0),
                                read_param<int64_t>(zero_point, 0));
  return true;
}

bool check_group_size(KernelRuntimeContext& ctx,
                      const char* op,
                      const Tensor& input,
                      const Tensor& scales,
                      int64_t* group_size) {
  if (input.dim() != 2) {
    fail_arg(ctx, op, "input must be 2-D, got %zd dims", input.dim());
    return false;
  }
  const int64_t width = input.size(1);
  if (*group_size > width && scales.dim() > 0 &&
      scales.size(scales.dim() - 1) == 1) {
    *group_size = width;
  }
  if (*group_size <= 1 || width % *group_size != 0) {
    fail_arg(ctx,
             op,
             "group_size %" PRId64
             " must be > 1 and divide the input's last dim %" PRId64,
             *group_size,
             width);
    return false;
  }
  return true;
}

bool per_channel_layout(KernelRuntimeContext& ctx,
                        const char* op,
                        const Tensor& input,
                        int64_t axis,
                        const Tensor& scales,
                        const Tensor* zero_points,
                        QParams* params) {
  int64_t dim = 0;
  if (input.dim() == 0) {
    fail_arg(ctx, op, "input must have at least one dim");
    return false;
  }
  if (!normalize_dim(ctx, op, axis, input.dim(), &dim)) {
    return false;
  }
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < input.dim(); ++d) {
    inner *= input.size(d);
  }
  *params = QParams::table(scales, zero_points, inner, input.size(dim));
  return true;
}

QParams per_token_layout(const Tensor& input,
                         const Tensor& scales,
                         const Tensor* zero_points) {
  const int64_t width = input.dim() > 0 ? input.size(input.dim() - 1) : 1;
  const int64_t tokens = width > 0 ? input.numel() / width : 0;
  return QParams::table(scales, zero_points, width, tokens);
}

bool per_group_layout(KernelRuntimeContext& ctx,
                      const char* op,
                      const Tensor& input,
                      const Tensor& scales,
                      const Tensor* zero_points,
                      int64_t group_size,
                      QParams* params) {
  if (!check_group_size(ctx, op, input, scales, &group_size)) {
    return false;
  }
  *params = QParams::table(
      scales, zero_points, group_size, input.numel() / group_size);
  return true;
}

namespace {

bool is_float_dtype(ScalarType t) {
  return t == ScalarType::Float || t == ScalarType::Double ||
      t == ScalarType::Half || t == ScalarType::BFloat16;
}

bool is_int_dtype(ScalarType t) {
  return t == ScalarType::Byte || t == ScalarType::Char ||
      t == ScalarType::Short || t == ScalarType::Int || t == ScalarType::Long;
}

bool check_scale(KernelRuntimeContext& ctx,
                 const char* op,
                 double scale,
                 int64_t index) {
  if (std::isfinite(scale) && scale > 0) {
    return true;
  }
  fail_arg(ctx,
           op,
           "scale %" PRId64 " is %g; scales must be finite and > 0",
           index,
           scale);
  return false;
}

bool check_zero_point(KernelRuntimeContext& ctx,
                      const char* op,
                      int64_t zero_point,
                      int64_t index,
                      int64_t quant_min,
                      int64_t quant_max) {
  if (zero_point >= quant_min && zero_point <= quant_max) {
    return true;
  }
  fail_arg(ctx,
           op,
           "zero point %" PRId64 " is %" PRId64
           ", outside [quant_min, quant_max] = [%" PRId64 ", %" PRId64 "]",
           index,
           zero_point,
           quant_min,
           quant_max);
  return false;
}

} // namespace

bool check_qparams(KernelRuntimeContext& ctx,
                   const char* op,
                   const QParams& params,
                   int64_t quant_min,
                   int64_t quant_max) {
  if (params.scales == nullptr) {
    return check_scale(ctx, op, params.scale, 0) &&
        check_zero_point(
               ctx, op, params.zero_point, 0, quant_min, quant_max);
  }
  const Tensor& scales = *params.scales;
  if (!is_float_dtype(scales.scalar_type())) {
    fail_arg(ctx,
             op,
             "scales must be a floating tensor, got %s",
             ::executorch::runtime::toString(scales.scalar_type()));
    return false;
  }
  if (scales.numel() != params.count) {
    fail_arg(ctx,
             op,
             "scales has %zd entries, expected %" PRId64,
             static_cast<ssize_t>(scales.numel()),
             params.count);
    return false;
  }
  for (int64_t i = 0; i < params.count; ++i) {
    if (!check_scale(ctx, op, read_param<double>(scales, i), i)) {
      return false;
    }
  }
  if (params.zero_points == nullptr) {
    return true;
  }
  const Tensor& zero_points = *params.zero_points;
  const ScalarType zp_type = zero_points.scalar_type();
  if (!is_int_dtype(zp_type) && !is_float_dtype(zp_type)) {
    fail_arg(ctx,
             op,
             "zero_points has unsupported dtype %s",
             ::executorch::runtime::toString(zp_type));
    return false;
  }
  if (zero_points.numel() != params.count) {
    fail_arg(ctx,
             op,
             "zero_points has %zd entries, expected %" PRId64,
             static_cast<ssize_t>(zero_points.numel()),
             params.count);
    return false;
  }
  // Floating zero points (embedding tables) are offsets in value space:
  // any finite value is valid.
  for (int64_t i = 0; i < params.count; ++i) {
    if (is_float_dtype(zp_type)) {
      const double zp = read_param<double>(zero_points, i);
      if (!std::isfinite(zp)) {
        fail_arg(ctx, op, "zero point %" PRId64 " is %g", i, zp);
        return false;
      }
    } else if (!check_zero_point(ctx,
                                 op,
                                 read_param<int64_t>(zero_points, i),
                                 i,
                                 quant_min,
                                 quant_max)) {
      return false;
    }
  }
  return true;
}

namespace {

bool all_fixed(const bool* fixed, std::initializer_list<size_t> indices) {
  for (size_t i : indices) {
    if (!fixed[i]) {
      return false;
    }
  }
  return true;
}

} // namespace

bool check_fixed_per_tensor(const char* op,
                            bool tensors,
                            Span<EValue* const> args,
                            const bool* fixed) {
  if (!all_fixed(fixed, {1, 2, 3, 4, 5})) {
    return true;
  }
  KernelRuntimeContext ctx;
  const int64_t quant_min = args[3]->toInt();
  const int64_t quant_max = args[4]->toInt();
  QParams params;
  if (tensors) {
    if (!per_tensor_params(
            ctx, op, args[1]->toTensor(), args[2]->toTensor(), &params)) {
      return false;
    }
  } else {
    params = QParams::per_tensor(args[1]->toDouble(), args[2]->toInt());
  }
  return check_quant_range(ctx,
                           op,
                           quant_min,
                           quant_max,
                           static_cast<ScalarType>(args[5]->toInt())) &&
      check_qparams(ctx, op, params, quant_min, quant_max);
}

bool check_fixed_per_channel(const char* op,
                             Span<EValue* const> args,
                             const bool* fixed) {
  if (!all_fixed(fixed, {1, 2, 3, 4, 5, 6})) {
    return true;
  }
  KernelRuntimeContext ctx;
  const Tensor& scales = args[1]->toTensor();
  const Tensor* zero_points =
      args[2]->isNone() ? nullptr : &args[2]->toTensor();
  QParams params = QParams::table(scales, zero_points, 1, scales.numel());
  if (fixed[0] &&
      !per_channel_layout(ctx,
                          op,
                          args[0]->toTensor(),
                          args[3]->toInt(),
                          scales,
                          zero_points,
                          &params)) {
    return false;
  }
  const int64_t quant_min = args[4]->toInt();
  const int64_t quant_max = args[5]->toInt();
  return check_quant_range(ctx,
                           op,
                           quant_min,
                           quant_max,
                           static_cast<ScalarType>(args[6]->toInt())) &&
      check_qparams(ctx, op, params, quant_min, quant_max);
}

} // namespace quantized
} // namespace native
} // namespace executor
} // namespace torch
