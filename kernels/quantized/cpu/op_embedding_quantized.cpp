// quantized_decomposed::embedding_{byte, 4bit, 2bit}: embedding lookup in a
// table of 8-, 4- or 2-bit integers, dequantized per row or per group of a
// row as the rows are gathered:
//   out[i, j] = (w[indices[i], j] - zero_point[row, g]) * scale[row, g]
// with g = j / group_size. Packed layouts (upstream's): 4-bit, two values
// per byte, the even one in the high nibble, stored + 8; 2-bit, four per
// byte from the low bits up, stored + 2.

#include <cinttypes>

#include <executorch/kernels/portable/util/copy.h>
#include <executorch/kernels/quantized/cpu/affine.h>

namespace torch {
namespace executor {
namespace native {

namespace {

// Value j of a packed row.
inline int32_t unpack(const uint8_t* row, int64_t j, int bits) {
  switch (bits) {
    case 4: {
      const uint8_t byte = row[j >> 1];
      return static_cast<int32_t>((j & 1) ? (byte & 0x0F) : (byte >> 4)) - 8;
    }
    case 2:
      return static_cast<int32_t>((row[j >> 2] >> ((j & 3) * 2)) & 0x3) - 2;
    default:
      return static_cast<int32_t>(reinterpret_cast<const int8_t*>(row)[j]);
  }
}

template <typename Y, typename I>
bool gather_dequantized(KernelRuntimeContext& ctx,
                        const char* op,
                        const Tensor& weight,
                        int bits,
                        bool unsigned_bytes,
                        const Tensor& scales,
                        const Tensor* zero_points,
                        const Tensor& indices,
                        int64_t width,
                        int64_t groups,
                        Tensor& out) {
  const int64_t rows = weight.size(0);
  const int64_t row_bytes = weight.size(1);
  const int64_t group_size = width / groups;
  const uint8_t* table = weight.const_data_ptr<uint8_t>();
  const I* idx = indices.const_data_ptr<I>();
  Y* dst = out.mutable_data_ptr<Y>();
  for (int64_t i = 0; i < indices.numel(); ++i) {
    const int64_t row = static_cast<int64_t>(idx[i]);
    if (row < 0 || row >= rows) {
      fail_arg(ctx,
               op,
               "index %" PRId64 " at %" PRId64 " is out of range for %" PRId64
               " rows",
               row,
               i,
               rows);
      return false;
    }
    const uint8_t* src = table + row * row_bytes;
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t p = row * groups + g;
      const float scale = quantized::read_param<float>(scales, p);
      const float zp = zero_points == nullptr
          ? 0.f
          : quantized::read_param<float>(*zero_points, p);
      for (int64_t j = g * group_size; j < (g + 1) * group_size; ++j) {
        const int32_t q = bits == 8 && unsigned_bytes
            ? static_cast<int32_t>(src[j])
            : unpack(src, j, bits);
        dst[i * width + j] = static_cast<Y>((static_cast<float>(q) - zp) * scale);
      }
    }
  }
  return true;
}

Tensor& embedding_quantized(KernelRuntimeContext& ctx,
                            const char* op,
                            int bits,
                            const Tensor& weight,
                            const Tensor& scales,
                            const std::optional<Tensor>& zero_points,
                            int64_t quant_min,
                            int64_t quant_max,
                            const Tensor& indices,
                            std::optional<ScalarType> dtype,
                            Tensor& out) {
  const ScalarType out_dtype = dtype.has_value() ? *dtype : scales.scalar_type();
  const ScalarType wtype = weight.scalar_type();
  if (wtype != ScalarType::Char && wtype != ScalarType::Byte) {
    fail_arg(ctx, op, "weight must be int8 or uint8");
    return out;
  }
  if (!check_rank(ctx, op, "weight", weight, {2}) ||
      !check_rank(ctx, op, "weight_scales", scales, {1, 2}) ||
      !check_dtype(ctx, op, "out", out, out_dtype) ||
      !check_default_dim_order(ctx, op, {&weight, &scales, &indices, &out})) {
    return out;
  }
  const int64_t per_byte = 8 / bits;
  const int64_t width = weight.size(1) * per_byte;
  const int64_t groups = scales.dim() == 2 ? scales.size(1) : 1;
  if (scales.size(0) != weight.size(0) || groups < 1 || width % groups != 0) {
    fail_arg(ctx,
             op,
             "weight_scales must be [rows] or [rows, groups] with groups "
             "dividing the row width %" PRId64 " (weight has %zd rows)",
             width,
             static_cast<ssize_t>(weight.size(0)));
    return out;
  }
  const int64_t count = weight.size(0) * groups;
  const Tensor* zps = zero_points.has_value() ? &*zero_points : nullptr;
  if (!quantized::check_qparams(ctx,
                                op,
                                quantized::QParams::table(scales, zps, 1, count),
                                quant_min,
                                quant_max)) {
    return out;
  }
  Shape shape = tensor_view(indices).shape;
  if (shape.ndim + 1 > kMaxDims) {
    fail_arg(ctx, op, "indices have too many dims");
    return out;
  }
  shape.push_back(width);
  if (!resize_out(ctx, op, "out", out, shape.ref())) {
    return out;
  }
  const bool unsigned_bytes = wtype == ScalarType::Byte;
  ET_SWITCH_FLOATHBF16_TYPES(out_dtype, ctx, op, Y, [&] {
    ET_SWITCH_INT_TYPES(indices.scalar_type(), ctx, op, I, [&] {
      gather_dequantized<Y, I>(ctx,
                               op,
                               weight,
                               bits,
                               unsigned_bytes,
                               scales,
                               zps,
                               indices,
                               width,
                               groups,
                               out);
    });
  });
  return out;
}

} // namespace

#define ET_QUANTIZED_EMBEDDING_KERNELS(NAME, BITS)                          \
  Tensor& quantized_embedding_##NAME##_out(                                 \
      KernelRuntimeContext& ctx,                                            \
      const Tensor& weight,                                                 \
      const Tensor& weight_scales,                                          \
      const std::optional<Tensor>& weight_zero_points,                      \
      int64_t weight_quant_min,                                             \
      int64_t weight_quant_max,                                             \
      const Tensor& indices,                                                \
      Tensor& out) {                                                        \
    return embedding_quantized(ctx,                                         \
                               "embedding_" #NAME ".out",                   \
                               BITS,                                        \
                               weight,                                      \
                               weight_scales,                               \
                               weight_zero_points,                          \
                               weight_quant_min,                            \
                               weight_quant_max,                            \
                               indices,                                     \
                               std::nullopt,                                \
                               out);                                        \
  }                                                                         \
  Tensor& quantized_embedding_##NAME##_dtype_out(                           \
      KernelRuntimeContext& ctx,                                            \
      const Tensor& weight,                                                 \
      const Tensor& weight_scales,                                          \
      const std::optional<Tensor>& weight_zero_points,                      \
      int64_t weight_quant_min,                                             \
      int64_t weight_quant_max,                                             \
      const Tensor& indices,                                                \
      std::optional<ScalarType> dtype,                                      \
      Tensor& out) {                                                        \
    return embedding_quantized(ctx,                                         \
                               "embedding_" #NAME ".dtype_out",             \
                               BITS,                                        \
                               weight,                                      \
                               weight_scales,                               \
                               weight_zero_points,                          \
                               weight_quant_min,                            \
                               weight_quant_max,                            \
                               indices,                                     \
                               dtype,                                       \
                               out);                                        \
  }

ET_QUANTIZED_EMBEDDING_KERNELS(byte, 8)
ET_QUANTIZED_EMBEDDING_KERNELS(4bit, 4)
ET_QUANTIZED_EMBEDDING_KERNELS(2bit, 2)

#undef ET_QUANTIZED_EMBEDDING_KERNELS

} // namespace native
} // namespace executor
} // namespace torch
