#pragma once

// Affine quantization, the arithmetic every quantized_decomposed kernel
// shares:
//
//   quantize:   q = clamp(round(x * (1 / scale)) + zero_point, qmin, qmax)
//   dequantize: x = (q - zero_point) * scale
//
// with round half to even, as torch's reference implementations
// (torch/ao/quantization/fx/_decomposed.py), whose results these kernels
// reproduce bit for bit: each computes in the type torch's reference
// computes in (float, or double when the scales are double) and in the
// same order.
//
// Which (scale, zero point) an element uses depends on its position: the
// parameters are a table of `count` entries, and element i (in memory
// order) uses entry (i / block) % count. Per tensor: count 1. Per channel
// along `axis`: block = product of the sizes after `axis`, count = sizes
// [axis]. Per token: block = the last size. Per group of the last dim:
// block = the group size.

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include <executorch/kernels/portable/util/checks.h>

namespace torch {
namespace executor {
namespace native {
namespace quantized {

using ::executorch::aten::ScalarType;
using ::executorch::aten::Tensor;
using ::executorch::runtime::KernelRuntimeContext;

// The integer dtypes a quantized tensor may have.
#define ET_QUANTIZED_SWITCH_INT_TYPES(TYPE, CONTEXT, NAME, A, ...) \
  ET_INTERNAL_SWITCH(TYPE,                                         \
                     CONTEXT,                                      \
                     NAME,                                         \
                     ET_INTERNAL_SWITCH_CASE(Byte, A, __VA_ARGS__) \
                         ET_INTERNAL_SWITCH_CASE(Char, A, __VA_ARGS__) \
                             ET_INTERNAL_SWITCH_CASE(Short, A, __VA_ARGS__) \
                                 ET_INTERNAL_SWITCH_CASE(Int, A, __VA_ARGS__))

// Quantization parameters as tensors (scales of Float or Double, zero
// points of any integer or floating dtype, or none), or as one scalar pair.
struct QParams {
  const Tensor* scales = nullptr;
  const Tensor* zero_points = nullptr; // null: zero
  double scale = 1.0;
  int64_t zero_point = 0;
  int64_t block = 1;
  int64_t count = 1;

  static QParams per_tensor(double scale, int64_t zero_point) {
    QParams p;
    p.scale = scale;
    p.zero_point = zero_point;
    return p;
  }
  static QParams table(const Tensor& scales,
                       const Tensor* zero_points,
                       int64_t block,
                       int64_t count) {
    QParams p;
    p.scales = &scales;
    p.zero_points = zero_points;
    p.block = block;
    p.count = count;
    return p;
  }
};

// The parameters of the `.tensor` overloads: one-element scale and
// zero-point tensors, read as torch reads them (`.item()`).
bool per_tensor_params(KernelRuntimeContext& ctx,
                       const char* op,
                       const Tensor& scale,
                       const Tensor& zero_point,
                       QParams* params);

// The range [qmin, qmax] of values `dtype` holds.
bool dtype_range(ScalarType dtype, int64_t* lo, int64_t* hi);

// Checks that quant_min <= quant_max lie within `dtype`'s range.
bool check_quant_range(KernelRuntimeContext& ctx,
                       const char* op,
                       int64_t quant_min,
                       int64_t quant_max,
                       ScalarType dtype);

// Checks every scale (finite and > 0) and integer zero point (within
// [quant_min, quant_max]) of `params`, and that the tables have `count`
// entries of a supported dtype; names the operator, the argument and the
// first bad entry.
bool check_qparams(KernelRuntimeContext& ctx,
                   const char* op,
                   const QParams& params,
                   int64_t quant_min,
                   int64_t quant_max);

// The parameter layouts over `input` (tables of `scales` and optional
// `zero_points`): per slice along `axis`, per row of the last dim (token),
// per group of the last dim (after check_group_size). False, with the
// context failed, for an axis out of range.
bool per_channel_layout(KernelRuntimeContext& ctx,
                        const char* op,
                        const Tensor& input,
                        int64_t axis,
                        const Tensor& scales,
                        const Tensor* zero_points,
                        QParams* params);
QParams per_token_layout(const Tensor& input,
                         const Tensor& scales,
                         const Tensor* zero_points);
bool per_group_layout(KernelRuntimeContext& ctx,
                      const char* op,
                      const Tensor& input,
                      const Tensor& scales,
                      const Tensor* zero_points,
                      int64_t group_size,
                      QParams* params);

// Checks a per-group layout of a 2-D `input` ([rows, width], groups of
// `*group_size` along width, `scales` [rows, width / group_size]): the group
// size must be > 1 and divide the width. Like torch, a group larger than
// the width with one scale per row means the whole row (*group_size is
// then set to the width).
bool check_group_size(KernelRuntimeContext& ctx,
                      const char* op,
                      const Tensor& input,
                      const Tensor& scales,
                      int64_t* group_size);

// Load-time checks (quantized.yaml's load_check; FixedArgsCheck in
// runtime/kernel/operator_schema.h) of the operators whose arguments start
// (input, scale(s), zero point(s), ...): the parameters a program fixes
// (constants) get the checks and messages their kernels give at every call,
// so a corrupted program fails to load, naming the operator and the
// parameter. Parameters computed at run time are left to the kernels.
//
// Per tensor: (input, float scale, int zero_point, quant_min, quant_max,
// dtype, ...), or with one-element tensors for scale and zero point
// (`tensors`).
bool check_fixed_per_tensor(const char* op,
                            bool tensors,
                            ::executorch::runtime::Span<
                                ::executorch::runtime::EValue* const> args,
                            const bool* fixed);
// Per channel: (input, scales, zero_points (optional), axis, quant_min,
// quant_max, dtype, ...); the scale count is checked against the input's
// size along axis when the input is fixed too (a constant weight).
bool check_fixed_per_channel(const char* op,
                             ::executorch::runtime::Span<
                                 ::executorch::runtime::EValue* const> args,
                             const bool* fixed);

// Entry `index` of a scale or zero-point table, converted to C.
template <typename C>
C read_param(const Tensor& table, int64_t index) {
  switch (table.scalar_type()) {
    case ScalarType::Float:
      return static_cast<C>(table.const_data_ptr<float>()[index]);
    case ScalarType::Double:
      return static_cast<C>(table.const_data_ptr<double>()[index]);
    case ScalarType::Half:
      return static_cast<C>(static_cast<float>(
          table.const_data_ptr<::executorch::aten::Half>()[index]));
    case ScalarType::BFloat16:
      return static_cast<C>(static_cast<float>(
          table.const_data_ptr<::executorch::aten::BFloat16>()[index]));
    case ScalarType::Char:
      return static_cast<C>(table.const_data_ptr<int8_t>()[index]);
    case ScalarType::Byte:
      return static_cast<C>(table.const_data_ptr<uint8_t>()[index]);
    case ScalarType::Short:
      return static_cast<C>(table.const_data_ptr<int16_t>()[index]);
    case ScalarType::Int:
      return static_cast<C>(table.const_data_ptr<int32_t>()[index]);
    case ScalarType::Long:
      return static_cast<C>(table.const_data_ptr<int64_t>()[index]);
    default:
      return C(0);
  }
}

// Rounds half to even in the current (default) rounding mode, like
// torch.round, then clamps into [lo, hi]; NaN becomes lo.
template <typename C>
inline C round_clamp(C v, C lo, C hi) {
  v = std::nearbyint(v);
  return v >= lo ? (v <= hi ? v : hi) : lo;
}

// Minimum and maximum of n values; false if one is NaN.
template <typename X>
bool min_max(const X* in, int64_t n, float* lo, float* hi) {
  float mn = std::numeric_limits<float>::infinity();
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(in[i]);
    if (std::isnan(v)) {
      return false;
    }
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
  }
  *lo = mn;
  *hi = mx;
  return true;
}

// Asymmetric parameters for values in [lo, hi] (widened to include 0):
// scale = max((hi - lo) / (qmax - qmin), eps) and the zero point that maps
// lo to qmin, rounded and clamped; float arithmetic in the order of torch's
// choose_qparams.tensor and torchao's choose_qparams_affine (ASYMMETRIC).
struct AsymmetricParams {
  float scale;
  int64_t zero_point;
};
inline AsymmetricParams choose_asymmetric(float lo,
                                          float hi,
                                          int64_t quant_min,
                                          int64_t quant_max,
                                          float eps) {
  const float min_neg = lo < 0.f ? lo : 0.f;
  const float max_pos = hi > 0.f ? hi : 0.f;
  float scale = (max_pos - min_neg) / static_cast<float>(quant_max - quant_min);
  scale = scale > eps ? scale : eps;
  int64_t zp =
      quant_min - static_cast<int64_t>(std::nearbyint(min_neg / scale));
  zp = zp < quant_min ? quant_min : (zp > quant_max ? quant_max : zp);
  return {scale, zp};
}

// Calls fn(begin, end, scale, zero_point) for each run of elements that
// share parameters, over `numel` elements. Scale and zero point come as C
// (the compute type), the scale's reciprocal is not taken here.
template <typename C, typename Fn>
void for_each_param_run(const QParams& params, int64_t numel, Fn&& fn) {
  if (params.scales == nullptr) {
    fn(int64_t(0),
       numel,
       static_cast<C>(params.scale),
       static_cast<C>(params.zero_point));
    return;
  }
  const int64_t block = params.block > 0 ? params.block : 1;
  for (int64_t begin = 0, run = 0; begin < numel; begin += block, ++run) {
    const int64_t index = run % params.count;
    const C scale = read_param<C>(*params.scales, index);
    const C zero_point = params.zero_points == nullptr
        ? C(0)
        : read_param<C>(*params.zero_points, index);
    const int64_t end = begin + block < numel ? begin + block : numel;
    fn(begin, end, scale, zero_point);
  }
}

} // namespace quantized
} // namespace native
} // namespace executor
} // namespace torch
